// The pod lifecycle event generator: relists the runtime and tells the sync loop which pods
// changed. A relist with no change costs two list calls and no per-pod work. Every second,
// as upstream's generic PLEG; every 10 s while the runtime's event stream is up, since the
// events then ask for the relists that matter (an exit, at once; CRI's stopped event, of its
// pod alone): upstream's Evented PLEG likewise slows its generic relist to 300 s
// (eventedPlegRelistPeriod), updates its cache per event, and falls back to 1 s when the
// stream fails. Its health (time since the last relist of every pod) feeds the Ready condition.
import type { RuntimeView } from '../runtime/cri-runtime.ts';
import type { PodRuntimeStatus } from '../container/types.ts';
import { backoff, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import { diffRelist, type LifecycleEvent } from './events.ts';
import { relistsAfter, type RuntimeEvent } from './runtime-events.ts';

export interface Pleg {
  /** The runtime's event stream is up, or down: relist now (events may have been missed) and set the period. */
  eventStream(up: boolean): void;
  /** A runtime event: relists when CRI will show what it means (relistsAfter). */
  runtimeEvent(e: RuntimeEvent): void;
  /** Why the PLEG is unhealthy (upstream's wording), or undefined. */
  problem(): string | undefined;
  /** The last relist's view of every pod the runtime knows. */
  pods(): Map<string, PodRuntimeStatus>;
  stop(): void;
}

const RELIST_THRESHOLD_MS = 180_000;
/**
 * More pods than this due at once (a node-wide stop): one relist of every pod, two calls, costs
 * less than two filtered lists for each, which containerd answers by walking every container.
 */
export const POD_RELISTS_MAX = 4;

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

/**
 * Pure: the exited containers (ID -> when the exit was told; a sandbox's pause container too) a
 * relist begun at listedAt has not seen stopped: those it shows running (a sandbox: ready), and
 * those told of after it began (it may predate them).
 */
export function notSeenStopped(exited: Map<string, number>, listedAt: number, pods: Map<string, PodRuntimeStatus>): Map<string, number> {
  const left = new Map<string, number>();
  for (const [id, at] of exited) if (at > listedAt) left.set(id, at);
  const keep = (id: string) => exited.has(id) && left.set(id, exited.get(id)!);
  for (const p of pods.values()) {
    for (const c of p.containers) if (c.phase === 'running') keep(c.id);
    for (const sb of p.sandboxes) if (sb.ready) keep(sb.id);
  }
  return left;
}

/** What a relist reports, for upstream's PLEG and running pods/containers metrics. */
export type PlegObserver = (seconds: number, intervalSeconds: number, pods: Map<string, PodRuntimeStatus>) => void;

/**
 * Pure: the PLEG's view after relisting some pods alone: the others as they were, a pod the
 * runtime no longer knows dropped. Upstream's Evented PLEG likewise updates its cache per event.
 */
export function withPods(last: Map<string, PodRuntimeStatus>, read: PodRuntimeStatus[]): Map<string, PodRuntimeStatus> {
  const out = new Map(last);
  for (const p of read) {
    if (p.sandboxes.length || p.containers.length) out.set(p.uid, p);
    else out.delete(p.uid);
  }
  return out;
}

/** Pure: the pods of a view with these UIDs, for the events of a relist of them alone. */
const only = (pods: Map<string, PodRuntimeStatus>, uids: readonly string[]) =>
  new Map(uids.flatMap((u) => (pods.has(u) ? [[u, pods.get(u)!] as const] : [])));

export function startPleg(
  view: RuntimeView,
  opts: {
    periodMs?: number;
    /** With the event stream up and no exit awaited (the events' relists see to those). */
    eventedPeriodMs?: number;
    onEvents: (events: LifecycleEvent[]) => void;
    log: Logger;
    /** Each relist of every pod (the periodic ones, and those a pod's own relist cannot stand for). */
    observe?: PlegObserver;
  },
): Pleg {
  const abort = new AbortController();
  const retry = backoff(opts.periodMs ?? 1000, 30_000);
  let last = new Map<string, PodRuntimeStatus>();
  let lastOK = Date.now();
  let lastStart = 0;
  let wake: (() => void) | undefined;
  // A wake while a relist runs is kept: that relist may have begun before what woke it.
  let woken = false;
  // What the next relist reads: every pod, or only the pods CRI's stopped events named (one
  // pod's own lists decode that pod alone: a burst of exits cost two whole lists an exit).
  let whole = true;
  const due = new Set<string>();
  const poke = (all: boolean) => {
    if (all) whole = true;
    if (wake) wake();
    else woken = true;
  };
  let kicks: NodeJS.Timeout[] = [];
  let exited = new Map<string, number>();
  let streamUp = false;
  // An exit told by containerd's task events but not yet seen keeps the short period: the
  // runtime may take longer than the event's relists to show it (notSeenStopped).
  const period = () => (streamUp && !exited.size ? (opts.eventedPeriodMs ?? 10_000) : (opts.periodMs ?? 1000));
  const clearKicks = () => {
    for (const t of kicks) clearTimeout(t);
    kicks = [];
  };

  (async () => {
    while (!abort.signal.aborted) {
      const start = Date.now();
      const uids = whole || due.size > POD_RELISTS_MAX ? undefined : [...due];
      whole = false;
      due.clear();
      try {
        const now = uids ? withPods(last, await Promise.all(uids.map((u) => view.pod(u)))) : await view.pods();
        const events = uids ? diffRelist(only(last, uids), only(now, uids)) : diffRelist(last, now);
        last = now;
        if (!uids) {
          lastOK = Date.now();
          opts.observe?.((lastOK - start) / 1000, lastStart ? (start - lastStart) / 1000 : 0, now);
          lastStart = start;
          if (exited.size) {
            exited = notSeenStopped(exited, start, now);
            if (!exited.size) clearKicks();
          }
        }
        if (events.length) opts.onEvents(events);
        retry.reset();
        if (woken) {
          woken = false;
          continue;
        }
        // The timer goes with the wake: pokes (every exit) would otherwise leave one pending per
        // wait, each holding a listener on the abort signal for up to the 10 s period. It counts
        // from the last relist of every pod, which one pod's relists do not put off.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(
            () => {
              whole = true;
              resolve();
            },
            Math.max(0, lastStart + period() - Date.now()),
          );
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      } catch (e) {
        whole = true;
        const wait = retry.next();
        opts.log.warn('PLEG relist failed', { err: e, retryInMs: wait });
        await sleep(wait, abort.signal);
      }
    }
  })();

  return {
    eventStream(up) {
      streamUp = up;
      poke(true);
    },
    runtimeEvent(e) {
      const after = relistsAfter(e, (id) => exited.has(id));
      if (!after.length) return;
      if (e.kind === 'stopped' && e.podUID) {
        // The kubelet's own stop, which the stopping step reads after (RuntimeView.stopping).
        if (view.isStopping(e.podUID)) return;
        // CRI shows the exit already (relistsAfter: at once), and the event names its pod.
        due.add(e.podUID);
        return poke(false);
      }
      if (e.kind === 'exit' || e.kind === 'oom') {
        // Exits close together share one schedule: the newest's covers the ones before.
        clearKicks();
        exited.set(e.containerID, Date.now());
      }
      kicks.push(...after.map((ms) => setTimeout(() => poke(true), ms)));
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
      clearKicks();
      wake?.();
    },
  };
}
