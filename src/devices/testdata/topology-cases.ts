// The device manager's topology cases: hints (GetTopologyHints / GetPodTopologyHints) and
// aligned allocation (devicesToAllocate with GetPreferredAllocation), each with the answer
// upstream's own code gives (hack/devicemanager-check.sh runs the pinned release's devicemanager
// over them). Many are rows of upstream's topology_hints_test.go tables. The pod is "pod"; a
// device is [id, NUMA nodes (none: no topology), healthy (default true)].

export type CaseDevice = [id: string, nodes: number[], healthy?: boolean];
/** [name, limits of the device resources]. */
export type CaseContainer = [name: string, limits: Record<string, number>];

export interface HintCase {
  name: string;
  numaNodes: number[];
  devices: Record<string, CaseDevice[]>;
  /** Devices the pod's containers hold: container -> resource -> ids. */
  held?: Record<string, Record<string, string[]>>;
  /** upstream's devicesToReuse for the pod (container scope). */
  reusable?: Record<string, string[]>;
  initContainers?: CaseContainer[];
  containers: CaseContainer[];
  /** The container asked (scope container); undefined: the pod (scope pod). */
  container?: string;
  /** Per resource: [NUMA nodes, preferred] hints; null: no preference. */
  want: Record<string, [number[], boolean][] | null>;
}

const two = (): CaseDevice[] => [
  ['Dev1', [0]],
  ['Dev2', [1]],
  ['Dev3', [0]],
  ['Dev4', [1]],
];
const one = (name: string, limits: Record<string, number>, extra: Partial<HintCase> = {}) => ({
  numaNodes: [0, 1],
  containers: [['c', limits]] as CaseContainer[],
  container: 'c',
  name,
  ...extra,
});
const A = 'testdevice';
const B = 'testdevice2';

export const HINT_CASES: HintCase[] = [
  {
    ...one('Single Request, no alignment', { [A]: 1 }),
    devices: {
      [A]: [
        ['Dev1', []],
        ['Dev2', []],
      ],
    },
    want: { [A]: null },
  },
  {
    ...one('Single Request, only one with alignment', { [A]: 1 }),
    devices: {
      [A]: [
        ['Dev1', []],
        ['Dev2', [1]],
      ],
    },
    want: { [A]: [[[1], true]] },
  },
  {
    ...one('Single Request, one device per socket', { [A]: 1 }),
    devices: { [A]: two().slice(0, 2) },
    want: {
      [A]: [
        [[0], true],
        [[1], true],
        [[0, 1], false],
      ],
    },
  },
  { ...one('Request for 2, one device per socket', { [A]: 2 }), devices: { [A]: two().slice(0, 2) }, want: { [A]: [[[0, 1], true]] } },
  {
    ...one('Request for 2, 2 devices per socket', { [A]: 2 }),
    devices: { [A]: two() },
    want: {
      [A]: [
        [[0], true],
        [[1], true],
        [[0, 1], false],
      ],
    },
  },
  {
    ...one('Request for 2, optimal on 1 NUMA node, forced cross-NUMA', { [A]: 2 }),
    devices: { [A]: two() },
    held: { other: { [A]: ['Dev1', 'Dev2'] } },
    want: { [A]: [[[0, 1], false]] },
  },
  {
    ...one('2 device types, mixed configuration', { [A]: 2, [B]: 1 }),
    devices: { [A]: two(), [B]: [['Dev1', [0]]] },
    want: {
      [A]: [
        [[0], true],
        [[1], true],
        [[0, 1], false],
      ],
      [B]: [[[0], true]],
    },
  },
  { ...one('Single device type, more requested than available', { [A]: 6 }), devices: { [A]: two() }, want: { [A]: [] } },
  {
    ...one('Single device type, all already allocated to container', { [A]: 2 }),
    devices: {
      [A]: [
        ['Dev1', [0]],
        ['Dev2', [0]],
      ],
    },
    held: { c: { [A]: ['Dev1', 'Dev2'] } },
    want: { [A]: [[[0], true]] },
  },
  {
    ...one('Single device type, less already allocated to container than requested', { [A]: 4 }),
    devices: { [A]: two() },
    held: { c: { [A]: ['Dev1', 'Dev3'] } },
    want: { [A]: [] },
  },
  {
    ...one('unhealthy devices are not available, but count for the narrowest size', { [A]: 2 }),
    devices: {
      [A]: [
        ['Dev1', [0], false],
        ['Dev2', [1]],
        ['Dev3', [0]],
      ],
    },
    want: { [A]: [[[0, 1], false]] },
  },
  {
    ...one('an init container left a device on node 1: every hint must hold node 1', { [A]: 2 }),
    devices: { [A]: two() },
    held: { init: { [A]: ['Dev2'] } },
    reusable: { [A]: ['Dev2'] },
    want: {
      [A]: [
        [[1], true],
        [[0, 1], false],
      ],
    },
  },
  {
    ...one('a reused device without topology does not bind the hint', { [A]: 2 }),
    devices: {
      [A]: [
        ['Dev1', [0]],
        ['Dev2', [1]],
        ['Dev3', [0]],
        ['Dev0', []],
      ],
    },
    held: { init: { [A]: ['Dev0'] } },
    reusable: { [A]: ['Dev0'] },
    want: {
      [A]: [
        [[0], true],
        [[0, 1], false],
      ],
    },
  },
  {
    ...one('nodes a plugin names and the machine lacks are ignored', { [A]: 1 }),
    devices: {
      [A]: [
        ['Dev1', [0]],
        ['Dev2', [7]],
      ],
    },
    want: { [A]: [[[0], true]] },
  },
  {
    ...one('devices on nodes the machine lacks only: no hint on a 1-NUMA machine', { [A]: 2 }, { numaNodes: [0] }),
    devices: {
      [A]: [
        ['Dev1', [0]],
        ['Dev2', [0]],
        ['Dev3', [1]],
      ],
    },
    held: { other: { [A]: ['Dev2'] } },
    want: { [A]: [] },
  },
  {
    ...one('a device on two nodes counts for both', { [A]: 2 }, { numaNodes: [0, 1, 2] }),
    devices: {
      [A]: [
        ['Dev1', [0, 1]],
        ['Dev2', [1]],
        ['Dev3', [2]],
      ],
    },
    want: {
      [A]: [
        [[1], true],
        [[0, 1], false],
        [[0, 2], false],
        [[1, 2], false],
        [[0, 1, 2], false],
      ],
    },
  },
  {
    name: 'pod scope: the init container outweighs the app containers',
    numaNodes: [0, 1],
    devices: { [A]: two(), [B]: [['Dev1', []]] },
    initContainers: [['i', { [A]: 3 }]],
    containers: [
      ['a', { [A]: 1, [B]: 1 }],
      ['b', { [A]: 1 }],
    ],
    want: { [A]: [[[0, 1], true]], [B]: null },
  },
  {
    name: 'pod scope: regenerated from the devices the pod holds',
    numaNodes: [0, 1],
    devices: { [A]: two() },
    held: { a: { [A]: ['Dev1'] }, b: { [A]: ['Dev3'] } },
    containers: [
      ['a', { [A]: 1 }],
      ['b', { [A]: 1 }],
    ],
    want: {
      [A]: [
        [[0], true],
        [[0, 1], false],
      ],
    },
  },
  {
    name: 'pod scope: held fewer than asked: no possible affinity',
    numaNodes: [0, 1],
    devices: { [A]: two() },
    held: { a: { [A]: ['Dev1'] } },
    containers: [
      ['a', { [A]: 1 }],
      ['b', { [A]: 1 }],
    ],
    want: { [A]: [] },
  },
];

