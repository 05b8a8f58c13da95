import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import {
  staticCPUResizeVerdict,
  admitResize,
  containerResize,
  containerStatusResources,
  effectiveResources,
  podAllocatedResources,
  podLevelResizeNeeded,
  podStatusResources,
  resizeConditions,
  resizeRequested,
  specAllocation,
  withAllocation,
} from './decide.ts';

const ctr = (name: string, cpu: string, memory: string, resizePolicy?: Container['resizePolicy']): Container => ({
  name,
  image: 'busybox',
  resources: { requests: { cpu, memory }, limits: { cpu, memory } },
  ...(resizePolicy ? { resizePolicy } : {}),
});
const pod = (uid: string, ...containers: Container[]): Pod => ({ metadata: { uid, generation: 2 }, spec: { containers } });

test('specAllocation: cpu and memory of app and init containers', () => {
  const p: Pod = {
    metadata: { uid: 'u' },
    spec: {
      initContainers: [ctr('i', '1', '1Mi')],
      containers: [{ name: 'c', resources: { requests: { cpu: '1', 'ephemeral-storage': '1Gi' } } }],
    },
  };
  assert.deepEqual(specAllocation(p), {
    containers: {
      i: { requests: { cpu: '1', memory: '1Mi' }, limits: { cpu: '1', memory: '1Mi' } },
      c: { requests: { cpu: '1' } },
    },
  });
});

test('resizeRequested: only a real change of a known container counts', () => {
  const p = pod('u', ctr('c', '1', '1Gi'));
  assert.equal(resizeRequested(p, specAllocation(p)), false);
  assert.equal(
    resizeRequested(p, { containers: { c: { requests: { cpu: '1000m', memory: '1073741824' }, limits: { cpu: '1', memory: '1Gi' } } } }),
    false,
  );
  assert.equal(
    resizeRequested(p, { containers: { c: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } } } }),
    true,
  );
  assert.equal(resizeRequested(p, { containers: {} }), false);
});

test('withAllocation: allocated cpu and memory replace the spec, other resources stay', () => {
  const p: Pod = {
    metadata: { uid: 'u' },
    spec: { containers: [{ name: 'c', resources: { requests: { cpu: '2', 'ephemeral-storage': '1Gi' }, limits: { cpu: '2' } } }] },
  };
  const got = withAllocation(p, { containers: { c: { requests: { cpu: '1' } } } });
  assert.deepEqual(got.spec!.containers[0]!.resources, { requests: { 'ephemeral-storage': '1Gi', cpu: '1' }, limits: undefined });
  assert.equal(p.spec!.containers[0]!.resources!.requests!.cpu, '2'); // not mutated
});

const node = { cpu: '2', memory: '4Gi', pods: '110' };
const admitCases: [string, Pod, Pod[], Record<string, string> | undefined, ReturnType<typeof admitResize>][] = [
  ['fits', pod('u', ctr('c', '1', '1Gi')), [pod('o', ctr('c', '500m', '1Gi'))], node, { ok: true }],
  ['node unknown: accepted', pod('u', ctr('c', '100', '1Ti')), [], undefined, { ok: true }],
  [
    'more than the node has: Infeasible',
    pod('u', ctr('c', '3', '1Gi')),
    [],
    node,
    { ok: false, reason: 'Infeasible', message: "Node didn't have enough capacity: cpu, requested: 3000, capacity: 2000" },
  ],
  [
    'memory is reported first',
    pod('u', ctr('c', '3', '5Gi')),
    [],
    node,
    { ok: false, reason: 'Infeasible', message: "Node didn't have enough capacity: memory, requested: 5368709120, capacity: 4294967296" },
  ],
  [
    'not next to the others: Deferred',
    pod('u', ctr('c', '1500m', '1Gi')),
    [pod('o', ctr('c', '1', '1Gi'))],
    node,
    { ok: false, reason: 'Deferred', message: "Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000" },
  ],
];
for (const [name, p, others, alloc, want] of admitCases)
  test(`admitResize: ${name}`, () => assert.deepEqual(admitResize(p, others, alloc), want));

