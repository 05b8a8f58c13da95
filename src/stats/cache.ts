// The stats every endpoint serves from: a sample taken in the background every ~10 s
// (upstream's cadvisor housekeeping and eviction cadence) and on demand when the last one
// is older than that, so requests never wait on the runtime's slow stats calls unless
// the background loop fell behind. Each sample keeps its predecessor for CPU rates.
import type { Logger } from '../log/log.ts';
import type { RawSample } from './sample.ts';

export interface Samples {
  cur: RawSample;
  prev?: RawSample;
}

export interface SampleCache {
  /** The latest samples, refreshed first if stale; rejects only before any sample was taken. */
  get(): Promise<Samples>;
  /** A sample taken now (joining one in flight): for decisions that must see the present (eviction). */
  fresh(): Promise<Samples>;
  stop(): void;
}

export interface SampleCacheOptions {
  intervalMs?: number;
  /** Older than this, a request takes a fresh sample (the timer's interval plus slack for a slow sample). */
  maxAgeMs?: number;
  log: Logger;
  now?: () => number;
  /** A sample took this long; ok false: it failed or the runtime did not answer. */
  observe?: (seconds: number, ok: boolean) => void;
}

export function sampleCache(collect: () => Promise<RawSample>, o: SampleCacheOptions): SampleCache {
  const intervalMs = o.intervalMs ?? 10_000;
  const maxAgeMs = o.maxAgeMs ?? intervalMs + 2_000;
  const now = o.now ?? Date.now;
  let samples: Samples | undefined;
  let inflight: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let lastProblem: string | undefined;

  const schedule = () => {
    clearTimeout(timer);
    if (stopped) return;
    timer = setTimeout(() => void refresh(), intervalMs);
    timer.unref();
  };
  const refresh = (): Promise<void> => {
    const started = performance.now();
    const took = (ok: boolean) => o.observe?.((performance.now() - started) / 1000, ok);
    return (inflight ??= collect()
      .then(
        (cur) => {
          took(!cur.runtimeError);
          samples = { cur, prev: samples?.cur };
          // Logged when it changes, not every 10 s.
          if (cur.runtimeError !== lastProblem) {
            if (cur.runtimeError) o.log.warn('Stats without pods: the runtime did not answer', { err: cur.runtimeError });
            else if (lastProblem) o.log.info('Stats from the runtime again');
            lastProblem = cur.runtimeError;
          }
        },
        (e: unknown) => {
          took(false);
          o.log.error('Failed to take a stats sample', { err: e });
        },
      )
      .finally(() => {
        inflight = undefined;
        schedule();
      }));
  };

  void refresh();
  return {
    async get() {
      if (!samples || now() - samples.cur.timeMs > maxAgeMs) await refresh();
      if (!samples) throw new Error('no stats sample could be taken yet');
      return samples;
    },
    async fresh() {
      await refresh();
      if (!samples) throw new Error('no stats sample could be taken yet');
      return samples;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
