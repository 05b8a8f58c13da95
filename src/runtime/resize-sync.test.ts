// PodSyncer and in-place resize: what is allocated, what reaches UpdateContainerResources, and
// the resize state pod status is made from. CRI and the runtime view are fakes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { ImagePuller } from '../images/puller.ts';
import type { Logger } from '../log/log.ts';
import { PodResizer, type PodCgroupIO, type ResizeRuntime } from '../resize/pod-resizer.ts';
import type { PodRuntime } from './pod-runtime.ts';
import { PodSyncer } from '../pods/sync-pod.ts';
import { containerHash } from './hash.ts';
import type { PodRuntimeStatus } from '../container/types.ts';
import { type CFS, linuxResources, type LinuxResources } from '../resources/linux-resources.ts';
import { podCgroupLimits, type PodCgroupLimits } from '../resources/pod-cgroup.ts';
import { podLimitsForContainers } from '../resources/pod-resources.ts';
import { type CgroupLayout, cgroupLayout } from '../resources/cgroup-layout.ts';

const res = (cpu: string, memory: string) => ({ requests: { cpu, memory }, limits: { cpu, memory } });
const ctr = (resources: Container['resources'], resizePolicy?: Container['resizePolicy']): Container => ({
  name: 'c1',
  image: 'busybox',
  resources,
  ...(resizePolicy ? { resizePolicy } : {}),
});
const pod = (c: Container, generation = 1): Pod => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'u1', generation },
  spec: { containers: [c] },
});

function syncer(
  o: {
    allocatable?: Record<string, string>;
    others?: Pod[];
    failUpdate?: boolean;
    /** The container as it runs, and the cgroup values it runs with (default: from its own resources). */
    first?: Container;
    linux?: LinuxResources;
    podCgroupIO?: PodCgroupIO;
    /** Pod cgroup writes and CRI updates, in order. */
    ops?: string[];
    /** The node's cpuCFSQuota and cpuCFSQuotaPeriod. */
    cfs?: CFS;
    /** The node's cgroup layout (cgroupsPerQOS false: no pod cgroups). */
    cgroups?: CgroupLayout;
    cpuManagerPolicy?: string;
    /** The pod manager's pod of a UID, for a retry of deferred resizes. */
    podOf?: (uid: string) => Pod | undefined;
  } = {},
) {
  /** What the metrics saw: each resize actuated (success or not), each infeasible one by its detail. */
  const metrics: string[] = [];
  const updates: unknown[] = [];
  const killed: string[] = [];
  const events: string[] = [];
  const first = o.first ?? ctr(res('100m', '64Mi'));
  const status: PodRuntimeStatus = {
    uid: 'u1',
    sandboxes: [{ id: 'sb1', attempt: 0, ready: true, ip: '10.88.0.7', createdAtNs: '1' }],
    containers: [
      {
        id: 'c1',
        sandboxId: 'sb1',
        name: 'c1',
        attempt: 0,
        phase: 'running',
        image: 'busybox',
        imageRef: 'x',
        hash: containerHash(first),
        createdAtNs: '1',
        linux: o.linux ?? linuxResources(first.resources, undefined, o.cfs),
      },
    ],
  };
  const cri = {
    updateContainerResources: async (r: unknown) => {
      if (o.failUpdate) throw new Error('boom');
      updates.push(r);
      const l = (r as { containerId: string; linux: LinuxResources }).linux;
      o.ops?.push(`container ${l.cpuShares} ${l.cpuQuota} ${l.memoryLimitInBytes}`);
      return {};
    },
    stopContainer: async (r: { containerId: string }) => {
      killed.push(r.containerId);
      return {};
    },
    createContainer: async () => ({ containerId: 'c2' }),
    startContainer: async () => ({}),
  } as unknown as PodRuntime & ResizeRuntime['cri'];
  const noop = () => {};
  const view = {
    pod: async () => status,
    current: async () => status,
    changed: noop,
    stopping: (_uid: string, stop: () => Promise<void>) => stop(),
    sandboxStatus: async () => status.sandboxes[0]!,
    noteResources: noop,
  };
  const recorder = {
    event: (_o: unknown, type: string, reason: string) => {
      events.push(`${type} ${reason}`);
    },
  };
  const log = { info: noop, warn: noop, error: noop, v: noop } as unknown as Logger;
  const resizer = new PodResizer({
    cri,
    view,
    events: recorder,
    log,
    allocatable: () => o.allocatable,
    activePods: () => o.others ?? [],
    infeasible: (detail) => metrics.push(`infeasible ${detail}`),
    deferredAccepted: (trigger) => metrics.push(`deferred accepted on ${trigger}`),
    wake: (uid) => metrics.push(`wake ${uid}`),
    ...(o.podOf ? { podOf: o.podOf } : {}),
    ...(o.cpuManagerPolicy ? { cpuManagerPolicy: o.cpuManagerPolicy } : {}),
    ...(o.podCgroupIO ? { podCgroupIO: o.podCgroupIO } : {}),
    ...(o.cfs ? { cfs: o.cfs } : {}),
    ...(o.cgroups ? { cgroups: o.cgroups } : {}),
  });
  const s = new PodSyncer({
    runtime: cri,
    view,
    images: { ensure: async () => ({}) } as unknown as ImagePuller,
    events: recorder,
    log,
    node: {
      podLogsDir: '/tmp',
      clusterDomain: 'cluster.local',
      clusterDNS: [],
      hostDNS: { servers: [], searches: [], options: [] },
      ...(o.cfs ? { cfs: o.cfs } : {}),
      ...(o.cgroups ? { cgroups: o.cgroups } : {}),
    },
    observe: { podResized: (ms, success) => metrics.push(`resized ${success} ${ms >= 0}`) },
    resizer,
  });
  return { s, resizer, updates, killed, events, first, metrics };
}

