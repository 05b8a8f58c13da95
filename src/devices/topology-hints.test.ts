import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { ProviderHints } from '../topologymanager/bitmask.ts';
import type { PodDevices, ResourceState } from './allocation.ts';
import { containerTopologyHints, podTopologyHints } from './topology-hints.ts';

// A device: [id, NUMA nodes] (no nodes: no topology), healthy unless its id ends in "!".
type Dev = [id: string, nodes: number[]];
const state = (devs: Dev[]): ResourceState => ({
  devices: devs.map(([id, numaNodes]) => ({ id: id.replace(/!$/, ''), healthy: !id.endsWith('!'), numaNodes })),
});
const container = (name: string, limits: Record<string, number>): Container => ({
  name,
  resources: { limits: Object.fromEntries(Object.entries(limits).map(([r, n]) => [r, String(n)])) },
});
const pod = (containers: Container[], initContainers: Container[] = []): Pod => ({
  metadata: { uid: 'pod' },
  spec: { containers, initContainers },
});
/** podUID "pod": container -> resource -> ids (no NUMA bookkeeping needed for hints). */
const held = (m: Record<string, Record<string, string[]>>): PodDevices =>
  new Map([
    ['pod', new Map(Object.entries(m).map(([c, rs]) => [c, new Map(Object.entries(rs).map(([r, ids]) => [r, { byNuma: { '0': ids } }]))]))],
  ]);
/** Hints as [nodes, preferred] per resource; null: no preference. */
type Want = Record<string, [number[], boolean][] | null>;
const plain = (h: ProviderHints): Want =>
  Object.fromEntries(
    Object.entries(h ?? {}).map(([r, hs]) => [
      r,
      hs === undefined ? null : hs.map((x) => [x.affinity!.list(), x.preferred] as [number[], boolean]),
    ]),
  );

const A = 'testdevice';
const B = 'testdevice2';
const two: Dev[] = [
  ['Dev1', [0]],
  ['Dev2', [1]],
  ['Dev3', [0]],
  ['Dev4', [1]],
];

