// The kubelet's own memory reducer: a major GC once the old generation holds more than a few
// MB of garbage. V8 marks the old generation again only when it has grown to a limit it sets
// from the live size, and a node agent allocates in bursts (a wave of pod starts) and then
// slowly: what a burst promoted stays resident as garbage for minutes, ~12 MB of a kubelet
// at rest (docs/benchmarks.md, "Where a running kubelet's memory goes"). V8's memory reducer
// would collect it, but it runs only when the embedder reports idleness, which Node does not.
// A kubelet's resident set is reserved on every node, so it is collected here.
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { jittered, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';

/** Pure: whether the heap holds enough garbage to be worth a major GC. */
export function garbageToCollect(usedBytes: number, liveBytes: number, thresholdBytes: number): boolean {
  return usedBytes - liveBytes >= thresholdBytes;
}

type GC = (o: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => unknown;

/** V8's gc() extension, which --expose-gc would give: set before a new context is made, it is in that context. */
function exposeGC(): GC {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as GC;
}

/** A collection ran: heap used before and after, and how long it took. */
export type ReducerObserver = (beforeBytes: number, afterBytes: number, seconds: number) => void;

export function startMemoryReducer(o: {
  log: Logger;
  intervalMs?: number;
  thresholdBytes?: number;
  observe?: ReducerObserver;
  heapUsed?: () => number;
  gc?: GC;
}): { stop(): void } {
  const abort = new AbortController();
  const intervalMs = o.intervalMs ?? 5000;
  const threshold = o.thresholdBytes ?? 8 << 20;
  const heapUsed = o.heapUsed ?? (() => getHeapStatistics().used_heap_size);
  const gc = o.gc ?? exposeGC();
  let live = heapUsed();
  (async () => {
    while (!abort.signal.aborted) {
      await sleep(jittered(intervalMs, 0.2), abort.signal);
      if (abort.signal.aborted) break;
      const before = heapUsed();
      // A heap that shrank by itself (V8's own major GC) gives the new floor.
      if (before < live) live = before;
      if (!garbageToCollect(before, live, threshold)) continue;
      const started = performance.now();
      try {
        // V8's CollectAllAvailableGarbage, which also compacts and gives the freed pages back
        // (a plain major GC leaves them committed: heap used 46 -> 4 MB, RSS 140 -> 137 MB; this
        // one, RSS 137 -> 55 MB in the same test). One pause of 10-30 ms at a kubelet's heap size.
        gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      } catch (e) {
        o.log.warn('Cannot collect garbage; the memory reducer stops', { err: e });
        return;
      }
      live = heapUsed();
      o.observe?.(before, live, (performance.now() - started) / 1000);
      o.log.v(4, 'Collected garbage', { beforeMB: (before / 1048576).toFixed(1), afterMB: (live / 1048576).toFixed(1) });
    }
  })();
  return { stop: () => abort.abort() };
}
