// Upstream's PullManager (pkg/kubelet/images/pullmanager, KEP-2535): records the credentials
// each image was pulled with, and tells the image puller when a pod must pull a present image
// again with its own credentials. Decisions are decide.ts's; this holds the intents in flight
// and reads and writes the records (store.ts).
import type { Logger } from '../../log/log.ts';
import { mergePulled, mustPull, type PodCredentials } from './decide.ts';
import type { Allowlist, VerificationPolicy } from './policy.ts';
import type { ImagePullCredentials } from './records.ts';
import type { PullRecords, RecordsObserver } from './store.ts';
import { trimImageTagDigest } from './policy.ts';

/** An image the runtime lists: its ID and the names it goes by. */
export interface ListedImage {
  id: string;
  repoTags: string[];
  repoDigests: string[];
}

/** upstream's checkResult* label values of kubelet_imagemanager_image_must_attempt_pull_total... */
export interface PulledImagesObserver extends RecordsObserver {
  checked?(result: 'credentialPolicyAllowed' | 'credentialRecordFound' | 'mustAuthenticate' | 'error'): void;
}

export class PulledImages {
  readonly #records: PullRecords;
  readonly #policy: VerificationPolicy;
  readonly #allowlist: Allowlist;
  readonly #log: Logger | undefined;
  readonly #observe: PulledImagesObserver;
  /** Pulls in flight per image: the intent file goes with the last of them. */
  readonly #intents = new Map<string, number>();
  readonly #now: () => number;

  constructor(o: {
    records: PullRecords;
    policy: VerificationPolicy;
    allowlist: Allowlist;
    log?: Logger;
    observe?: PulledImagesObserver;
    now?: () => number;
  }) {
    this.#records = o.records;
    this.#policy = o.policy;
    this.#allowlist = o.allowlist;
    this.#log = o.log;
    this.#observe = o.observe ?? {};
    this.#now = o.now ?? Date.now;
  }

  /**
   * Upstream's initialize: intents left by an earlier kubelet whose image the runtime now has
   * become records without credentials (so every pod must verify), and the intents go.
   */
  async initialize(listImages: () => Promise<ListedImage[]>): Promise<void> {
    const intents = this.#records.listIntents();
    if (!intents.length) return;
    let images: ListedImage[] = [];
    try {
      images = await listImages();
    } catch (e) {
      this.#log?.error('Failed to list images', { err: e });
    }
    const pending = new Set(intents.map((i) => i.image));
    for (const img of images) {
      for (const name of new Set([...img.repoDigests, ...img.repoTags])) {
        if (!pending.has(name)) continue;
        try {
          this.#writePulled(name, img.id, undefined);
        } catch (e) {
          this.#log?.error('Failed to write an image pull record', { imageRef: img.id, err: e });
          continue;
        }
        try {
          this.#records.deleteIntent(name);
        } catch (e) {
          this.#log?.v(2, 'Failed to remove image pull intent file', { imageName: name, err: e });
        }
      }
    }
  }

  /**
   * Upstream's MustAttemptImagePull for a present image (imageRef its ID): whether the pod
   * must pull it with its own credentials. podCredentials is asked only when the record
   * needs it; its error is the caller's (the pull fails).
   */
  async mustPull(image: string, imageRef: string, podCredentials: () => Promise<PodCredentials>): Promise<boolean> {
    if (!imageRef) return true;
    let record: ReturnType<PullRecords['getPulled']>;
    let intent: boolean;
    try {
      record = this.#records.getPulled(imageRef);
      intent = record !== undefined || (this.#intents.get(image) ?? 0) > 0 || this.#records.intentExists(image);
    } catch (e) {
      // Fails safe: without its records the kubelet verifies.
      this.#observe.checked?.('error');
      this.#log?.error('Unable to access cache records about image pulls', { err: e });
      return true;
    }
    const base = { image, policy: this.#policy, allowlist: this.#allowlist, intent, record };
    let verdict = mustPull(base);
    if (verdict.needPod) {
      let pod: PodCredentials;
      try {
        pod = await podCredentials();
      } catch (e) {
        this.#observe.checked?.('error');
        throw e;
      }
      verdict = mustPull({ ...base, pod });
    }
    if (verdict.needPod) throw new Error('unreachable: pod credentials were given');
    if (verdict.remember) {
      try {
        this.#writePulled(image, imageRef, { kubernetesSecrets: [verdict.remember] });
      } catch (e) {
        this.#log?.error('failed to write an image pulled record', { image, imageRef, err: e });
      }
    }
    this.#observe.checked?.(verdict.why);
    return verdict.pull;
  }

  /** Before a pull (upstream's RecordPullIntent); throws when the intent cannot be written. */
  recordIntent(image: string): void {
    try {
      this.#records.writeIntent(image);
    } catch (e) {
      throw new Error(`failed to record image pull intent: ${(e as Error).message}`);
    }
    this.#intents.set(image, (this.#intents.get(image) ?? 0) + 1);
  }

  /**
   * After a successful pull (RecordImagePulled): the credentials it used merged into the
   * image's record. On a write error the intent stays, so a restarted kubelet still counts
   * the image as the kubelet's.
   */
  recordPulled(image: string, imageRef: string, credentials: ImagePullCredentials): void {
    try {
      this.#writePulled(image, imageRef, credentials);
    } catch (e) {
      this.#log?.error('failed to write image pulled record', { imageRef, err: e });
      return;
    }
    this.#dropIntent(image);
  }

  /** After a failed pull (RecordImagePullFailed). */
  recordFailed(image: string): void {
    this.#dropIntent(image);
  }

  /**
   * Upstream's PruneUnknownRecords, image GC's post hook: records of images no longer on the
   * node go, unless written since the collection began.
   */
  prune(remainingImageRefs: readonly string[], gcStartedMs: number): void {
    const keep = new Set(remainingImageRefs);
    for (const r of this.#records.listPulled()) {
      if (r.lastUpdatedTime >= gcStartedMs || keep.has(r.imageRef)) continue;
      try {
        this.#records.deletePulled(r.imageRef);
      } catch (e) {
        this.#log?.error('failed to remove an ImagePulledRecord', { imageRef: r.imageRef, err: e });
      }
    }
  }

  #writePulled(image: string, imageRef: string, credentials: ImagePullCredentials | undefined) {
    let name: string;
    try {
      name = trimImageTagDigest(image);
    } catch (e) {
      throw new Error(`invalid image name "${image}": ${(e as Error).message}`);
    }
    let current: ReturnType<PullRecords['getPulled']>;
    try {
      current = this.#records.getPulled(imageRef);
    } catch (e) {
      this.#log?.info('failed to retrieve an ImagePulledRecord', { image, err: (e as Error).message });
      current = undefined;
    }
    const next = mergePulled(current, imageRef, name, credentials, this.#now());
    if (next) this.#records.writePulled(next);
  }

  #dropIntent(image: string) {
    const n = this.#intents.get(image) ?? 0;
    if (n <= 1) {
      try {
        this.#records.deleteIntent(image);
      } catch (e) {
        this.#log?.error('failed to remove image pull intent', { image, err: e });
        return;
      }
      this.#intents.delete(image);
      return;
    }
    this.#intents.set(image, n - 1);
  }
}
