// Makes a container's image present, per its imagePullPolicy, with back-off on
// failure (ErrImagePull, then ImagePullBackOff while waiting), as upstream's image manager.
// Pulls use the credentials of the pod's imagePullSecrets that match the image. Image
// volumes (image-volumes.ts) are pulled the same way.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { ImageClient } from '../cri/image-client.ts';
import type { Logger } from '../log/log.ts';
import type { Waiting } from '../container/types.ts';
import type { ImageUser } from '../runtime/security-context.ts';
import type { Image__Output } from '../cri/generated/runtime/v1/Image.ts';
import { lookup, makeKeyring, repositoryOf, trackingOf, type Keyring, type RegistryAuth } from './keyring.ts';
import type { PulledImages } from './pulled/manager.ts';
import type { PodCredentials } from './pulled/decide.ts';
import type { ImagePullCredentials } from './pulled/records.ts';
import type { CredentialProviders } from './credential-provider/plugins.ts';
import { fetchPullSecrets, type SecretGetter } from './pull-secrets.ts';
import { invalidReference } from './reference.ts';
import { goDuration } from '../apiserver/duration.ts';
import { PullSlots } from './pull-slots.ts';
import type { TokenBucket } from '../backoff/token-bucket.ts';
import { CriError, goErrorText, statusMessage } from '../cri/error.ts';
import { status } from '@grpc/grpc-js';

/** user: the image's configured user, for runAsNonRoot and the default runAsUser. */
export type PullResult = { imageRef: string; user?: ImageUser; waiting?: undefined } | { imageRef?: undefined; waiting: Waiting };

/** upstream's getImageUser: the uid when numeric, else the name; neither means root. */
export function imageUser(image: Pick<Image__Output, 'uid' | 'username'> | null | undefined): ImageUser {
  if (image?.uid) return { uid: Number(image.uid.value) };
  if (image?.username) return { username: image.username };
  return { uid: 0 };
}

/** A pull in flight is logged this often (upstream's kubelet is silent; its runtime logs progress). */
export const PROGRESS_LOG_MS = 30_000;

/** onPod: the event concerns the pod as a whole, not the container (no fieldPath). */
export type ImageEvent = { type: 'Normal' | 'Warning'; reason: string; message: string; onPod?: boolean };
export type ImageService = Pick<ImageClient, 'imageStatus' | 'pullImage'>;

/** What is pulled: a container's image, or an image volume's reference and pullPolicy. */
export type ImageToPull = Pick<Container, 'image' | 'imagePullPolicy'>;

/** Upstream's default when the pod does not say: Always for :latest or no tag, else IfNotPresent. */
export function pullPolicy(c: ImageToPull): string {
  if (c.imagePullPolicy) return c.imagePullPolicy;
  const image = c.image ?? '';
  const tag = image.includes('@') ? undefined : /:([^/:]+)$/.exec(image)?.[1];
  return !image.includes('@') && (tag === undefined || tag === 'latest') ? 'Always' : 'IfNotPresent';
}

/** Pulls as upstream's image manager reports them: per pod for the start-up SLI, and their duration. */
export interface PullObserver {
  started?(podUID: string): void;
  /** sizeBytes: 0 when unknown; seconds is undefined for a failed pull. */
  finished?(podUID: string, seconds?: number, sizeBytes?: number): void;
  /**
   * An ensure-image request ended: its pull policy, whether the image was found on the node and
   * whether it had to be pulled (undefined: not known, upstream's "unknown").
   */
  ensured?(policy: string, presentLocally: boolean | undefined, pullRequired: boolean | undefined): void;
}

/** What an ensure-image request learnt, for kubelet_image_manager_ensure_image_requests_total. */
interface EnsureSeen {
  presentLocally?: boolean;
  pullRequired?: boolean;
}