test('resize: accepted, applied in place with UpdateContainerResources, done', async () => {
  const { s, updates, events, first, metrics } = syncer({ allocatable: { cpu: '2', memory: '1Gi' } });
  await s.syncPod(pod(first));
  assert.equal(updates.length, 0, 'nothing to do while the spec is what runs');
  const r = await s.syncPod(pod(ctr(res('200m', '128Mi')), 2));
  assert.deepEqual(updates, [
    { containerId: 'c1', linux: { cpuShares: 204, cpuPeriod: 100000, cpuQuota: 20000, memoryLimitInBytes: 128 * 2 ** 20 } },
  ]);
  assert.deepEqual(r.runtime.resize?.allocated, { c1: res('200m', '128Mi') });
  assert.deepEqual(r.runtime.resize?.actual, { c1: res('200m', '128Mi') });
  assert.equal(r.runtime.resize?.pending, undefined);
  assert.equal(r.runtime.resize?.inProgress, undefined);
  assert.deepEqual(events, ['Normal ResizeStarted', 'Normal ResizeCompleted']);
  await s.syncPod(pod(ctr(res('200m', '128Mi')), 2));
  assert.deepEqual(metrics, ['resized true true'], 'one resize actuated, timed once');
  assert.equal(updates.length, 1, 'applied once');
});

test('resize with CFS quota off (cpuCFSQuota: false): neither quota nor period is sent, and the cpu limit shows as allocated', async () => {
  const cfs = { quota: false, periodUs: 100_000 };
  const { s, updates, first } = syncer({ allocatable: { cpu: '2', memory: '1Gi' }, cfs });
  await s.syncPod(pod(first));
  const r = await s.syncPod(pod(ctr(res('200m', '128Mi')), 2));
  assert.deepEqual(updates, [
    { containerId: 'c1', linux: { cpuShares: 204, cpuPeriod: 0, cpuQuota: 0, memoryLimitInBytes: 128 * 2 ** 20 } },
  ]);
  assert.deepEqual(r.runtime.resize?.actual, { c1: res('200m', '128Mi') });
});

test('resize at a 50 ms CFS period (cpuCFSQuotaPeriod): the quota of the new limit in that period', async () => {
  const { s, updates, first } = syncer({ allocatable: { cpu: '2', memory: '1Gi' }, cfs: { quota: true, periodUs: 50_000 } });
  await s.syncPod(pod(first));
  await s.syncPod(pod(ctr(res('200m', '128Mi')), 2));
  assert.deepEqual(updates, [
    { containerId: 'c1', linux: { cpuShares: 204, cpuPeriod: 50_000, cpuQuota: 10_000, memoryLimitInBytes: 128 * 2 ** 20 } },
  ]);
});

