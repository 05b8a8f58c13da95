// Runs housekeeping every 2 s and container/sandbox GC every minute (upstream's
// housekeepingPeriod and ContainerGCPeriod) on one loop, so runs never overlap. What to
// remove is decided by the planners; this file only gathers their inputs and executes.
// A failing run backs off as a whole; a failing item (one container, one dir) backs off
// alone, so one stuck object neither floods the log nor holds up the others.
import { NO_TRACER, type Tracer } from '../tracing/tracer.ts';
import { backoff, jittered, sleep, type Backoff } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import { DEFAULT_CONTAINER_GC_POLICY, planContainerGC, type ContainerGCPolicy } from './containers.ts';
import type { GCRuntime } from './cri.ts';
import * as realDisk from './disk.ts';
import { defaultNodeCgroups, type NodeCgroups } from '../resources/cgroup-manager.ts';
import { logDirUID, planHousekeeping } from './housekeeping.ts';
import type { KnownPod, Scope } from './ownership.ts';
import { planSandboxGC } from './sandboxes.ts';

/** What of the filesystem the collector reads and removes (disk.ts; a fake in tests). */
export interface GCDisk {
  listPodDirs(rootDir: string): Set<string>;
  listLogDirs(podLogsDir: string): string[];
  mountedPods(rootDir: string): Set<string>;
  removePodDir(rootDir: string, uid: string): void;
  /** Unmounts ROOT/pods/UID/volumes/* of a pod that is gone; how many were mounted. */
  unmountPodVolumes?(rootDir: string, uid: string): Promise<number>;
  removeLogDir(podLogsDir: string, name: string): void;
  /** True when none is left: a process killed in one is still exiting (the next pass removes it). */
  removePodCgroups(cgroups: NodeCgroups, uid: string): Promise<boolean>;
  /** Removes /var/log/containers links whose log is gone, but not those of containers that have not exited; how many. */
  removeDanglingLogSymlinks?(notExited: ReadonlySet<string>): number;
}

/**
 * How old a list of the runtime housekeeping takes (RuntimeView.pods): the PLEG's period with the
 * runtime's events up, so that an idle node's housekeeping reads the PLEG's list rather than
 * making its own every 2 s (30 ListPodSandbox and 30 ListContainers a minute). Upstream's
 * HandlePodCleanups reads its runtimeCache, as old as 2 s, where its PLEG lists every second.
 */
export const HOUSEKEEPING_LIST_AGE_MS = 10_000;

export type Removed = 'container' | 'sandbox' | 'pod_dir' | 'pod_log_dir' | 'log_symlink';

export interface CollectorDeps {
  /** The node's cgroups, where orphaned pod cgroups are found and removed; default cgroupfs below '/'. */
  cgroups?: NodeCgroups;
  runtime: GCRuntime;
  /** The pods with a worker (PodWorkers.states()). Read after the runtime is listed: see housekeeping. */
  known(): ReadonlyMap<string, KnownPod>;
  sourcesReady(): boolean;
  rootDir: string;
  podLogsDir: string;
  log: Logger;
  disk?: GCDisk;
  /** Releases what a pod that is gone has published by volume plugins (CSI, flexVolume) before its mounts go (src/volumes). */
  releaseVolumes?(uid: string): Promise<void>;
  /**
   * Releases what volume plugins hold of a pod that is gone though nothing of it is mounted (a
   * flexVolume driver's plain directory: its unmount), before its directory goes; throws to keep it.
   */
  releaseUnmountedVolumes?(uid: string): Promise<void>;
  /** The first try at cleaning up the volumes of a pod that is gone ended (src/volumes/reconstruct.ts counts it). */
  volumesCleaned?(uid: string, ok: boolean): void;
  /** A pod's directory is gone: what it held for the pod is free (its user namespace IDs, src/userns). */
  podDirRemoved?(uid: string): void;
  policy?: ContainerGCPolicy;
  /** KubeletConfiguration `tracing`: a span per container GC pass. */
  tracer?: Tracer;
  housekeepingMs?: number;
  gcMs?: number;
  observe?: {
    duration?(loop: 'housekeeping' | 'container_gc', seconds: number): void;
    removed?(kind: Removed, n: number): void;
    orphan?(): void;
    /**
     * A sweep's orphaned pod directories (their pods neither known nor in the runtime), and of
     * them those not cleaned up in it (volumes still mounted, a removal that failed or waits):
     * upstream's cleanupOrphanedPodDirs gauges.
     */
    orphanPodDirs?(found: number, notCleaned: number): void;
    error?(loop: 'housekeeping' | 'container_gc'): void;
  };
}