export class ImagePuller {
  readonly #images: ImageService;
  /** pod UID/image -> its back-off, and the failure that began it (what the back-off's waiting state says). */
  readonly #backoff = new Map<string, { until: number; delayMs: number; lastError: string }>();
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #secrets: SecretGetter | undefined;
  readonly #log: Logger | undefined;
  readonly #observe: PullObserver;
  readonly #slots: PullSlots;
  readonly #limit: Pick<TokenBucket, 'tryAccept'> | undefined;
  readonly #nodeKeyring: { get(): Keyring } | undefined;
  readonly #providers: Pick<CredentialProviders, 'lookup'> | undefined;
  readonly #tokens: { forget(podUID: string): void } | undefined;
  readonly #progressMs: number;
  readonly #pulled: Pick<PulledImages, 'mustPull' | 'recordIntent' | 'recordPulled' | 'recordFailed'> | undefined;

  /** secrets reads a pod's imagePullSecrets; without it every pull is anonymous. */
  constructor(
    images: ImageService,
    opts: {
      initialBackoffMs?: number;
      maxBackoffMs?: number;
      secrets?: SecretGetter;
      log?: Logger;
      observe?: PullObserver;
      /** How many pulls run at once (serializeImagePulls, maxParallelImagePulls); unset: no limit. */
      slots?: PullSlots;
      /** How many pulls begin per second (registryPullQPS, registryBurst); unset: no limit. */
      limit?: Pick<TokenBucket, 'tryAccept'>;
      /** Node-wide credentials (node-credentials.ts), tried after the pod's secrets. */
      nodeKeyring?: { get(): Keyring };
      /** The credential provider plugins (credential-provider/), tried last. */
      providers?: Pick<CredentialProviders, 'lookup'>;
      /** The tokens token mode asked for, dropped with their pod. */
      tokens?: { forget(podUID: string): void };
      /** KubeletEnsureSecretPulledImages's records (src/images/pulled); unset: any pod may use a present image. */
      pulled?: Pick<PulledImages, 'mustPull' | 'recordIntent' | 'recordPulled' | 'recordFailed'>;
      /** How often a pull in flight is logged as still going; default PROGRESS_LOG_MS. */
      progressLogMs?: number;
    } = {},
  ) {
    this.#images = images;
    this.#initialMs = opts.initialBackoffMs ?? 10_000;
    this.#maxMs = opts.maxBackoffMs ?? 300_000;
    this.#secrets = opts.secrets;
    this.#log = opts.log;
    this.#observe = opts.observe ?? {};
    this.#slots = opts.slots ?? new PullSlots(Number.POSITIVE_INFINITY);
    this.#limit = opts.limit;
    this.#nodeKeyring = opts.nodeKeyring;
    this.#providers = opts.providers;
    this.#tokens = opts.tokens;
    this.#pulled = opts.pulled;
    this.#progressMs = opts.progressLogMs ?? PROGRESS_LOG_MS;
  }

  /**
   * key scopes the back-off (pod UID + image), like upstream's per-pod image back-off;
   * pod supplies the namespace and imagePullSecrets; signal cancels a pull in flight.
   */
  async ensure(c: ImageToPull, key: string, emit: (e: ImageEvent) => void, pod?: Pod, signal?: AbortSignal): Promise<PullResult> {
    // Upstream's EnsureImageExists records every request, whichever way it ends (its deferred recordEnsureImageRequest).
    const seen: EnsureSeen = {};
    try {
      return await this.#ensure(c, key, emit, pod, signal, seen);
    } finally {
      this.#observe.ensured?.(pullPolicy(c), seen.presentLocally, seen.pullRequired);
    }
  }