const restartMem = [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }];
const resizeCases: [string, Container, ReturnType<typeof ctr>['resources'], ReturnType<typeof containerResize>][] = [
  ['unchanged', ctr('c', '1', '1Gi'), ctr('c', '1', '1Gi').resources, { action: 'none' }],
  ['cpu, no policy: update', ctr('c', '1', '1Gi'), ctr('c', '2', '1Gi').resources, { action: 'update', changed: ['cpu'] }],
  [
    'cpu, memory restarts: update',
    ctr('c', '1', '1Gi', restartMem),
    ctr('c', '2', '1Gi').resources,
    { action: 'update', changed: ['cpu'] },
  ],
  [
    'memory, memory restarts: restart',
    ctr('c', '1', '1Gi', restartMem),
    ctr('c', '1', '2Gi').resources,
    { action: 'restart', changed: ['memory'] },
  ],
  [
    'both, memory restarts: restart',
    ctr('c', '1', '1Gi', restartMem),
    ctr('c', '2', '2Gi').resources,
    { action: 'restart', changed: ['cpu', 'memory'] },
  ],
  [
    'memory request only, memory restarts: restart',
    { ...ctr('c', '1', '1Gi', restartMem), resources: { requests: { cpu: '1', memory: '512Mi' }, limits: { cpu: '1', memory: '1Gi' } } },
    ctr('c', '1', '1Gi').resources,
    { action: 'restart', changed: ['memory'] },
  ],
];
for (const [name, c, actual, want] of resizeCases)
  test(`containerResize: ${name}`, () => assert.deepEqual(containerResize(c, actual!), want));

test('resizeConditions: True while present; the transition time stays while the reason does', () => {
  const prev = [{ type: 'PodResizePending', status: 'True', reason: 'Deferred', lastTransitionTime: 'then' }];
  assert.deepEqual(resizeConditions({}, prev, 'now'), []);
  assert.deepEqual(resizeConditions({ pending: { reason: 'Deferred', message: 'm', generation: 3 } }, prev, 'now'), [
    { type: 'PodResizePending', status: 'True', observedGeneration: 3, lastTransitionTime: 'then', reason: 'Deferred', message: 'm' },
  ]);
  assert.deepEqual(resizeConditions({ pending: { reason: 'Infeasible', message: 'm' }, inProgress: { generation: 2 } }, prev, 'now'), [
    { type: 'PodResizePending', status: 'True', lastTransitionTime: 'now', reason: 'Infeasible', message: 'm' },
    { type: 'PodResizeInProgress', status: 'True', observedGeneration: 2, lastTransitionTime: 'now' },
  ]);
});

// Pod-level resources (spec.resources) and InPlacePodLevelResourcesVerticalScaling.
const withPodLevel = (p: Pod, resources: Container['resources']): Pod => ({ ...p, spec: { ...p.spec!, resources } as Pod['spec'] });
const guaranteedPLR = { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } };

test('specAllocation: spec.resources is the pod-level allocation (cpu and memory)', () => {
  const p = withPodLevel(pod('u', { name: 'c' }), { requests: { cpu: '1', 'hugepages-2Mi': '2Mi' }, limits: { memory: '1Gi' } });
  assert.deepEqual(specAllocation(p), { containers: { c: {} }, pod: { requests: { cpu: '1' }, limits: { memory: '1Gi' } } });
  assert.equal(specAllocation(pod('u', { name: 'c' })).pod, undefined);
});

const plrRequested: [string, Pod, Parameters<typeof resizeRequested>[1], boolean][] = [
  ['same', withPodLevel(pod('u', { name: 'c' }), guaranteedPLR), { containers: { c: {} }, pod: guaranteedPLR }, false],
  [
    'same values, other form',
    withPodLevel(pod('u', { name: 'c' }), guaranteedPLR),
    { containers: { c: {} }, pod: { requests: { cpu: '1000m', memory: '1024Mi' }, limits: { cpu: '1', memory: '1Gi' } } },
    false,
  ],
  [
    'pod-level cpu changed',
    withPodLevel(pod('u', { name: 'c' }), guaranteedPLR),
    { containers: { c: {} }, pod: { requests: { cpu: '2', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } } },
    true,
  ],
  ['spec.resources added', withPodLevel(pod('u', { name: 'c' }), { requests: { cpu: '1' } }), { containers: { c: {} } }, true],
];
for (const [name, p, a, want] of plrRequested) test(`resizeRequested: pod level: ${name}`, () => assert.equal(resizeRequested(p, a), want));

