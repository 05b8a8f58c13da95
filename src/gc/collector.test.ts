import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HOUSEKEEPING_LIST_AGE_MS, startCollector, type CollectorDeps, type GCDisk } from './collector.ts';
import type { GCRuntime } from './cri.ts';
import type { KnownPod } from './ownership.ts';
import type { PodRuntimeStatus } from '../container/types.ts';
import type { Logger } from '../log/log.ts';
import { ctr, live, rt, sb } from './testing.ts';

function fakes(pods: PodRuntimeStatus[], o: { owned?: string[]; logDirs?: string[]; failRemove?: string; busyCgroupPasses?: number } = {}) {
  const calls: string[] = [];
  const errors: string[] = [];
  /** The age each read of the runtime accepted (undefined: a fresh list). */
  const lists: (number | undefined)[] = [];
  let runtime = new Map(pods.map((p) => [p.uid, p]));
  const owned = new Set(o.owned ?? []);
  const call = (s: string) => async () => {
    calls.push(s);
  };
  const runtimeFake: GCRuntime = {
    pods: async (maxAgeMs) => {
      lists.push(maxAgeMs);
      return runtime;
    },
    stopContainer: async (id, t) => {
      calls.push(`stopContainer ${id} ${t}`);
    },
    removeContainer: async (id) => {
      calls.push(`removeContainer ${id}`);
      if (id === o.failRemove) throw new Error('boom');
    },
    stopSandbox: async (id) => call(`stopSandbox ${id}`)(),
    removeSandbox: async (id) => call(`removeSandbox ${id}`)(),
  };
  const disk: GCDisk = {
    listPodDirs: () => new Set(owned),
    listLogDirs: () => o.logDirs ?? [],
    mountedPods: () => new Set(),
    removePodDir: (_root, uid) => {
      calls.push(`removePodDir ${uid}`);
      owned.delete(uid);
    },
    removeLogDir: (_dir, name) => {
      calls.push(`removeLogDir ${name}`);
    },
    removePodCgroups: async (_cgroups, uid) => {
      calls.push(`removePodCgroups ${uid}`);
      return !(o.busyCgroupPasses && o.busyCgroupPasses-- > 0);
    },
  };
  const log: Logger = {
    info: () => {},
    v: () => {},
    warn: () => {},
    error: (m) => {
      errors.push(m);
    },
  };
  const deps: CollectorDeps = {
    runtime: runtimeFake,
    known: () => new Map(),
    sourcesReady: () => true,
    rootDir: '/r',
    podLogsDir: '/l',
    log,
    disk,
  };
  return {
    calls,
    errors,
    lists,
    disk,
    runtimeFake,
    log,
    deps,
    /** A collector over these fakes, its passes run by the test (no loop). */
    collector: (over: Partial<CollectorDeps> = {}) => startCollector({ ...deps, ...over }, { loop: false }),
    setRuntime: (p: PodRuntimeStatus[]) => {
      runtime = new Map(p.map((x) => [x.uid, x]));
    },
  };
}

const orphan = rt('o', [ctr('c1', 'main', 'running', '9', 1, 's1'), ctr('c0', 'main', 'exited', '5', 0, 's1')], [sb('s1', 1, true)]);

test('collector: an orphan is stopped, then removed; its dirs go on the next pass', async () => {
  const f = fakes([orphan], { owned: ['o'], logDirs: ['ns_web_o', 'ns_other_x'] });
  const counts: Record<string, number> = {};
  let orphans = 0;
  const c = f.collector({
    observe: {
      removed: (k, n) => {
        counts[k] = (counts[k] ?? 0) + n;
      },
      orphan: () => orphans++,
    },
    podDirRemoved: (uid) => f.calls.push(`podDirRemoved ${uid}`),
  });
  await c.housekeeping();
  assert.deepEqual(f.calls, ['stopContainer c1 2', 'stopSandbox s1', 'removeContainer c1', 'removeContainer c0', 'removeSandbox s1']);
  f.calls.length = 0;
  f.setRuntime([]);
  await c.housekeeping();
  assert.deepEqual(f.calls, ['removePodCgroups o', 'removeLogDir ns_web_o', 'removePodDir o', 'podDirRemoved o']);
  assert.deepEqual(counts, { container: 2, sandbox: 1, pod_log_dir: 1, pod_dir: 1 });
  assert.equal(orphans, 1);
  assert.deepEqual(f.errors, []);
});