  async #ensure(
    c: ImageToPull,
    key: string,
    emit: (e: ImageEvent) => void,
    pod: Pod | undefined,
    signal: AbortSignal | undefined,
    seen: EnsureSeen,
  ): Promise<PullResult> {
    const image = c.image ?? '';
    if (!image) return { waiting: { reason: 'InvalidImageName', message: 'container has no image' } };
    const invalid = invalidReference(image);
    if (invalid) {
      // Upstream's words and event (InspectFailed); no pull is tried.
      const message = `Failed to apply default image tag "${image}": couldn't parse image name "${image}": ${invalid}`;
      emit({ type: 'Warning', reason: 'InspectFailed', message });
      return { waiting: { reason: 'InvalidImageName', message } };
    }
    const policy = pullPolicy(c);
    const present = policy === 'Always' ? undefined : (await this.#images.imageStatus({ image: { image } })).image;
    if (policy !== 'Always') seen.presentLocally = !!present;
    // The credentials to pull with, looked up once and only when needed (upstream's
    // makeLookupPullCredentialsFunc): the check below may need them, the pull does.
    let lookedUp: Promise<RegistryAuth[]> | undefined;
    const credentials = () => {
      lookedUp ??= (async () => this.#credentials(makeKeyring(pod ? await this.#pullSecrets(pod, emit) : []), image, pod))();
      return lookedUp;
    };
    if (present) {
      seen.pullRequired = false;
      if (!this.#pulled) {
        emit({ type: 'Normal', reason: 'Pulled', message: `Container image "${image}" already present on machine` });
        return { imageRef: present.id, user: imageUser(present) };
      }
      // KEP-2535: a present image another pod pulled with credentials this one may not have
      // is pulled again with this pod's (IfNotPresent acts as Always for it).
      let must: boolean;
      try {
        must = await this.#pulled.mustPull(image, present.id, async () => podCredentials(await credentials()));
      } catch (e) {
        seen.pullRequired = undefined;
        return this.#failed(image, key, this.#backoff.get(key), (e as Error).message, emit);
      }
      if (!must) {
        emit({
          type: 'Normal',
          reason: 'Pulled',
          message: `Container image "${image}" already present on machine and can be accessed by the pod`,
        });
        return { imageRef: present.id, user: imageUser(present) };
      }
    }
    // Upstream's precheck ends a Never request whose image is absent before this point.
    if (present || policy !== 'Never') seen.pullRequired = true;
    if (policy === 'Never') {
      const message = `Container image "${image}" is not present with pull policy of Never`;
      emit({ type: 'Warning', reason: 'ErrImageNeverPull', message });
      return { waiting: { reason: 'ErrImageNeverPull', message } };
    }
    const bk = this.#backoff.get(key);
    if (bk && Date.now() < bk.until) {
      emit({ type: 'Normal', reason: 'BackOff', message: `Back-off pulling image "${image}"` });
      // The waiting state says why (upstream's prevPullErrMsg); the event does not.
      return { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}": ${bk.lastError}` } };
    }
    let found: RegistryAuth[];
    try {
      found = await credentials();
    } catch (e) {
      // A malformed secret fails the pull, as upstream: pulling without the credentials the
      // user gave would only hide the mistake behind an unauthorized error.
      return this.#failed(image, key, bk, (e as Error).message, emit);
    }
    // Upstream's RecordPullIntent before the pull; its record (or the intent's removal) after.
    if (this.#pulled) {
      try {
        this.#pulled.recordIntent(image);
      } catch (e) {
        return {
          waiting: {
            reason: 'ErrImagePull',
            message: `Failed to record image pull intent for container image "${image}": ${(e as Error).message}`,
          },
        };
      }
    }
    let pulled: { imageRef: string; auth: RegistryAuth | undefined } | undefined;
    try {
      const r = await this.#pull(image, key, bk, found, emit, pod, signal);
      if (r.imageRef !== undefined) pulled = { imageRef: r.imageRef, auth: r.auth };
      return r.result;
    } finally {
      if (pulled) this.#pulled?.recordPulled(image, pulled.imageRef, pulledWith(pulled.auth));
      else this.#pulled?.recordFailed(image);
    }
  }

  async #pull(
    image: string,
    key: string,
    bk: { delayMs: number } | undefined,
    found: RegistryAuth[],
    emit: (e: ImageEvent) => void,
    pod: Pod | undefined,
    signal: AbortSignal | undefined,
  ): Promise<{ result: PullResult; imageRef?: string; auth?: RegistryAuth }> {
    emit({ type: 'Normal', reason: 'Pulling', message: `Pulling image "${image}"` });
    const started = Date.now();
    const uid = pod?.metadata?.uid ?? '';
    this.#observe.started?.(uid);
    const creds: (RegistryAuth | undefined)[] = [...found];
    if (!creds.length) {
      this.#log?.v(3, 'Pulling image without credentials', { image });
      creds.push(undefined);
    }
    let release: () => void;
    try {
      release = await this.#slots.acquire(signal);
    } catch (e) {
      this.#observe.finished?.(uid);
      throw e; // cancelled while waiting for its turn
    }
    // Over registryPullQPS the pull fails, and backs off, as upstream's throttledImageService.
    if (this.#limit && !this.#limit.tryAccept()) {
      release();
      this.#observe.finished?.(uid);
      return { result: this.#failed(image, key, bk, 'pull QPS exceeded', emit) };
    }
    // Each matching credential in turn (upstream allows rotation this way); the first that works wins.
    const errors: string[] = [];
    const pullStarted = Date.now();
    // A pull has no deadline (the runtime bounds it by progress: containerd's
    // image_pull_progress_timeout); a long one says it is still going, every PROGRESS_LOG_MS.
    const progress = setInterval(
      () => this.#log?.info('Image pull still in progress', { image, elapsed: goDuration(Date.now() - pullStarted) }),
      this.#progressMs,
    );
    progress.unref();
    try {
      for (const auth of creds) {
        try {
          const { imageRef } = await this.#images.pullImage({ image: { image }, ...(auth ? { auth } : {}) }, { signal });
          this.#backoff.delete(key);
          const status = await this.#status(image);
          const size = Number(status?.size ?? 0);
          // As upstream's puller, the pull's time takes in the size query.
          const now = Date.now();
          // Upstream's pullImage words: the pull's time, then the time with the wait for a pull slot, and the image's size.
          emit({
            type: 'Normal',
            reason: 'Pulled',
            message: `Successfully pulled image "${image}" in ${goDuration(now - pullStarted)} (${goDuration(now - started)} including waiting). Image size: ${size} bytes.`,
          });
          this.#observe.finished?.(uid, (now - pullStarted) / 1000, size);
          return { result: { imageRef, user: status === undefined ? undefined : imageUser(status) }, imageRef, auth };
        } catch (e) {
          if (signal?.aborted) this.#observe.finished?.(uid);
          signal?.throwIfAborted(); // cancelled, not failed: no back-off for a pod that is going away
          // Upstream's CRI client keeps grpc-go's "rpc error: code = ... desc = ..." but for Unknown, whose code it strips.
          errors.push(e instanceof CriError && e.code !== status.UNKNOWN ? goErrorText(e) : statusMessage(e));
        }
      }
    } finally {
      clearInterval(progress);
      release();
    }
    this.#observe.finished?.(uid);
    return { result: this.#failed(image, key, bk, aggregate(errors), emit) };
  }

  #failed(image: string, key: string, bk: { delayMs: number } | undefined, detail: string, emit: (e: ImageEvent) => void): PullResult {
    const delayMs = bk ? Math.min(bk.delayMs * 2, this.#maxMs) : this.#initialMs;
    this.#backoff.set(key, { until: Date.now() + delayMs, delayMs, lastError: `ErrImagePull: ${detail}` });
    // The container's "Error: ErrImagePull" is its caller's, as upstream's startContainer emits it.
    emit({ type: 'Warning', reason: 'Failed', message: `Failed to pull image "${image}": ${detail}` });
    return { waiting: { reason: 'ErrImagePull', message: detail } };
  }

  // A secret that cannot be read is not fatal: upstream logs it, warns on the pod and pulls
  // with what it has.
  async #pullSecrets(pod: Pod, emit: (e: ImageEvent) => void) {
    if (!this.#secrets || !pod.spec?.imagePullSecrets?.length) return [];
    const { secrets, failed } = await fetchPullSecrets(pod, this.#secrets);
    for (const f of failed) {
      this.#log?.info('Unable to retrieve pull secret, the image pull may not succeed.', {
        pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`,
        secret: `${pod.metadata?.namespace}/${f.name}`,
        err: f.err,
      });
    }
    if (failed.length) {
      emit({
        type: 'Warning',
        reason: 'FailedToRetrieveImagePullSecret',
        onPod: true,
        message: `Unable to retrieve some image pull secrets (${failed.map((f) => f.name).join(', ')}); attempting to pull the image may not succeed.`,
      });
    }
    return secrets;
  }

  /**
   * Upstream's keyring for a pull (image_manager.go makeLookupPullCredentialsFunc): the pod's
   * secrets, then the node's docker config, then the credential providers, each looked up on
   * its own and every match tried in that order. A failing plugin gives no credentials (it is
   * logged), so the pull goes on with the others, or anonymously.
   */
  async #credentials(secrets: Keyring, image: string, pod: Pod | undefined): Promise<RegistryAuth[]> {
    const fromProviders = this.#providers
      ? await this.#providers.lookup(repositoryOf(image), {
          namespace: pod?.metadata?.namespace ?? '',
          name: pod?.metadata?.name ?? '',
          uid: pod?.metadata?.uid ?? '',
          serviceAccountName: pod?.spec?.serviceAccountName ?? '',
        })
      : [];
    return [...lookup(secrets, image), ...lookup(this.#nodeKeyring?.get() ?? [], image), ...fromProviders];
  }

  // Unknown when the runtime cannot say: runAsNonRoot then refuses, as for an image without a user.
  async #status(image: string) {
    try {
      return (await this.#images.imageStatus({ image: { image } })).image;
    } catch {
      return undefined;
    }
  }

  /** Drops back-off state (and pull tokens) of a pod that is gone; keyPrefix is "UID/". */
  forget(keyPrefix: string) {
    for (const k of this.#backoff.keys()) if (k.startsWith(keyPrefix)) this.#backoff.delete(k);
    this.#tokens?.forget(keyPrefix.replace(/\/$/, ''));
  }
}

/**
 * Upstream's getPodCredentials: the pod's secrets (coordinates and hash) among its credentials
 * for the image, and the first service account a token-mode provider answered for.
 */
export function podCredentials(found: readonly RegistryAuth[]): PodCredentials {
  const out: PodCredentials = { secrets: [] };
  for (const auth of found) {
    const t = trackingOf(auth);
    if (t?.source?.secret) out.secrets.push({ ...t.source.secret, credentialHash: t.hash });
    else if (t?.source?.serviceAccount && !out.serviceAccount) out.serviceAccount = { ...t.source.serviceAccount };
  }
  return out;
}

/** Upstream's trackedToImagePullCreds: what a successful pull's credentials let use; anonymous or node-wide: every pod. */
export function pulledWith(auth: RegistryAuth | undefined): ImagePullCredentials {
  const t = auth ? trackingOf(auth) : undefined;
  if (t?.source?.secret) return { kubernetesSecrets: [{ ...t.source.secret, credentialHash: t.hash }] };
  if (t?.source?.serviceAccount) return { kubernetesServiceAccounts: [{ ...t.source.serviceAccount }] };
  return { nodePodsAccessible: true };
}

// Upstream's utilerrors.NewAggregate: one message as is, several distinct ones as [a, b].
function aggregate(messages: string[]): string {
  const distinct = [...new Set(messages)];
  return distinct.length === 1 ? distinct[0]! : `[${distinct.join(', ')}]`;
}