test('withAllocation: spec.resources gets the allocated cpu and memory, hugepages stay; none allocated, none run', () => {
  const p = withPodLevel(pod('u', { name: 'c' }), {
    requests: { cpu: '2', 'hugepages-2Mi': '2Mi' },
    limits: { cpu: '2', 'hugepages-2Mi': '2Mi' },
  });
  const got = withAllocation(p, { containers: {}, pod: { requests: { cpu: '1' }, limits: { cpu: '1' } } });
  assert.deepEqual((got.spec as { resources?: unknown }).resources, {
    requests: { cpu: '1', 'hugepages-2Mi': '2Mi' },
    limits: { cpu: '1', 'hugepages-2Mi': '2Mi' },
  });
  const added = withAllocation(withPodLevel(pod('u', { name: 'c' }), { requests: { cpu: '1' } }), { containers: {} });
  assert.equal('resources' in added.spec!, false, 'a pending resize that adds spec.resources does not run yet');
  assert.equal('resources' in withAllocation(pod('u', { name: 'c' }), { containers: {} }).spec!, false);
});

const effectiveCases: [string, Container['resources'], Container['resources'], Container['resources']][] = [
  ['no pod level: the container own', { requests: { cpu: '1' } }, undefined, { requests: { cpu: '1' } }],
  ['pod-level requests only: nothing added', {}, { requests: { cpu: '1' } }, {}],
  ['pod-level limits fill what the container lacks', {}, guaranteedPLR, { limits: { cpu: '1', memory: '1Gi' } }],
  [
    'a container limit wins',
    { requests: { cpu: '100m' }, limits: { cpu: '500m' } },
    guaranteedPLR,
    { requests: { cpu: '100m' }, limits: { cpu: '500m', memory: '1Gi' } },
  ],
  ['a zero container limit is none', { limits: { cpu: '0' } }, guaranteedPLR, { limits: { cpu: '1', memory: '1Gi' } }],
];
for (const [name, r, level, want] of effectiveCases)
  test(`effectiveResources: ${name}`, () => assert.deepEqual(effectiveResources(r, level), want));

const restartCPU = [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }];
const plrResizeCases: [string, Container, Container['resources'], Container['resources'], ReturnType<typeof containerResize>][] = [
  [
    'pod cpu limit changed, container without limits: update',
    { name: 'c' },
    { limits: { cpu: '1', memory: '1Gi' } },
    { requests: { cpu: '2', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } },
    { action: 'update', changed: ['cpu'] },
  ],
  [
    'the same with cpu RestartContainer: restart',
    { name: 'c', resizePolicy: restartCPU },
    { limits: { cpu: '1', memory: '1Gi' } },
    { requests: { cpu: '2', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } },
    { action: 'restart', changed: ['cpu'] },
  ],
  [
    'pod limits changed, container with its own: none',
    ctr('c', '1', '1Gi'),
    ctr('c', '1', '1Gi').resources,
    { requests: { cpu: '2', memory: '2Gi' }, limits: { cpu: '2', memory: '2Gi' } },
    { action: 'none' },
  ],
  [
    'pod requests changed, container without limits: none',
    { name: 'c' },
    { limits: { cpu: '1', memory: '1Gi' } },
    { requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '1', memory: '1Gi' } },
    { action: 'none' },
  ],
];
for (const [name, c, actual, level, want] of plrResizeCases)
  test(`containerResize: pod level: ${name}`, () => assert.deepEqual(containerResize(c, actual!, level), want));

const neededCases: [string, Container['resources'], Container['resources'], boolean][] = [
  ['none', undefined, undefined, false],
  ['same values', { requests: { cpu: '1' } }, { requests: { cpu: '1000m' } }, false],
  ['cpu limit changed', { limits: { cpu: '2' } }, { limits: { cpu: '1' } }, true],
  ['added', { requests: { cpu: '5m' } }, undefined, true],
];
for (const [name, allocated, actuated, want] of neededCases)
  test(`podLevelResizeNeeded: ${name}`, () => assert.equal(podLevelResizeNeeded(allocated, actuated), want));

test('containerStatusResources: shaped as allocated, values as run', () => {
  assert.deepEqual(containerStatusResources({}, { limits: { cpu: '1', memory: '1Gi' } }), {}, 'a limit from the pod does not show');
  assert.deepEqual(
    containerStatusResources(
      { requests: { cpu: '1' }, limits: { memory: '1Gi' } },
      { requests: { cpu: '2' }, limits: { cpu: '3', memory: '1Gi' } },
    ),
    { requests: { cpu: '2' }, limits: { memory: '1Gi', cpu: '3' } },
  );
});

