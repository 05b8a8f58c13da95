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
  filterByAffinity,
  planPodDevices,
  type PodDevices,
  reusableBefore,
  type ResourceState,
} from './allocation.ts';
import type { ContainerAllocateResponse__Output } from './generated/v1beta1/ContainerAllocateResponse.ts';
import { NUMAMask } from '../topologymanager/bitmask.ts';
import { ALLOC_CASES, normalizeChoice } from './testdata/topology-cases.ts';

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
  // The plugin's request is checked with topology below; here only the choice.
  const choice = (r: ReturnType<typeof devicesToAllocate>) => ('devices' in r ? { devices: r.devices } : r);
  for (const [name, input, want] of cases) assert.deepEqual(choice(devicesToAllocate(input)), want, name);
  assert.equal(
    admissionMessage('no healthy devices present; cannot allocate unhealthy devices x'),
    'Allocate failed due to no healthy devices present; cannot allocate unhealthy devices x, which is unexpected',
  );
});

/** Devices "DevN" on NUMA node nodes[i] (null: no topology). */
const numaState = (nodes: (number | null)[]): ResourceState => ({
  devices: nodes.map((n, i) => ({ id: `Dev${i}`, healthy: true, numaNodes: n === null ? [] : [n] })),
});
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `Dev${from + i}`);

test("filterByAffinity: upstream's order (affinity, other nodes, no topology)", () => {
  // Dev0 on node 0, Dev1 on nodes 0 and 1, Dev2 on node 1, Dev3 without topology, Dev4 on node 2.
  const s: ResourceState = {
    devices: [
      { id: 'Dev0', healthy: true, numaNodes: [0] },
      { id: 'Dev1', healthy: true, numaNodes: [0, 1] },
      { id: 'Dev2', healthy: true, numaNodes: [1] },
      { id: 'Dev3', healthy: true, numaNodes: [] },
      { id: 'Dev4', healthy: true, numaNodes: [2] },
    ],
  };
  const all = ['Dev0', 'Dev1', 'Dev2', 'Dev3', 'Dev4'];
  assert.deepEqual(filterByAffinity(all, s, NUMAMask.of(1)), {
    aligned: ['Dev1', 'Dev2'],
    unaligned: ['Dev0', 'Dev4'],
    noAffinity: ['Dev3'],
  });
  assert.deepEqual(filterByAffinity(all, s, NUMAMask.of(0)), {
    aligned: ['Dev0', 'Dev1'],
    unaligned: ['Dev2', 'Dev4'],
    noAffinity: ['Dev3'],
  });
  // No affinity, or a resource without topology: all "no affinity".
  assert.deepEqual(filterByAffinity(all, s, undefined), { aligned: [], unaligned: [], noAffinity: all });
  assert.deepEqual(filterByAffinity(['Dev0'], numaState([null]), NUMAMask.of(0)), { aligned: [], unaligned: [], noAffinity: ['Dev0'] });
});

