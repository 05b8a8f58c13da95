// Says in the log when the kubelet's event loop stood still. Every pod's work, watch and CRI
// answer waits behind a stall, and afterwards nothing shows it: the nodejs_eventloop_lag_*
// gauges are reset at each scrape. (The whole conformance run of 2026-11-27 found a 15 s stall
// on a loaded node only by lining up the kubelet's log with containerd's.) Upstream's kubelet
// has no equivalent: Go has no single loop to block.
import type { Logger } from './log.ts';

/** Pure: how long a timer due at dueAt fired late at now, when that is at least thresholdMs; else undefined. */
export function stalledMs(dueAt: number, now: number, thresholdMs: number): number | undefined {
  const late = now - dueAt;
  return late >= thresholdMs ? late : undefined;
}

/** Checks every everyMs that the loop ran on time; a stall of thresholdMs or more is logged as a warning. Returns a stop function. */
export function watchEventLoop(log: Logger, o: { everyMs: number; thresholdMs: number } = { everyMs: 500, thresholdMs: 1000 }): () => void {
  let dueAt = performance.now() + o.everyMs;
  const timer = setInterval(() => {
    const now = performance.now();
    const late = stalledMs(dueAt, now, o.thresholdMs);
    if (late !== undefined)
      log.warn('Event loop was blocked: every pod, watch and runtime call waited', { seconds: (late / 1000).toFixed(1) });
    dueAt = now + o.everyMs;
  }, o.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
