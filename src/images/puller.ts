// Makes a container's image present, per its imagePullPolicy, with back-off on
// failure (ErrImagePull, then ImagePullBackOff while waiting), as upstream's image manager.
import type { Container } from 'kubernetes-types/core/v1.js';
import type { ImageClient } from '../cri/image-client.ts';
import type { Waiting } from '../runtime/types.ts';

export type PullResult = { imageRef: string; waiting?: undefined } | { imageRef?: undefined; waiting: Waiting };
export type ImageEvent = { type: 'Normal' | 'Warning'; reason: string; message: string };

/** Upstream's default when the pod does not say: Always for :latest or no tag, else IfNotPresent. */
export function pullPolicy(c: Container): string {
  if (c.imagePullPolicy) return c.imagePullPolicy;
  const image = c.image ?? '';
  const tag = image.includes('@') ? undefined : /:([^/:]+)$/.exec(image)?.[1];
  return !image.includes('@') && (tag === undefined || tag === 'latest') ? 'Always' : 'IfNotPresent';
}

export class ImagePuller {
  readonly #images: ImageClient;
  readonly #backoff = new Map<string, { until: number; delayMs: number }>();
  readonly #initialMs: number;
  readonly #maxMs: number;

  constructor(images: ImageClient, opts: { initialBackoffMs?: number; maxBackoffMs?: number } = {}) {
    this.#images = images;
    this.#initialMs = opts.initialBackoffMs ?? 10_000;
    this.#maxMs = opts.maxBackoffMs ?? 300_000;
  }

  /** key scopes the back-off (pod UID + image), like upstream's per-pod image back-off. */
  async ensure(c: Container, key: string, emit: (e: ImageEvent) => void): Promise<PullResult> {
    const image = c.image ?? '';
    if (!image) return { waiting: { reason: 'InvalidImageName', message: 'container has no image' } };
    const policy = pullPolicy(c);
    const present = policy === 'Always' ? undefined : (await this.#images.imageStatus({ image: { image } })).image;
    if (present) {
      emit({ type: 'Normal', reason: 'Pulled', message: `Container image "${image}" already present on machine` });
      return { imageRef: present.id };
    }
    if (policy === 'Never') {
      const message = `Container image "${image}" is not present with pull policy of Never`;
      emit({ type: 'Warning', reason: 'ErrImageNeverPull', message });
      return { waiting: { reason: 'ErrImageNeverPull', message } };
    }
    const bk = this.#backoff.get(key);
    if (bk && Date.now() < bk.until) {
      emit({ type: 'Normal', reason: 'BackOff', message: `Back-off pulling image "${image}"` });
      return { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}"` } };
    }
    emit({ type: 'Normal', reason: 'Pulling', message: `Pulling image "${image}"` });
    const started = Date.now();
    try {
      const { imageRef } = await this.#images.pullImage({ image: { image } });
      this.#backoff.delete(key);
      emit({ type: 'Normal', reason: 'Pulled', message: `Successfully pulled image "${image}" in ${Date.now() - started}ms` });
      return { imageRef };
    } catch (e) {
      const delayMs = bk ? Math.min(bk.delayMs * 2, this.#maxMs) : this.#initialMs;
      this.#backoff.set(key, { until: Date.now() + delayMs, delayMs });
      const detail = (e as { details?: string }).details ?? (e as Error).message;
      emit({ type: 'Warning', reason: 'Failed', message: `Failed to pull image "${image}": ${detail}` });
      emit({ type: 'Warning', reason: 'Failed', message: 'Error: ErrImagePull' });
      return { waiting: { reason: 'ErrImagePull', message: detail } };
    }
  }

  /** Drops back-off state of a pod that is gone. */
  forget(keyPrefix: string) {
    for (const k of this.#backoff.keys()) if (k.startsWith(keyPrefix)) this.#backoff.delete(k);
  }
}