test('devicesToAllocate with an affinity: upstream TestTopologyAlignedAllocation', () => {
  const base = { resource: R, reusable: new Set<string>(), inUse: new Set<string>() };
  const perNode = (ids: string[], s: ResourceState) => {
    const out: Record<number, number> = {};
    for (const id of ids) for (const n of s.devices.find((d) => d.id === id)!.numaNodes) out[n] = (out[n] ?? 0) + 1;
    return out;
  };
  const hundred = numaState([...Array(100).fill(0), ...Array(100).fill(1)]);
  const cases: [string, ResourceState, number, NUMAMask, string[] | undefined, Record<number, number>, string[]?][] = [
    ['Single Request, no alignment', numaState([null, null]), 1, NUMAMask.of(0, 1), undefined, {}],
    ['Request for 1, partial alignment', numaState([null, 1]), 1, NUMAMask.of(1), undefined, { 1: 1 }],
    ['Single Request, socket 0', numaState([0, 1]), 1, NUMAMask.of(0), undefined, { 0: 1 }],
    ['Single Request, socket 1', numaState([0, 1]), 1, NUMAMask.of(1), undefined, { 1: 1 }],
    ['Request for 2, socket 0', numaState([0, 1, 0, 1]), 2, NUMAMask.of(0), undefined, { 0: 2 }],
    ['Request for 2, socket 1', numaState([0, 1, 0, 1]), 2, NUMAMask.of(1), undefined, { 1: 2 }],
    ['Request for 4, unsatisfiable, prefer socket 0', numaState([0, 1, 0, 1, 0, 1]), 4, NUMAMask.of(0), undefined, { 0: 3, 1: 1 }],
    ['Request for 4, unsatisfiable, prefer socket 1', numaState([0, 1, 0, 1, 0, 1]), 4, NUMAMask.of(1), undefined, { 0: 1, 1: 3 }],
    ['Request for 4, multisocket', numaState([0, 1, 2, 3, 0, 1, 2, 3]), 4, NUMAMask.of(1, 3), undefined, { 1: 2, 3: 2 }],
    [
      'Request for 5, socket 0, preferred aligned accepted',
      hundred,
      5,
      NUMAMask.of(0),
      ['Dev0', 'Dev19', 'Dev83', 'Dev42', 'Dev77'],
      { 0: 5 },
      ['Dev0', 'Dev19', 'Dev83', 'Dev42', 'Dev77'],
    ],
    [
      'Request for 5, socket 0, preferred aligned accepted, unaligned ignored',
      hundred,
      5,
      NUMAMask.of(0),
      ['Dev0', 'Dev19', 'Dev83', 'Dev150', 'Dev186'],
      { 0: 5 },
      ['Dev0', 'Dev19', 'Dev83'],
    ],
    [
      'Request for 5, socket 1, preferred aligned accepted, bogus ignored',
      numaState(Array(100).fill(1)),
      5,
      NUMAMask.of(1),
      ['Dev0', 'Dev19', 'Dev83', 'bogus0', 'bogus1'],
      { 1: 5 },
      ['Dev0', 'Dev19', 'Dev83'],
    ],
    [
      'Request for 5, multisocket, preferred accepted',
      numaState([0, 0, 0, 1, 1, 1, 1, 1]),
      5,
      NUMAMask.of(0),
      ['Dev0', 'Dev1', 'Dev2', 'Dev4', 'Dev5'],
      { 0: 3, 1: 2 },
      ['Dev0', 'Dev1', 'Dev2', 'Dev4', 'Dev5'],
    ],
    [
      'Request for 5, multisocket, preferred unaligned accepted, bogus ignored',
      numaState([0, 0, 0, 1, 1, 1, 1, 1]),
      5,
      NUMAMask.of(0),
      ['Dev0', 'Dev1', 'Dev2', 'Dev4', 'bogus0'],
      { 0: 3, 1: 2 },
      ['Dev0', 'Dev1', 'Dev2', 'Dev4'],
    ],
  ];
  for (const [name, s, required, affinity, preferred, alignment, mustHave] of cases) {
    const r = devicesToAllocate({ ...base, required, state: s, affinity, preferred });
    assert.ok('devices' in r, name);
    assert.equal(r.devices.length, required, name);
    assert.deepEqual(perNode(r.devices, s), alignment, name);
    for (const id of mustHave ?? []) assert.ok(r.devices.includes(id), `${name}: ${id}`);
  }
  // Unaligned before those without topology, as upstream (the affinity's node is full).
  const mixed = numaState([0, null, 1]);
  const r = devicesToAllocate({ ...base, required: 2, state: mixed, affinity: NUMAMask.of(0) });
  assert.deepEqual('devices' in r && r.devices, ['Dev0', 'Dev2']);
});