test('resize: more than the node has is Infeasible, not applied', async () => {
  const { s, updates, events, first } = syncer({ allocatable: { cpu: '2', memory: '1Gi' } });
  await s.syncPod(pod(first));
  const r = await s.syncPod(pod(ctr(res('4', '64Mi')), 2));
  assert.equal(updates.length, 0);
  assert.deepEqual(r.runtime.resize?.pending, {
    reason: 'Infeasible',
    message: "Node didn't have enough capacity: cpu, requested: 4000, capacity: 2000",
    generation: 2,
  });
  assert.deepEqual(r.runtime.resize?.allocated, { c1: res('100m', '64Mi') });
  assert.deepEqual(events, ['Warning ResizeInfeasible']);
  await s.syncPod(pod(ctr(res('4', '64Mi')), 2));
  assert.deepEqual(events, ['Warning ResizeInfeasible'], 'one event per reason and generation');
});

test("resize: a Guaranteed pod's cpu under the static CPU manager policy is Infeasible, counted once by its detail", async () => {
  const g = (cpu: string) => ctr({ requests: { cpu, memory: '64Mi' }, limits: { cpu, memory: '64Mi' } });
  const { s, metrics } = syncer({ allocatable: { cpu: '2', memory: '1Gi' }, first: g('1'), cpuManagerPolicy: 'static' });
  await s.syncPod(pod(g('1')));
  const r = await s.syncPod(pod(g('2'), 2));
  assert.equal(r.runtime.resize?.pending?.reason, 'Infeasible');
  await s.syncPod(pod(g('2'), 2));
  assert.deepEqual(metrics, ['infeasible guaranteed_pod_cpu_manager_static_policy']);
});

test('resize: not next to the other pods is Deferred; a sync does not try it again, a retry after the other pod went accepts it', async () => {
  const other: Pod = { metadata: { uid: 'o' }, spec: { containers: [ctr(res('1500m', '64Mi'))] } };
  const others = [other];
  const resized = pod(ctr(res('1', '64Mi')), 2);
  const { s, resizer, first, updates, metrics } = syncer({ allocatable: { cpu: '2', memory: '1Gi' }, others, podOf: () => resized });
  await s.syncPod(pod(first));
  resizer.podChanged(resized, 'pod_updated');
  assert.deepEqual(metrics, ['wake u1'], 'tried when it came: its verdict is new');
  const r = await s.syncPod(resized);
  assert.equal(r.runtime.resize?.pending?.reason, 'Deferred');
  assert.equal(r.requeueAfterMs, undefined, 'no retry of its own');
  others.pop();
  assert.equal((await s.syncPod(resized)).runtime.resize?.pending?.reason, 'Deferred', 'the other pod gone, a sync alone still waits');
  resizer.retryPendingResizes('pods_removed');
  assert.deepEqual(metrics, ['wake u1', 'deferred accepted on pods_removed', 'wake u1']);
  await s.syncPod(resized);
  assert.equal(updates.length, 1, 'then applied');
  resizer.stop();
});

test('resize: a failed update leaves PodResizeInProgress with the error', async () => {
  const { s, first, metrics } = syncer({ allocatable: { cpu: '2', memory: '1Gi' }, failUpdate: true });
  await s.syncPod(pod(first));
  const r = await s.syncPod(pod(ctr(res('200m', '64Mi')), 2));
  assert.deepEqual(r.runtime.resize?.inProgress, { reason: 'Error', message: 'failed to resize container c1: boom', generation: 2 });
  assert.deepEqual(metrics, ['resized false true'], 'timed as a failure');
  assert.deepEqual(r.runtime.resize?.actual, { c1: res('100m', '64Mi') }, 'still runs with the old resources');
});

test('resize: resizePolicy RestartContainer restarts the container instead', async () => {
  const restart = [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }];
  const { s, updates, killed } = syncer({ allocatable: { cpu: '2', memory: '1Gi' } });
  await s.syncPod(pod(ctr(res('100m', '64Mi'), restart)));
  await s.syncPod(pod(ctr(res('100m', '128Mi'), restart), 2));
  assert.deepEqual([updates.length, killed], [0, ['c1']]);
});

