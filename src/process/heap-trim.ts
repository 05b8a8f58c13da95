// A full garbage collection of the kubelet's own heap whenever what it holds has grown by a few
// megabytes, looked at every 30 s. V8 marks its old generation only once it has grown by half
// its live size (--heap-growing-percent=50 in the shebang), and a kubelet allocates slowly, so
// between two marks it holds its garbage (a burst's decoded lists, status patches, probe
// results) as resident memory, reserved on every node: with 30 pods running, 8 MB of it
// (docs/benchmarks.md, "The heap trimmed"). Go's runtime, the upstream kubelet's, hands such
// memory back in the background (its scavenger); this is that for V8, at the cost of one
// mark-compact of a ~25 MB heap (tens of milliseconds) when it is due.
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface HeapTrimPolicy {
  /** How often the heap is looked at. */
  periodMs: number;
  /** Collected when the used heap has grown this much over what the last collection left. */
  growthBytes: number;
}

export const HEAP_TRIM_POLICY: HeapTrimPolicy = { periodMs: 30_000, growthBytes: 4 << 20 };

/** Pure: whether to collect now, from the used heap and what the last collection left (0 before the first). */
export const trimDue = (usedBytes: number, leftBytes: number, policy: HeapTrimPolicy) => usedBytes - leftBytes >= policy.growthBytes;

/** V8's full collection without --expose-gc on the command line: the flag is set before the function is looked up. */
function fullGC(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Looks at the heap every period and collects when trimDue says so; observe gets each collection's seconds and the bytes it freed. */
export function startHeapTrim(
  observe?: (seconds: number, freedBytes: number) => void,
  policy: HeapTrimPolicy = HEAP_TRIM_POLICY,
): { stop(): void } {
  const gc = fullGC();
  let left = 0;
  const timer = setInterval(() => {
    const used = getHeapStatistics().used_heap_size;
    if (!trimDue(used, left, policy)) return;
    const start = performance.now();
    gc();
    left = getHeapStatistics().used_heap_size;
    observe?.((performance.now() - start) / 1000, Math.max(0, used - left));
  }, policy.periodMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
