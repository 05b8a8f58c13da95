// How many image pulls run at once, the rest waiting their turn in order: upstream's
// serialImagePuller (serializeImagePulls, the default: one at a time) and parallelImagePuller
// (serializeImagePulls: false, at most maxParallelImagePulls; unset: no limit).

export class PullSlots {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  /** limit: Infinity for no limit. */
  constructor(limit: number) {
    this.#free = limit;
  }

  /** Waits for a slot; resolves with its release. A cancelled wait gives up its place and throws. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#free > 0) {
      this.#free--;
      return this.#release();
    }
    await new Promise<void>((resolve, reject) => {
      const turn = () => {
        signal?.removeEventListener('abort', cancel);
        resolve();
      };
      const cancel = () => {
        this.#waiting.splice(this.#waiting.indexOf(turn), 1);
        reject(signal!.reason);
      };
      this.#waiting.push(turn);
      signal?.addEventListener('abort', cancel, { once: true });
    });
    return this.#release();
  }

  /** The slot passes to the first waiting, else is free again; a second call does nothing. */
  #release(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    };
  }
}

/** The limit the configuration gives (validated as upstream: maxParallelImagePulls only with serializeImagePulls false). */
export const pullLimit = (serializeImagePulls: boolean, maxParallelImagePulls: number | undefined): number =>
  serializeImagePulls ? 1 : (maxParallelImagePulls ?? Number.POSITIVE_INFINITY);