// Pod-level resources (InPlacePodLevelResourcesVerticalScaling): spec.resources resized in place.
const plr = (cpuReq: string, cpuLim: string, memReq: string, memLim: string) => ({
  requests: { cpu: cpuReq, memory: memReq },
  limits: { cpu: cpuLim, memory: memLim },
});
const plrPod = (c: Container, resources: Container['resources'], generation = 1): Pod => {
  const p = pod(c, generation);
  return { ...p, spec: { ...p.spec!, resources } as Pod['spec'] };
};
/** A pod cgroup in memory: writes are logged as "pod <shares> <quota> <memory>". */
function fakePodCgroup(initial: PodCgroupLimits, ops: string[], usage?: number): PodCgroupIO & { now: () => PodCgroupLimits } {
  let cur = initial;
  return {
    read: () => cur,
    update: (_path, l) => {
      ops.push(`pod ${l.cpuShares} ${l.cpuQuotaUs ?? -1} ${l.memoryLimitBytes ?? -1}`);
      cur = l;
    },
    memoryUsage: () => usage,
    now: () => cur,
  };
}
/** A syncer running c1 in a pod with pod-level resources, its cgroups as the kubelet made them. */
function plrSyncer(c: Container, resources: Container['resources'], usage?: number, cgroups?: CgroupLayout) {
  const ops: string[] = [];
  const p = plrPod(c, resources);
  const cgroup = fakePodCgroup(podCgroupLimits(p), ops, usage);
  const t = syncer({
    allocatable: { cpu: '2', memory: '1Gi' },
    first: c,
    linux: linuxResources(c.resources, podLimitsForContainers(p)),
    podCgroupIO: cgroup,
    ops,
    ...(cgroups ? { cgroups } : {}),
  });
  return { ...t, ops, cgroup };
}
const MiB = 2 ** 20;

test('pod-level resize: cpu limit up, a container without limits: the pod cgroup grows first, then the container', async () => {
  const c = ctr(undefined);
  const { s, ops, events } = plrSyncer(c, plr('100m', '200m', '64Mi', '128Mi'));
  await s.syncPod(plrPod(c, plr('100m', '200m', '64Mi', '128Mi')));
  assert.deepEqual(ops, [], 'nothing while the spec is what runs');
  const r = await s.syncPod(plrPod(c, plr('100m', '300m', '64Mi', '128Mi'), 2));
  assert.deepEqual(ops, [`pod 102 30000 ${128 * MiB}`, `container 307 30000 ${128 * MiB}`]);
  assert.deepEqual(r.runtime.resize?.allocatedPod, plr('100m', '300m', '64Mi', '128Mi'));
  assert.deepEqual(r.runtime.resize?.podCgroup, { cpuShares: 102, cpuQuotaUs: 30000, memoryLimitBytes: 128 * MiB });
  assert.deepEqual(r.runtime.resize?.actual, { c1: {} }, 'the container shows only its own resources');
  assert.equal(r.runtime.resize?.inProgress, undefined);
  assert.deepEqual(events, ['Normal ResizeStarted', 'Normal ResizeCompleted']);
  await s.syncPod(plrPod(c, plr('100m', '300m', '64Mi', '128Mi'), 2));
  assert.equal(ops.length, 2, 'applied once');
});

// cgroupsPerQOS false: podContainerManagerNoop's Get/SetPodCgroupConfig do nothing (upstream's
// doPodResizeAction then dereferences their nil config; here the containers still resize).
test('pod-level resize without cgroupsPerQOS: no pod cgroup read or written, the container resized alone', async () => {
  const c = ctr(undefined);
  const { s, ops, events } = plrSyncer(c, plr('100m', '200m', '64Mi', '128Mi'), 100 * MiB, cgroupLayout('cgroupfs', '/', false));
  await s.syncPod(plrPod(c, plr('100m', '200m', '64Mi', '128Mi')));
  // The container's usage (its cgroup where containerd puts it) still refuses a lower limit; the pod has none to check.
  const refused = await s.syncPod(plrPod(c, plr('100m', '300m', '64Mi', '96Mi'), 2));
  assert.deepEqual(ops, []);
  assert.equal(
    refused.runtime.resize?.inProgress?.message,
    'cannot decrease memory limits: attempting to set container "c1" memory limit (100663296) below current usage (104857600)',
  );
  const r = await s.syncPod(plrPod(c, plr('100m', '300m', '64Mi', '256Mi'), 3));
  assert.deepEqual(ops, [`container 307 30000 ${256 * MiB}`]);
  assert.equal(r.runtime.resize?.podCgroup, undefined);
  assert.equal(r.runtime.resize?.inProgress, undefined);
  assert.deepEqual(events, ['Normal ResizeStarted', 'Warning ResizeError', 'Normal ResizeStarted', 'Normal ResizeCompleted']);
});