test('containerTopologyHints: upstream TestGetTopologyHints (getCommonTestCases) and more', () => {
  const cases: {
    name: string;
    devices: Record<string, Dev[]>;
    limits: Record<string, number>;
    pods?: PodDevices;
    reusable?: Record<string, string[]>;
    numa?: number[];
    want: Want;
  }[] = [
    {
      name: 'Single Request, no alignment',
      devices: {
        [A]: [
          ['Dev1', []],
          ['Dev2', []],
        ],
      },
      limits: { [A]: 1 },
      want: { [A]: null },
    },
    {
      name: 'Single Request, only one with alignment',
      devices: {
        [A]: [
          ['Dev1', []],
          ['Dev2', [1]],
        ],
      },
      limits: { [A]: 1 },
      want: { [A]: [[[1], true]] },
    },
    {
      name: 'Single Request, one device per socket',
      devices: { [A]: two.slice(0, 2) },
      limits: { [A]: 1 },
      want: {
        [A]: [
          [[0], true],
          [[1], true],
          [[0, 1], false],
        ],
      },
    },
    {
      name: 'Request for 2, one device per socket',
      devices: { [A]: two.slice(0, 2) },
      limits: { [A]: 2 },
      want: { [A]: [[[0, 1], true]] },
    },
    {
      name: 'Request for 2, 2 devices per socket',
      devices: { [A]: two },
      limits: { [A]: 2 },
      want: {
        [A]: [
          [[0], true],
          [[1], true],
          [[0, 1], false],
        ],
      },
    },
    {
      name: 'Request for 2, optimal on 1 NUMA node, forced cross-NUMA',
      devices: { [A]: two },
      limits: { [A]: 2 },
      pods: held({ other: { [A]: ['Dev1', 'Dev2'] } }),
      want: { [A]: [[[0, 1], false]] },
    },
    {
      name: '2 device types, mixed configuration',
      devices: { [A]: two, [B]: [['Dev1', [0]]] },
      limits: { [A]: 2, [B]: 1 },
      want: {
        [A]: [
          [[0], true],
          [[1], true],
          [[0, 1], false],
        ],
        [B]: [[[0], true]],
      },
    },
    { name: 'Single device type, more requested than available', devices: { [A]: two }, limits: { [A]: 6 }, want: { [A]: [] } },
    {
      name: 'Single device type, all already allocated to container',
      devices: {
        [A]: [
          ['Dev1', [0]],
          ['Dev2', [0]],
        ],
      },
      limits: { [A]: 2 },
      pods: held({ c: { [A]: ['Dev1', 'Dev2'] } }),
      want: { [A]: [[[0], true]] },
    },
    {
      name: 'Single device type, less already allocated to container than requested',
      devices: { [A]: two },
      limits: { [A]: 4 },
      pods: held({ c: { [A]: ['Dev1', 'Dev3'] } }),
      want: { [A]: [] },
    },
    {
      name: 'unhealthy devices are not available, but count for the narrowest size',
      devices: {
        [A]: [
          ['Dev1!', [0]],
          ['Dev2', [1]],
          ['Dev3', [0]],
        ],
      },
      limits: { [A]: 2 },
      want: { [A]: [[[0, 1], false]] },
    },
    {
      name: 'an init container left a device on node 1: every hint must hold node 1',
      devices: { [A]: two },
      limits: { [A]: 2 },
      pods: held({ init: { [A]: ['Dev2'] } }),
      reusable: { [A]: ['Dev2'] },
      want: {
        [A]: [
          [[1], true],
          [[0, 1], false],
        ],
      },
    },
    {
      name: 'nodes a plugin names and the machine lacks are ignored',
      devices: {
        [A]: [
          ['Dev1', [0]],
          ['Dev2', [7]],
        ],
      },
      limits: { [A]: 1 },
      want: { [A]: [[[0], true]] },
    },
    { name: 'a resource no plugin registered: no preference', devices: {}, limits: { [A]: 1 }, want: { [A]: null } },
  ];
  for (const c of cases) {
    const resources = new Map(Object.entries(c.devices).map(([r, d]) => [r, state(d)]));
    const input = {
      resources,
      pods: c.pods ?? new Map(),
      isDeviceResource: (r: string) => r.startsWith('testdevice'),
      numaNodes: c.numa ?? [0, 1],
    };
    const reusable = new Map(Object.entries(c.reusable ?? {}).map(([r, ids]) => [r, new Set(ids)]));
    assert.deepEqual(
      plain(containerTopologyHints(input, pod([container('c', c.limits)]), container('c', c.limits), reusable)),
      c.want,
      c.name,
    );
  }
});

test('podTopologyHints: the pod effective request (upstream TestGetPodTopologyHints)', () => {
  const resources = new Map([
    [A, state(two)],
    [
      B,
      state([
        ['Dev1', []],
        ['Dev2', []],
      ]),
    ],
  ]);
  const input = { resources, pods: new Map(), isDeviceResource: (r: string) => r.startsWith('testdevice'), numaNodes: [0, 1] };
  // App containers add up (1 + 1), an init container's 3 wins over them: 3 devices of A.
  const p = pod([container('a', { [A]: 1, [B]: 1 }), container('b', { [A]: 1 })], [container('i', { [A]: 3 })]);
  assert.deepEqual(plain(podTopologyHints(input, p)), { [A]: [[[0, 1], true]], [B]: null });
  // Already allocated to the pod: regenerated from those.
  const had = held({ a: { [A]: ['Dev1'] }, b: { [A]: ['Dev3'] } });
  assert.deepEqual(plain(podTopologyHints({ ...input, pods: had }, pod([container('a', { [A]: 1 }), container('b', { [A]: 1 })]))), {
    [A]: [
      [[0], true],
      [[0, 1], false],
    ],
  });
});