export interface AllocCase {
  name: string;
  devices: CaseDevice[];
  required: number;
  /** Devices of other containers (upstream's allocatedDevices). */
  inUse?: string[];
  reusable?: string[];
  /** The topology manager's affinity; undefined: none. */
  affinity?: number[];
  /** The plugin's GetPreferredAllocation answer; undefined: its options say it has none. */
  plugin?: string[];
  /** The chosen devices counted per NUMA node ("-1": no topology; a device under its first node), how many of them the plugin picked, and what it was asked. */
  want:
    | { perNode: Record<string, number>; fromPlugin: number; ask: { available: string[]; mustInclude: string[]; size: number } | null }
    | { error: string };
}

const devs = (nodes: (number | null)[]): CaseDevice[] => nodes.map((n, i) => [`Dev${i}`, n === null ? [] : [n]]);
const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `Dev${from + i}`);

export const ALLOC_CASES: AllocCase[] = [
  {
    name: 'Single Request, no alignment',
    devices: devs([null, null]),
    required: 1,
    affinity: [0, 1],
    want: { perNode: { '-1': 1 }, fromPlugin: 0, ask: null },
  },
  {
    name: 'Request for 1, partial alignment',
    devices: devs([null, 1]),
    required: 1,
    affinity: [1],
    want: { perNode: { '1': 1 }, fromPlugin: 0, ask: null },
  },
  {
    name: 'Request for 2, socket 1',
    devices: devs([0, 1, 0, 1]),
    required: 2,
    affinity: [1],
    want: { perNode: { '1': 2 }, fromPlugin: 0, ask: null },
  },
  {
    name: 'Request for 4, unsatisfiable, prefer socket 0',
    devices: devs([0, 1, 0, 1, 0, 1]),
    required: 4,
    affinity: [0],
    want: { perNode: { '0': 3, '1': 1 }, fromPlugin: 0, ask: null },
  },
  {
    name: 'Request for 4, multisocket',
    devices: devs([0, 1, 2, 3, 0, 1, 2, 3]),
    required: 4,
    affinity: [1, 3],
    want: { perNode: { '1': 2, '3': 2 }, fromPlugin: 0, ask: null },
  },
  {
    name: 'unaligned before those without topology',
    devices: devs([0, null, 1]),
    required: 2,
    affinity: [0],
    want: { perNode: { '0': 1, '1': 1 }, fromPlugin: 0, ask: null },
  },
  {
    name: 'Request for 5, socket 0, preferred aligned accepted, unaligned ignored',
    devices: devs([0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1]),
    required: 5,
    affinity: [0],
    plugin: ['Dev0', 'Dev1', 'Dev2', 'Dev10', 'Dev11'],
    want: { perNode: { '0': 5 }, fromPlugin: 3, ask: { available: ids(0, 8), mustInclude: [], size: 5 } },
  },
  {
    name: 'Request for 5, multisocket, preferred unaligned accepted, bogus ignored',
    devices: devs([0, 0, 0, 1, 1, 1, 1, 1]),
    required: 5,
    affinity: [0],
    plugin: ['Dev0', 'Dev1', 'Dev2', 'Dev4', 'bogus0'],
    want: { perNode: { '0': 3, '1': 2 }, fromPlugin: 4, ask: { available: ids(0, 8), mustInclude: ['Dev0', 'Dev1', 'Dev2'], size: 5 } },
  },
  {
    name: 'Request for 4, socket 0, 4 already allocated, 2 reusable',
    devices: devs(Array(8).fill(0)),
    required: 4,
    inUse: ['Dev0', 'Dev5', 'Dev4', 'Dev1'],
    reusable: ['Dev0', 'Dev5'],
    affinity: [0],
    plugin: ['Dev0', 'Dev5', 'Dev6', 'Dev7'],
    want: {
      perNode: { '0': 4 },
      fromPlugin: 4,
      ask: { available: ['Dev0', 'Dev2', 'Dev3', 'Dev5', 'Dev6', 'Dev7'], mustInclude: ['Dev0', 'Dev5'], size: 4 },
    },
  },
  {
    name: 'Request for 6, multisocket, 2 already allocated, 2 reusable',
    devices: devs([0, 0, 0, 0, 1, 1, 1, 1]),
    required: 6,
    inUse: ['Dev1', 'Dev6'],
    reusable: ['Dev1', 'Dev6'],
    affinity: [0],
    plugin: [],
    want: {
      perNode: { '0': 4, '1': 2 },
      fromPlugin: 0,
      ask: { available: ids(0, 8), mustInclude: ['Dev0', 'Dev1', 'Dev2', 'Dev3', 'Dev6'], size: 6 },
    },
  },
  {
    name: 'reused devices suffice: the plugin is not asked',
    devices: devs([0, 0, 1]),
    required: 1,
    inUse: ['Dev0'],
    reusable: ['Dev0'],
    affinity: [0],
    plugin: ['Dev2'],
    want: { perNode: { '0': 1 }, fromPlugin: 0, ask: null },
  },
  {
    name: 'exactly the aligned devices: the plugin is not asked',
    devices: devs([0, 0, 1]),
    required: 2,
    affinity: [0],
    plugin: ['Dev2'],
    want: { perNode: { '0': 2 }, fromPlugin: 0, ask: null },
  },
  {
    name: 'no affinity: the plugin is asked among all available',
    devices: devs([0, 1, null]),
    required: 1,
    inUse: ['Dev0'],
    plugin: ['Dev2'],
    want: { perNode: { '-1': 1 }, fromPlugin: 1, ask: { available: ['Dev1', 'Dev2'], mustInclude: [], size: 1 } },
  },
  {
    name: 'unhealthy ones are not available',
    devices: [
      ['Dev0', [0], false],
      ['Dev1', [0]],
      ['Dev2', [1]],
    ],
    required: 2,
    affinity: [0],
    want: { perNode: { '0': 1, '1': 1 }, fromPlugin: 0, ask: null },
  },
  {
    name: 'too few available',
    devices: devs([0, 1]),
    required: 2,
    inUse: ['Dev0'],
    affinity: [0],
    want: { error: 'requested number of devices unavailable for r. Requested: 2, Available: 1' },
  },
];

/** The answer's form of a choice: its devices counted by (first) NUMA node, and how many came from the plugin's answer. */
export function normalizeChoice(devices: CaseDevice[], chosen: string[], plugin: string[] | undefined) {
  const perNode: Record<string, number> = {};
  for (const id of chosen) {
    const n = String(devices.find((d) => d[0] === id)?.[1][0] ?? -1);
    perNode[n] = (perNode[n] ?? 0) + 1;
  }
  return { perNode, fromPlugin: chosen.filter((id) => plugin?.includes(id)).length };
}