test('pod-level resize: cpu limit down: the container first, then the pod cgroup shrinks', async () => {
  const c = ctr(undefined);
  const { s, ops } = plrSyncer(c, plr('100m', '200m', '64Mi', '128Mi'));
  await s.syncPod(plrPod(c, plr('100m', '200m', '64Mi', '128Mi')));
  const r = await s.syncPod(plrPod(c, plr('100m', '100m', '64Mi', '128Mi'), 2));
  assert.deepEqual(ops, [`container 102 10000 ${128 * MiB}`, `pod 102 10000 ${128 * MiB}`]);
  assert.equal(r.runtime.resize?.inProgress, undefined);
});

test('pod-level resize: cpu up and memory down move each in its own direction', async () => {
  const c = ctr(undefined);
  const { s, ops } = plrSyncer(c, plr('100m', '200m', '64Mi', '128Mi'), 10 * MiB);
  await s.syncPod(plrPod(c, plr('100m', '200m', '64Mi', '128Mi')));
  await s.syncPod(plrPod(c, plr('100m', '300m', '64Mi', '96Mi'), 2));
  assert.deepEqual(ops, [`pod 102 30000 ${128 * MiB}`, `container 307 30000 ${96 * MiB}`, `pod 102 30000 ${96 * MiB}`]);
});

test('pod-level resize: containers with their own limits are left alone, only the pod cgroup changes', async () => {
  const c = ctr(res('100m', '64Mi'));
  const { s, ops, updates } = plrSyncer(c, plr('100m', '200m', '64Mi', '128Mi'));
  await s.syncPod(plrPod(c, plr('100m', '200m', '64Mi', '128Mi')));
  const r = await s.syncPod(plrPod(c, plr('200m', '200m', '64Mi', '128Mi'), 2));
  assert.deepEqual(ops, [`pod 204 20000 ${128 * MiB}`]);
  assert.equal(updates.length, 0);
  assert.equal(r.runtime.resize?.inProgress, undefined);
});

test('pod-level resize: a memory limit below usage is refused, PodResizeInProgress with the error', async () => {
  const c = ctr(undefined);
  const { s, ops } = plrSyncer(c, plr('100m', '200m', '64Mi', '128Mi'), 100 * MiB);
  await s.syncPod(plrPod(c, plr('100m', '200m', '64Mi', '128Mi')));
  const r = await s.syncPod(plrPod(c, plr('100m', '200m', '32Mi', '32Mi'), 2));
  assert.deepEqual(ops, [], 'neither the pod cgroup nor the container changes');
  assert.deepEqual(r.runtime.resize?.inProgress, {
    reason: 'Error',
    message:
      'cannot decrease memory limits: [attempting to set pod memory limit (33554432) below current usage (104857600), ' +
      'attempting to set container "c1" memory limit (33554432) below current usage (104857600)]',
    generation: 2,
  });
  assert.equal(r.runtime.resize?.pending, undefined, 'allocated, not pending');
  // Back to what runs: nothing to do, and the error is gone.
  const back = await s.syncPod(plrPod(c, plr('100m', '200m', '64Mi', '128Mi'), 3));
  assert.deepEqual(ops, []);
  assert.equal(back.runtime.resize?.inProgress, undefined);
});

test('pod-level resize: resizePolicy RestartContainer restarts a container that gets the pod limit', async () => {
  const c = ctr(undefined, [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }]);
  const { s, ops, updates, killed } = plrSyncer(c, plr('100m', '200m', '64Mi', '128Mi'));
  await s.syncPod(plrPod(c, plr('100m', '200m', '64Mi', '128Mi')));
  await s.syncPod(plrPod(c, plr('100m', '300m', '64Mi', '128Mi'), 2));
  assert.deepEqual([updates.length, killed, ops], [0, ['c1'], [`pod 102 30000 ${128 * MiB}`]]);
});

test('pod-level resize: adding spec.resources to a running pod resizes its pod cgroup', async () => {
  const c = ctr({ requests: { cpu: '2m' }, limits: { cpu: '10m' } });
  const ops: string[] = [];
  const cgroup = fakePodCgroup(podCgroupLimits(pod(c)), ops);
  const { s } = syncer({ allocatable: { cpu: '2', memory: '1Gi' }, first: c, podCgroupIO: cgroup, ops });
  await s.syncPod(pod(c));
  const r = await s.syncPod(plrPod(c, { requests: { cpu: '5m' }, limits: { cpu: '25m' } }, 2));
  assert.deepEqual(ops, ['pod 5 2500 -1']);
  assert.deepEqual(r.runtime.resize?.allocatedPod, { requests: { cpu: '5m' }, limits: { cpu: '25m' } });
  assert.equal(r.runtime.resize?.inProgress, undefined);
});