test('podAllocatedResources: PodRequests of the allocated pod, pod level or the containers aggregate', () => {
  assert.deepEqual(podAllocatedResources(withPodLevel(pod('u', ctr('c', '100m', '64Mi')), guaranteedPLR)), { cpu: '1', memory: '1Gi' });
  assert.deepEqual(podAllocatedResources(pod('u', ctr('c', '100m', '64Mi'), ctr('d', '20m', '1Mi'))), { cpu: '120m', memory: '65Mi' });
  assert.deepEqual(podAllocatedResources(pod('u', { name: 'c' })), {});
  assert.deepEqual(
    podAllocatedResources(withPodLevel(pod('u', { name: 'c' }), { requests: { cpu: '4m', memory: '10m' } })),
    { cpu: '4m', memory: '10m' },
    'pod-level values as written (10m of memory is not 1 byte)',
  );
});

const MiB = 2 ** 20;
const statusCases: [string, Pod, boolean, Parameters<typeof podStatusResources>[2], ReturnType<typeof podStatusResources>][] = [
  [
    'not running: the allocated requests and limits of the pod as a whole',
    withPodLevel(pod('u', ctr('c', '100m', '64Mi')), { requests: { cpu: '200m' } }),
    false,
    { cpuShares: 2 },
    { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
  ],
  [
    'running: what the pod cgroup enforces, the memory request as allocated',
    withPodLevel(pod('u', { name: 'c' }), { requests: { cpu: '20m', memory: '35Mi' }, limits: { cpu: '30m', memory: '45Mi' } }),
    true,
    { cpuShares: 20, cpuQuotaUs: 3000, memoryLimitBytes: 45 * MiB },
    { requests: { cpu: '20m', memory: '35Mi' }, limits: { cpu: '30m', memory: '45Mi' } },
  ],
  [
    'running, a resize not yet applied: the old values',
    withPodLevel(pod('u', { name: 'c' }), { requests: { memory: '10Ki' }, limits: { memory: '10Ki' } }),
    true,
    { cpuShares: 2, memoryLimitBytes: 30 * MiB },
    { requests: { memory: '10Ki' }, limits: { memory: '30Mi' } },
  ],
  [
    'running, tiny cpu: the allocated value, which the cgroup cannot tell apart',
    withPodLevel(pod('u', { name: 'c' }), { requests: { cpu: '1m' }, limits: { cpu: '5m' } }),
    true,
    { cpuShares: 2, cpuQuotaUs: 1000 },
    { requests: { cpu: '1m' }, limits: { cpu: '5m' } },
  ],
  ['running best-effort: nothing', pod('u', { name: 'c' }), true, { cpuShares: 2 }, {}],
  ['running, cgroup unreadable: as allocated', withPodLevel(pod('u', { name: 'c' }), guaranteedPLR), true, undefined, guaranteedPLR],
];
for (const [name, p, running, cgroup, want] of statusCases)
  test(`podStatusResources: ${name}`, () => assert.deepEqual(podStatusResources(p, running, cgroup), want));

test("staticCPUResizeVerdict: a Guaranteed pod's cpu does not change under the static CPU manager policy", () => {
  const g = (cpu: string): Pod => ({
    metadata: { uid: 'u' },
    spec: { containers: [{ name: 'c', resources: { requests: { cpu, memory: '1Gi' }, limits: { cpu, memory: '1Gi' } } }] },
  });
  const rows: [name: string, pod: Pod, allocated: string, ok: boolean][] = [
    ['Guaranteed, cpu changed', g('2'), '1', false],
    ['Guaranteed, same cpu (memory resize)', g('1'), '1000m', true],
    ['Burstable', { metadata: { uid: 'u' }, spec: { containers: [{ name: 'c', resources: { requests: { cpu: '2' } } }] } }, '1', true],
  ];
  for (const [name, pod, allocated, ok] of rows) {
    const v = staticCPUResizeVerdict(pod, () => allocated);
    assert.equal(v.ok, ok, name);
    if (!v.ok)
      assert.deepEqual(v, {
        ok: false,
        reason: 'Infeasible',
        message: 'Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"',
      });
  }
});
