// PodSyncer and in-place resize: what is allocated, what reaches UpdateContainerResources, and
// the resize state pod status is made from. CRI and the runtime view are fakes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { ImagePuller } from '../images/puller.ts';
import type { Logger } from '../log/log.ts';
import { PodResizer, type ResizeRuntime } from '../resize/pod-resizer.ts';
import type { PodRuntime } from './pod-runtime.ts';
import { PodSyncer } from './sync.ts';
import { containerHash } from './hash.ts';
import type { PodRuntimeStatus } from './types.ts';
import { linuxResources } from '../resources/linux-resources.ts';

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

function syncer(o: { allocatable?: Record<string, string>; others?: Pod[]; failUpdate?: boolean } = {}) {
  const updates: unknown[] = [];
  const killed: string[] = [];
  const events: string[] = [];
  const first = ctr(res('100m', '64Mi'));
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
        linux: linuxResources(first.resources),
      },
    ],
  };
  const cri = {
    updateContainerResources: async (r: unknown) => {
      if (o.failUpdate) throw new Error('boom');
      updates.push(r);
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
  const view = { pod: async () => status, noteResources: noop };
  const recorder = {
    event: (_o: unknown, type: string, reason: string) => {
      events.push(`${type} ${reason}`);
    },
  };
  const log = { info: noop, warn: noop, error: noop, v: noop } as unknown as Logger;
  const s = new PodSyncer({
    runtime: cri,
    view,
    images: { ensure: async () => ({}) } as unknown as ImagePuller,
    events: recorder,
    log,
    node: { podLogsDir: '/tmp', clusterDomain: 'cluster.local', clusterDNS: [], hostDNS: { servers: [], searches: [], options: [] } },
    resizer: new PodResizer({ cri, view, events: recorder, log, allocatable: () => o.allocatable, activePods: () => o.others ?? [] }),
  });
  return { s, updates, killed, events, first };
}

test('resize: accepted, applied in place with UpdateContainerResources, done', async () => {
  const { s, updates, events, first } = syncer({ allocatable: { cpu: '2', memory: '1Gi' } });
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
  assert.equal(updates.length, 1, 'applied once');
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

test('resize: not next to the other pods is Deferred, and retried soon', async () => {
  const other: Pod = { metadata: { uid: 'o' }, spec: { containers: [ctr(res('1500m', '64Mi'))] } };
  const { s, first } = syncer({ allocatable: { cpu: '2', memory: '1Gi' }, others: [other] });
  await s.syncPod(pod(first));
  const r = await s.syncPod(pod(ctr(res('1', '64Mi')), 2));
  assert.equal(r.runtime.resize?.pending?.reason, 'Deferred');
  assert.equal(r.requeueAfterMs, 10_000);
});

test('resize: a failed update leaves PodResizeInProgress with the error', async () => {
  const { s, first } = syncer({ allocatable: { cpu: '2', memory: '1Gi' }, failUpdate: true });
  await s.syncPod(pod(first));
  const r = await s.syncPod(pod(ctr(res('200m', '64Mi')), 2));
  assert.deepEqual(r.runtime.resize?.inProgress, { reason: 'Error', message: 'failed to resize container c1: boom', generation: 2 });
  assert.deepEqual(r.runtime.resize?.actual, { c1: res('100m', '64Mi') }, 'still runs with the old resources');
});

test('resize: resizePolicy RestartContainer restarts the container instead', async () => {
  const restart = [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }];
  const { s, updates, killed } = syncer({ allocatable: { cpu: '2', memory: '1Gi' } });
  await s.syncPod(pod(ctr(res('100m', '64Mi'), restart)));
  await s.syncPod(pod(ctr(res('100m', '128Mi'), restart), 2));
  assert.deepEqual([updates.length, killed], [0, ['c1']]);
});
