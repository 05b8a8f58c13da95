import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import {
  admissionMessage,
  byNuma,
  capacity,
  deviceRunOptions,
  devicesToAllocate,
  ENDPOINT_STOP_GRACE_MS,
  planPodDevices,
  type PodDevices,
  type ResourceState,
} from './allocation.ts';
import type { ContainerAllocateResponse__Output } from './generated/v1beta1/ContainerAllocateResponse.ts';

const R = 'example.com/resource';
const state = (healthy: string[], unhealthy: string[] = [], stoppedAtMs?: number): ResourceState => ({
  devices: [
    ...healthy.map((id) => ({ id, healthy: true, numaNodes: [] })),
    ...unhealthy.map((id) => ({ id, healthy: false, numaNodes: [] })),
  ],
  stoppedAtMs,
});

test('capacity: all devices, allocatable the healthy ones, deleted after the grace', () => {
  const now = 10 * ENDPOINT_STOP_GRACE_MS;
  const resources = new Map([
    ['a.io/x', state(['1', '2'], ['3'])],
    ['a.io/gone-recently', state([], ['1'], now - 1000)],
    ['a.io/gone', state([], ['1'], now - ENDPOINT_STOP_GRACE_MS - 1)],
  ]);
  assert.deepEqual(capacity(resources, now), {
    capacity: { 'a.io/x': 3, 'a.io/gone-recently': 1 },
    allocatable: { 'a.io/x': 2, 'a.io/gone-recently': 0 },
    deleted: ['a.io/gone'],
  });
});

test('devicesToAllocate as upstream', () => {
  const base = { resource: R, reusable: new Set<string>(), inUse: new Set<string>() };
  const cases: [string, Parameters<typeof devicesToAllocate>[0], ReturnType<typeof devicesToAllocate>][] = [
    ['healthy available in order', { ...base, required: 2, state: state(['a', 'b', 'c']) }, { devices: ['a', 'b'] }],
    ['skips in use and unhealthy', { ...base, required: 1, state: state(['a', 'b'], ['c']), inUse: new Set(['a']) }, { devices: ['b'] }],
    [
      'reused first',
      { ...base, required: 2, state: state(['a', 'b', 'c']), reusable: new Set(['c']), inUse: new Set(['c']) },
      { devices: ['c', 'a'] },
    ],
    ['preferred', { ...base, required: 1, state: state(['a', 'b', 'c']), preferred: ['c'] }, { devices: ['c'] }],
    ['already has them', { ...base, required: 1, state: state(['a']), existing: ['a'] }, { devices: [] }],
    ['unregistered', { ...base, required: 1 }, { error: `cannot allocate unregistered device ${R}` }],
    [
      'none healthy',
      { ...base, required: 1, state: state([], ['a']) },
      { error: `no healthy devices present; cannot allocate unhealthy devices ${R}` },
    ],
    [
      'not enough',
      { ...base, required: 3, state: state(['a', 'b']) },
      { error: `requested number of devices unavailable for ${R}. Requested: 3, Available: 2` },
    ],
    [
      'had ones gone unhealthy',
      { ...base, required: 1, state: state(['b'], ['a']), existing: ['a'] },
      { error: `previously allocated devices are no longer healthy; cannot allocate unhealthy devices ${R}` },
    ],
  ];
  for (const [name, input, want] of cases) assert.deepEqual(devicesToAllocate(input), want, name);
  assert.equal(
    admissionMessage('no healthy devices present; cannot allocate unhealthy devices x'),
    'Allocate failed due to no healthy devices present; cannot allocate unhealthy devices x, which is unexpected',
  );
});

const c = (name: string, n: number, extra: Partial<Container> = {}): Container => ({
  name,
  resources: { limits: { [R]: String(n) } },
  ...extra,
});
const pod = (uid: string, containers: Container[], initContainers: Container[] = []): Pod => ({
  metadata: { uid, name: uid, namespace: 'ns' },
  spec: { containers, initContainers },
});

