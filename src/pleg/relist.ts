// The pod lifecycle event generator: relists the runtime every second and tells the
// sync loop which pods changed. A relist with no change costs two list calls and no
// per-pod work. Its health (time since the last good relist) feeds the Ready condition.
import type { RuntimeView } from '../runtime/cri-runtime.ts';
import type { PodRuntimeStatus } from '../runtime/types.ts';
import { backoff, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import { diffRelist, type LifecycleEvent } from './events.ts';

export interface Pleg {
  /** Relist now (a container event arrived), and again shortly after: CRI still reports a
   * container running for up to ~110 ms after containerd's TaskExit. */
  kick(): void;
  /** Why the PLEG is unhealthy (upstream's wording), or undefined. */
  problem(): string | undefined;
  /** The last relist's view of every pod the runtime knows. */
  pods(): Map<string, PodRuntimeStatus>;
  stop(): void;
}

const RELIST_THRESHOLD_MS = 180_000;

/** Pods with a ready sandbox and running containers, for kubelet_running_pods/_containers. */
export function countRunning(pods: Map<string, PodRuntimeStatus>): { pods: number; containers: number } {
  let running = 0,
    containers = 0;
  for (const p of pods.values()) {
    if (p.sandboxes.some((s) => s.ready)) running++;
    containers += p.containers.filter((c) => c.phase === 'running').length;
  }
  return { pods: running, containers };
}

/** What a relist reports, for upstream's PLEG and running pods/containers metrics. */
export type PlegObserver = (seconds: number, intervalSeconds: number, pods: Map<string, PodRuntimeStatus>) => void;

export function startPleg(
  view: RuntimeView,
  opts: {
    periodMs?: number;
    onEvents: (events: LifecycleEvent[]) => void;
    log: Logger;
    observe?: PlegObserver;
  },
): Pleg {
  const abort = new AbortController();
  const retry = backoff(opts.periodMs ?? 1000, 30_000);
  let last = new Map<string, PodRuntimeStatus>();
  let lastOK = Date.now();
  let lastStart = 0;
  let wake: (() => void) | undefined;
  let kicks: NodeJS.Timeout[] = [];

  (async () => {
    while (!abort.signal.aborted) {
      const start = Date.now();
      try {
        const now = await view.pods();
        const events = diffRelist(last, now);
        last = now;
        lastOK = Date.now();
        opts.observe?.((lastOK - start) / 1000, lastStart ? (start - lastStart) / 1000 : 0, now);
        lastStart = start;
        if (events.length) opts.onEvents(events);
        retry.reset();
        await new Promise<void>((resolve) => {
          wake = resolve;
          sleep(opts.periodMs ?? 1000, abort.signal).then(resolve);
        });
        wake = undefined;
      } catch (e) {
        const wait = retry.next();
        opts.log.warn('PLEG relist failed', { err: e, retryInMs: wait });
        await sleep(wait, abort.signal);
      }
    }
  })();

  return {
    kick() {
      for (const t of kicks) clearTimeout(t);
      kicks = [0, 120, 300].map((ms) => setTimeout(() => wake?.(), ms));
    },
    problem() {
      const ago = Date.now() - lastOK;
      return ago > RELIST_THRESHOLD_MS
        ? `pleg was last seen active ${Math.round(ago / 1000)}s ago; threshold is ${RELIST_THRESHOLD_MS / 1000}s`
        : undefined;
    },
    pods: () => last,
    stop: () => {
      abort.abort();
      for (const t of kicks) clearTimeout(t);
    },
  };
}
