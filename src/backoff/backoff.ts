// Exponential backoff with jitter, shared by every retrying loop so that a fleet of
// nodes does not hammer the apiserver or the runtime in lockstep.
export interface Backoff {
  /** The next delay in ms (grows until max), jittered by up to +jitter fraction. */
  next(): number;
  reset(): void;
}

export function backoff(initialMs: number, maxMs: number, jitter = 0.2, random = Math.random): Backoff {
  let current = 0;
  return {
    next() {
      current = current === 0 ? initialMs : Math.min(current * 2, maxMs);
      return Math.round(current * (1 + jitter * random()));
    },
    reset() {
      current = 0;
    },
  };
}

/** The interval scaled by a random factor in [1, 1 + jitter): upstream's wait.Jitter. */
export const jittered = (ms: number, jitter = 0.1, random = Math.random) => Math.round(ms * (1 + jitter * random()));

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