// Upstream kills orphans with a 1 s grace period (their preStop hooks get that), raised to its
// 2 s minimum for the stop.
const ORPHAN_GRACE_SECONDS = 2;

/** Per-item retry: an item that failed is skipped until its back-off passes. */
class ItemRetry {
  readonly #items = new Map<string, { b: Backoff; until: number }>();
  due(key: string, now: number) {
    return (this.#items.get(key)?.until ?? 0) <= now;
  }
  ok(key: string) {
    this.#items.delete(key);
  }
  failed(key: string, now: number): number {
    let f = this.#items.get(key);
    if (!f) this.#items.set(key, (f = { b: backoff(2000, 300_000), until: 0 }));
    const wait = f.b.next();
    f.until = now + wait;
    return wait;
  }
  /** Forgets items no longer planned (removed some other way). */
  retain(keys: Set<string>) {
    for (const k of this.#items.keys()) if (!keys.has(k)) this.#items.delete(k);
  }
}

export interface Collector {
  /** One housekeeping pass now (tests, and the loop). */
  housekeeping(): Promise<void>;
  /** One container/sandbox GC pass now. */
  collect(): Promise<void>;
  stop(): void;
}

export function startCollector(d: CollectorDeps, opts: { loop?: boolean } = {}): Collector {
  const disk = d.disk ?? realDisk;
  const policy = d.policy ?? DEFAULT_CONTAINER_GC_POLICY;
  const abort = new AbortController();
  const hkItems = new ItemRetry(),
    gcItems = new ItemRetry();
  let podNames = new Map<string, string>(); // uid -> namespace/name, from log dir names, for log lines

  const scope = (): Scope => ({ known: d.known(), owned: disk.listPodDirs(d.rootDir), sourcesReady: d.sourcesReady() });
  const removed = (kind: Removed, n = 1) => {
    if (n) d.observe?.removed?.(kind, n);
  };
  const ref = (uid: string) => ({ pod: podNames.get(uid), podUID: uid });

  /** Runs one item unless it is backing off; false when it failed. */
  async function item(retry: ItemRetry, key: string, what: string, fields: object, fn: () => Promise<void> | void): Promise<boolean> {
    const now = Date.now();
    if (!retry.due(key, now)) return false;
    try {
      await fn();
      retry.ok(key);
      return true;
    } catch (e) {
      d.log.error(`Failed to ${what}`, { ...fields, err: e, retryInMs: retry.failed(key, now) });
      return false;
    }
  }

  async function housekeeping() {
    // The runtime first, then the workers: a worker exists before its pod's first
    // sandbox, so a pod seen in the runtime but unknown afterwards really is unknown.
    const runtime = await d.runtime.pods(HOUSEKEEPING_LIST_AGE_MS);
    const logDirs = disk.listLogDirs(d.podLogsDir);
    podNames = new Map(
      logDirs.map((n) => {
        const [ns, ...rest] = n.split('_');
        rest.pop();
        return [logDirUID(n), `${ns}/${rest.join('_')}`];
      }),
    );
    let mounted: Set<string> | undefined;
    const mountedPods = { has: (uid: string) => (mounted ??= disk.mountedPods(d.rootDir)).has(uid) };
    const plan = planHousekeeping({ runtime, scope: scope(), logDirs, mountedPods });
    hkItems.retain(
      new Set([
        ...plan.orphans.map((o) => `orphan/${o.uid}`),
        ...plan.dirs.map((x) => `dir/${x.uid}`),
        ...plan.mounted.map((u) => `mounted/${u}`),
      ]),
    );

    for (const o of plan.orphans) {
      if (abort.signal.aborted) return;
      if (d.known().has(o.uid)) continue; // a source has it now: its worker takes over
      await item(hkItems, `orphan/${o.uid}`, 'clean up orphaned pod', ref(o.uid), async () => {
        d.log.info('Clean up containers for orphaned pod we had not seen before', { ...ref(o.uid), gracePeriod: ORPHAN_GRACE_SECONDS });
        await Promise.all(
          o.stopContainers.map(async (id) => {
            const failed = await d.runtime.stopContainer(id, ORPHAN_GRACE_SECONDS, { podIP: o.podIP });
            // Upstream's executePreStopHook logs it (cri.ts records the event); the container stops all the same.
            if (failed) d.log.error('PreStop hook failed', { ...ref(o.uid), containerID: id, err: failed });
          }),
        );
        for (const id of o.stopSandboxes) await d.runtime.stopSandbox(id);
        for (const id of o.removeContainers) await d.runtime.removeContainer(id);
        for (const id of o.removeSandboxes) await d.runtime.removeSandbox(id);
        d.observe?.orphan?.();
        removed('container', o.removeContainers.length);
        removed('sandbox', o.removeSandboxes.length);
      });
    }
    let orphanDirs = 0,
      notCleaned = 0;
    for (const uid of plan.mounted) {
      // A pod deleted while the kubelet was down keeps its tmpfs volumes (every pod has
      // kube-api-access): unmount them, as upstream's volume reconciler does; the dir goes next pass.
      if (abort.signal.aborted) return;
      if (d.known().has(uid)) continue;
      orphanDirs++;
      notCleaned++; // upstream's podVolumesExist: not this sweep
      const unmounted = await item(hkItems, `mounted/${uid}`, 'unmount the volumes of an orphaned pod', ref(uid), async () => {
        await d.releaseVolumes?.(uid);
        const n = (await disk.unmountPodVolumes?.(d.rootDir, uid)) ?? 0;
        if (n) d.log.info('Unmounted the volumes of a pod that is gone', { ...ref(uid), volumes: n });
        else d.log.v(3, 'Orphaned pod found, but volumes are still mounted; not removing its directory', ref(uid));
      });
      d.volumesCleaned?.(uid, unmounted);
    }
    for (const x of plan.dirs) {
      if (abort.signal.aborted) return;
      if (d.known().has(x.uid)) continue;
      orphanDirs++;
      let cleaned = false;
      const released = await item(hkItems, `dir/${x.uid}`, 'remove orphaned pod directories', ref(x.uid), async () => {
        // The pod's directory stays (and this comes back) until its cgroups are gone.
        if (!(await disk.removePodCgroups(d.cgroups ?? defaultNodeCgroups(), x.uid))) {
          d.log.info('Killed the processes left in the cgroups of a pod that is gone; removing them at the next pass', ref(x.uid));
          return;
        }
        await d.releaseUnmountedVolumes?.(x.uid);
        // Checked again and removed in one synchronous stretch: no worker can appear in between.
        if (d.known().has(x.uid)) {
          cleaned = true; // a source has it again: nothing left to clean
          return;
        }
        for (const n of x.logDirs) {
          disk.removeLogDir(d.podLogsDir, n);
          removed('pod_log_dir');
        }
        disk.removePodDir(d.rootDir, x.uid); // last: it marks the pod as ours
        cleaned = true;
        d.podDirRemoved?.(x.uid);
        removed('pod_dir');
        d.log.info('Removed the directories of a pod that is gone', { ...ref(x.uid), logDirs: x.logDirs });
      });
      if (!released || cleaned) d.volumesCleaned?.(x.uid, released);
      if (!cleaned) notCleaned++;
    }
    d.observe?.orphanPodDirs?.(orphanDirs, notCleaned);
  }

  async function collect() {
    const runtime = await d.runtime.pods();
    const s = scope();
    const containers = planContainerGC(runtime.values(), s, policy, new Date());
    const sandboxes = planSandboxGC(runtime.values(), s, new Set(containers.map((c) => c.id)));
    gcItems.retain(new Set([...containers.map((c) => `container/${c.id}`), ...sandboxes.map((x) => `sandbox/${x.id}`)]));
    let nc = 0,
      ns = 0;
    for (const c of containers) {
      if (abort.signal.aborted) return;
      const fields = { ...ref(c.uid), container: c.name, containerID: c.id, attempt: c.attempt, reason: c.reason };
      if (
        await item(gcItems, `container/${c.id}`, 'remove dead container', fields, async () => {
          d.log.v(4, 'Removing container', fields);
          // Its state is unknown: it may still run (upstream kills it first).
          if (c.stopFirst) await d.runtime.stopContainer(c.id, ORPHAN_GRACE_SECONDS);
          await d.runtime.removeContainer(c.id);
        })
      )
        nc++;
    }
    for (const x of sandboxes) {
      if (abort.signal.aborted) return;
      const fields = { ...ref(x.uid), podSandboxID: x.id, reason: x.reason };
      if (
        await item(gcItems, `sandbox/${x.id}`, 'remove pod sandbox', fields, async () => {
          d.log.v(4, 'Removing sandbox', fields);
          // Stopping first also guards against a sandbox that was never stopped (as upstream).
          await d.runtime.stopSandbox(x.id);
          await d.runtime.removeSandbox(x.id);
        })
      )
        ns++;
    }
    removed('container', nc);
    removed('sandbox', ns);
    // Links left by containers removed with their pod or sandbox (upstream's evictPodLogsDirectories).
    try {
      const notExited = new Set([...runtime.values()].flatMap((p) => p.containers.filter((c) => c.phase !== 'exited').map((c) => c.id)));
      removed('log_symlink', disk.removeDanglingLogSymlinks?.(notExited) ?? 0);
    } catch (e) {
      d.log.error('Failed to remove dead container log symlinks', { err: e });
    }
    if (nc || ns) d.log.info('Garbage collected dead containers and sandboxes', { containers: nc, sandboxes: ns });
  }

  const timed = async (loop: 'housekeeping' | 'container_gc', fn: () => Promise<void>) => {
    const t0 = performance.now();
    try {
      await fn();
    } finally {
      d.observe?.duration?.(loop, (performance.now() - t0) / 1000);
    }
  };

  if (opts.loop !== false) {
    (async () => {
      const hkPeriod = d.housekeepingMs ?? 2000,
        gcPeriod = d.gcMs ?? 60_000;
      const hkRetry = backoff(hkPeriod, 60_000),
        gcRetry = backoff(gcPeriod, 300_000);
      let nextGC = 0;
      while (!abort.signal.aborted) {
        let wait = jittered(hkPeriod, 0.2);
        try {
          await timed('housekeeping', housekeeping);
          hkRetry.reset();
        } catch (e) {
          wait = hkRetry.next();
          d.observe?.error?.('housekeeping');
          d.log.error('Housekeeping failed', { err: e, retryInMs: wait });
        }
        if (!abort.signal.aborted && Date.now() >= nextGC) {
          try {
            // kuberuntime_gc.go GarbageCollect's span.
            await timed('container_gc', () => (d.tracer ?? NO_TRACER).inSpan('Containers/GarbageCollect', {}, collect));
            gcRetry.reset();
            nextGC = Date.now() + jittered(gcPeriod, 0.1);
          } catch (e) {
            const retry = gcRetry.next();
            nextGC = Date.now() + retry;
            d.observe?.error?.('container_gc');
            d.log.error('Container garbage collection failed', { err: e, retryInMs: retry });
          }
        }
        await sleep(wait, abort.signal);
      }
    })();
  }

  return { housekeeping, collect, stop: () => abort.abort() };
}