test('devicesToAllocate: what the plugin is asked (upstream TestGetPreferredAllocationParameters)', () => {
  const cases: [string, ResourceState, number, string[], string[], NUMAMask, string[], string[]][] = [
    ['Request for 1, socket 0, 0 already allocated, 0 reusable', numaState([0, 0, 0, 0]), 1, [], [], NUMAMask.of(0), range(0, 4), []],
    [
      'Request for 4, socket 0, 2 already allocated, 2 reusable',
      numaState(Array(8).fill(0)),
      4,
      ['Dev0', 'Dev5'],
      ['Dev0', 'Dev5'],
      NUMAMask.of(0),
      range(0, 8),
      ['Dev0', 'Dev5'],
    ],
    [
      'Request for 4, socket 0, 4 already allocated, 2 reusable',
      numaState(Array(8).fill(0)),
      4,
      ['Dev0', 'Dev5', 'Dev4', 'Dev1'],
      ['Dev0', 'Dev5'],
      NUMAMask.of(0),
      ['Dev0', 'Dev2', 'Dev3', 'Dev5', 'Dev6', 'Dev7'],
      ['Dev0', 'Dev5'],
    ],
    [
      'Request for 6, multisocket, 2 already allocated, 2 reusable',
      numaState([0, 0, 0, 0, 1, 1, 1, 1]),
      6,
      ['Dev1', 'Dev6'],
      ['Dev1', 'Dev6'],
      NUMAMask.of(0),
      range(0, 8),
      ['Dev0', 'Dev1', 'Dev2', 'Dev3', 'Dev6'],
    ],
    [
      'Request for 6, multisocket, 4 already allocated, 2 reusable',
      numaState([0, 0, 0, 0, 1, 1, 1, 1]),
      6,
      ['Dev0', 'Dev1', 'Dev6', 'Dev7'],
      ['Dev1', 'Dev6'],
      NUMAMask.of(0),
      ['Dev1', 'Dev2', 'Dev3', 'Dev4', 'Dev5', 'Dev6'],
      ['Dev1', 'Dev2', 'Dev3', 'Dev6'],
    ],
  ];
  const sorted = (a: string[]) => [...a].sort();
  for (const [name, s, required, inUse, reusable, affinity, available, mustInclude] of cases) {
    const r = devicesToAllocate({ resource: R, required, state: s, inUse: new Set(inUse), reusable: new Set(reusable), affinity });
    assert.ok('devices' in r && r.ask, name);
    assert.deepEqual(sorted(r.ask.available), sorted(available), name);
    assert.deepEqual(sorted(r.ask.mustInclude), sorted(mustInclude), name);
    assert.equal(r.ask.size, required, name);
  }
  // Satisfied by the reused devices alone, or by exactly the aligned ones: the plugin is not asked.
  const s = numaState([0, 0, 1]);
  const reused = devicesToAllocate({
    resource: R,
    required: 1,
    state: s,
    inUse: new Set(['Dev0']),
    reusable: new Set(['Dev0']),
    affinity: NUMAMask.of(0),
  });
  assert.deepEqual(reused, { devices: ['Dev0'] });
  const exact = devicesToAllocate({ resource: R, required: 2, state: s, inUse: new Set(), reusable: new Set(), affinity: NUMAMask.of(0) });
  assert.deepEqual(exact, { devices: ['Dev0', 'Dev1'] });
});

test('devicesToAllocate with an affinity and the plugin: the cases upstream answers the same (hack/devicemanager-check.sh)', () => {
  for (const c of ALLOC_CASES) {
    const s: ResourceState = { devices: c.devices.map(([id, numaNodes, healthy]) => ({ id, healthy: healthy ?? true, numaNodes })) };
    const input = {
      resource: 'r',
      required: c.required,
      state: s,
      inUse: new Set(c.inUse),
      reusable: new Set(c.reusable),
      affinity: c.affinity ? NUMAMask.of(...c.affinity) : undefined,
    };
    // As the manager: chosen once; when that asks the plugin and it has GetPreferredAllocation, again with its answer.
    const first = devicesToAllocate(input);
    const ask = c.plugin && 'devices' in first ? first.ask : undefined;
    const r = ask ? devicesToAllocate({ ...input, preferred: c.plugin }) : first;
    const got =
      'error' in r
        ? r
        : {
            ...normalizeChoice(c.devices, r.devices, c.plugin),
            ask: ask ? { available: [...ask.available].sort(), mustInclude: [...ask.mustInclude].sort(), size: ask.size } : null,
          };
    assert.deepEqual(got, c.want, c.name);
  }
});

test('reusableBefore: what the containers before one leave to reuse', () => {
  const held: PodDevices = new Map([
    [
      'u',
      new Map([
        ['init', new Map([[R, { byNuma: { '0': ['d1'] } }]])],
        ['side', new Map([[R, { byNuma: { '0': ['d2'] } }]])],
        ['app', new Map([[R, { byNuma: { '0': ['d1'] } }]])],
      ]),
    ],
  ]);
  const p = pod('u', [c('app', 1), c('app2', 1)], [c('init', 1), c('side', 1, { restartPolicy: 'Always' })]);
  assert.deepEqual(reusableBefore(p, 'init', held), new Map());
  assert.deepEqual(reusableBefore(p, 'side', held), new Map([[R, new Set(['d1'])]]));
  assert.deepEqual(reusableBefore(p, 'app', held), new Map([[R, new Set(['d1'])]]));
  assert.deepEqual(reusableBefore(p, 'app2', held), new Map([[R, new Set()]]));
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