test('collector: nothing is killed before the sources are ready, nor what a worker took over meanwhile', async () => {
  const f = fakes([orphan], { owned: ['o'] });
  let ready = false;
  const c = f.collector({ sourcesReady: () => ready });
  await c.housekeeping();
  assert.deepEqual(f.calls, []);
  // Unknown when the plan is made, known by the time it would be executed.
  ready = true;
  let reads = 0;
  const c2 = f.collector({ known: () => (reads++ ? new Map<string, KnownPod>([['o', live]]) : new Map()) });
  await c2.housekeeping();
  assert.deepEqual(f.calls, []);
});

test("collector: housekeeping reads a list of the runtime up to the PLEG's period old, GC a fresh one", async () => {
  const f = fakes([]);
  const c = f.collector();
  await c.housekeeping();
  await c.collect();
  assert.deepEqual(f.lists, [HOUSEKEEPING_LIST_AGE_MS, undefined]);
});

test('collector: a failed item is logged and backs off alone', async () => {
  const pods = [rt('p', [ctr('a2', 'main', 'exited', '9', 2), ctr('a1', 'main', 'exited', '5', 1), ctr('a0', 'main', 'exited', '3', 0)])];
  const f = fakes(pods, { failRemove: 'a1' });
  const c = f.collector({ known: () => new Map([['p', live]]) });
  await c.collect();
  assert.deepEqual(f.calls, ['removeContainer a0', 'removeContainer a1'], 'oldest first, as upstream');
  assert.deepEqual(f.errors, ['Failed to remove dead container']);
  f.calls.length = 0;
  await c.collect();
  assert.deepEqual(f.calls, ['removeContainer a0'], 'a1 waits out its back-off; the others go on');
});

test('collector: GC removes the containers first, then stops each sandbox before removing it', async () => {
  const pods = [rt('p', [ctr('x', 'main', 'exited', '5', 0, 's0')], [sb('s1', 1, true), sb('s0', 0, false)])];
  const f = fakes(pods);
  const c = f.collector({ known: () => new Map([['p', { state: 'terminated', deleted: true }]]) });
  await c.collect();
  assert.deepEqual(f.calls, ['removeContainer x', 'stopSandbox s1', 'removeSandbox s1', 'stopSandbox s0', 'removeSandbox s0']);
});

test('collector: the loop runs housekeeping and GC, and stops', async () => {
  const f = fakes([]);
  const loops: string[] = [];
  const c = startCollector({
    ...f.deps,
    housekeepingMs: 10,
    gcMs: 1000,
    observe: { duration: (loop) => loops.push(loop) },
  });
  await new Promise((r) => setTimeout(r, 60));
  c.stop();
  assert.equal(loops[0], 'housekeeping');
  assert.equal(loops.filter((l) => l === 'container_gc').length, 1, 'GC once a period');
  assert.ok(loops.filter((l) => l === 'housekeeping').length >= 2);
});