test('planPodDevices: init containers reuse, sidecars keep theirs, others in use', () => {
  const resources = new Map([[R, state(['d0', 'd1', 'd2', 'd3'])]]);
  const isDeviceResource = (n: string) => n === R;
  const used: PodDevices = new Map([['other', new Map([['c', new Map([[R, { byNuma: { '-1': ['d0'] } }]])]])]]);
  const plan = (p: Pod, pods: PodDevices = used) => planPodDevices(p, { resources, pods, isDeviceResource });
  assert.deepEqual(plan(pod('u', [c('app', 2)], [c('init', 1)])), {
    assign: [
      ['init', R, ['d1']],
      ['app', R, ['d1', 'd2']],
    ],
  });
  assert.deepEqual(plan(pod('u', [c('app', 1)], [c('side', 1, { restartPolicy: 'Always' })])), {
    assign: [
      ['side', R, ['d1']],
      ['app', R, ['d2']],
    ],
  });
  assert.deepEqual(plan(pod('u', [c('a', 2), c('b', 2)])), {
    error: `requested number of devices unavailable for ${R}. Requested: 2, Available: 1`,
  });
  // Admitted again (a restart): what it has stands, nothing new.
  const mine: PodDevices = new Map([['u', new Map([['a', new Map([[R, { byNuma: { '-1': ['d3'] } }]])]])]]);
  assert.deepEqual(plan(pod('u', [c('a', 1)]), mine), { assign: [] });
  // A kubelet restart before the plugin registered again (its devices not healthy yet): a
  // container the runtime runs keeps what the checkpoint says, or needs nothing, while the
  // sources are not ready; one not running is refused as upstream.
  const restarted = new Map([[R, state([], ['d0', 'd1', 'd2', 'd3'], 0)]]);
  const running = (uid: string, name: string) => uid === 'u' && name === 'a';
  const afterRestart = (p: Pod, pods: PodDevices, runningAtStart?: typeof running) =>
    planPodDevices(p, { resources: restarted, pods, isDeviceResource, runningAtStart });
  assert.deepEqual(afterRestart(pod('u', [c('a', 1)]), mine, running), { assign: [] }, 'in the checkpoint');
  assert.deepEqual(afterRestart(pod('u', [c('a', 1)]), new Map(), running), { assign: [] }, 'not in the checkpoint');
  assert.deepEqual(afterRestart(pod('u', [c('a', 1)]), mine), {
    error: `no healthy devices present; cannot allocate unhealthy devices ${R}`,
  });
  // Not a device resource (cpu, an unknown extended resource): nothing to do.
  assert.deepEqual(plan(pod('u', [{ name: 'x', resources: { limits: { cpu: '1', 'other.io/y': '1' } } }])), { assign: [] });
});

test('byNuma and deviceRunOptions', () => {
  const s: ResourceState = {
    devices: [
      { id: 'a', healthy: true, numaNodes: [0, 1] },
      { id: 'b', healthy: true, numaNodes: [] },
    ],
  };
  assert.deepEqual(byNuma(['a', 'b'], s), { '0': ['a'], '1': ['a'], '-1': ['b'] });
  const resp = (p: Partial<ContainerAllocateResponse__Output>): ContainerAllocateResponse__Output => ({
    envs: {},
    mounts: [],
    devices: [],
    annotations: {},
    cdiDevices: [],
    ...p,
  });
  assert.deepEqual(
    deviceRunOptions([
      resp({
        envs: { A: '1' },
        devices: [{ containerPath: '/dev/x', hostPath: '/dev/x0', permissions: 'rw' }],
        cdiDevices: [{ name: 'v.com/c=1' }],
        annotations: { k: 'v' },
      }),
      resp({
        envs: { A: '2', B: '3' },
        mounts: [{ containerPath: '/m', hostPath: '/h', readOnly: true }],
        devices: [{ containerPath: '/dev/x', hostPath: '/dev/x1', permissions: 'r' }],
        cdiDevices: [{ name: 'v.com/c=1' }],
        annotations: { k: 'w' },
      }),
    ]),
    {
      envs: [
        { name: 'A', value: '1' },
        { name: 'B', value: '3' },
      ],
      mounts: [{ containerPath: '/m', hostPath: '/h', readOnly: true }],
      devices: [{ containerPath: '/dev/x', hostPath: '/dev/x0', permissions: 'rw' }],
      annotations: { k: 'v' },
      cdiDevices: ['v.com/c=1'],
    },
  );
});