test('collector: a gone pod with volumes still mounted has them unmounted, then its dir removed', async () => {
  const f = fakes([], { owned: ['o'] });
  const mounted = new Set(['o']);
  const disk: GCDisk = {
    ...f.disk,
    mountedPods: () => new Set(mounted),
    unmountPodVolumes: async (root, uid) => {
      f.calls.push(`unmountPodVolumes ${root} ${uid}`);
      mounted.delete(uid);
      return 1;
    },
  };
  const sweeps: [number, number][] = [];
  const cleaned: string[] = [];
  const c = f.collector({
    disk,
    observe: { orphanPodDirs: (found, notCleaned) => sweeps.push([found, notCleaned]) },
    volumesCleaned: (uid, ok) => cleaned.push(`${uid} ${ok}`),
  });
  await c.housekeeping();
  assert.deepEqual(f.calls, ['unmountPodVolumes /r o']);
  assert.deepEqual(cleaned, ['o true'], 'its volumes told cleaned once unmounted (reconstruct.ts counts what failed reconstruction)');
  await c.housekeeping();
  assert.deepEqual(f.calls, ['unmountPodVolumes /r o', 'removePodCgroups o', 'removePodDir o']);
  await c.housekeeping();
  // kubelet_orphan_pod_cleaned_volumes(_errors): found with its volumes mounted, then cleaned, then none.
  assert.deepEqual(sweeps, [
    [1, 1],
    [1, 0],
    [0, 0],
  ]);
});

test('collector: a gone pod whose cgroups still hold a process (killed, still exiting) keeps its dirs until they are gone', async () => {
  const f = fakes([], { owned: ['o'], logDirs: ['ns_web_o'], busyCgroupPasses: 1 });
  const sweeps: [number, number][] = [];
  const c = f.collector({ observe: { orphanPodDirs: (found, notCleaned) => sweeps.push([found, notCleaned]) } });
  await c.housekeeping();
  assert.deepEqual(f.calls, ['removePodCgroups o']);
  await c.housekeeping();
  assert.deepEqual(f.calls, ['removePodCgroups o', 'removePodCgroups o', 'removeLogDir ns_web_o', 'removePodDir o']);
  assert.deepEqual(f.errors, []);
  assert.deepEqual(
    sweeps,
    [
      [1, 1],
      [1, 0],
    ],
    'not cleaned while its cgroups wait',
  );
});

test("collector: mounts are looked up only when a pod dir is no pod's", async () => {
  const f = fakes([], { owned: ['a', 'gone'] });
  let reads = 0;
  const disk: GCDisk = {
    ...f.disk,
    mountedPods: () => {
      reads++;
      return new Set();
    },
  };
  const known = new Map([['a', {} as KnownPod]]);
  await f.collector({ disk, known: () => new Map([...known, ['gone', {} as KnownPod]]) }).housekeeping();
  assert.equal(reads, 0, 'every pod dir is a known pod: mountinfo is not read');
  await f.collector({ disk, known: () => known }).housekeeping();
  assert.equal(reads, 1, 'once a pass for a pod dir that no pod holds');
  assert.deepEqual(f.calls, ['removePodCgroups gone', 'removePodDir gone']);
});

test('collector: a gone pod with nothing mounted has its volumes released (a flexVolume driver unmounts a plain dir) before its dir goes, or keeps it', async () => {
  const f = fakes([], { owned: ['o'] });
  let fail = true;
  const releaseUnmountedVolumes = async (uid: string) => {
    f.calls.push(`releaseUnmountedVolumes ${uid}`);
    if (fail) throw new Error('flexVolume v of driver k8s/dummy cannot be torn down');
  };
  const cleaned: string[] = [];
  const volumesCleaned = (uid: string, ok: boolean) => cleaned.push(`${uid} ${ok}`);
  await f.collector({ releaseUnmountedVolumes, volumesCleaned }).housekeeping();
  assert.deepEqual(f.calls, ['removePodCgroups o', 'releaseUnmountedVolumes o']);
  assert.deepEqual(f.errors, ['Failed to remove orphaned pod directories']);
  fail = false;
  await f.collector({ releaseUnmountedVolumes, volumesCleaned }).housekeeping();
  assert.deepEqual(f.calls.slice(2), ['removePodCgroups o', 'releaseUnmountedVolumes o', 'removePodDir o']);
  assert.deepEqual(cleaned, ['o false', 'o true'], 'each try told: reconstruct.ts counts the first');
});
