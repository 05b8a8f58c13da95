// The hint-merge cases: src/topologymanager/policy.test.ts checks ours against `want`;
// hack/topologymanager-check.sh runs upstream's own Policy.Merge over them and checks `want` too.
// A hint is [nodes, preferred] (nodes null: no preference); a provider is null (no hints at all),
// or per resource its hints (null: no preference for it, []: no possible affinity).

export type Hint = [nodes: number[] | null, preferred: boolean];
export type Provider = Record<string, Hint[] | null> | null;

export interface MergeCase {
  name: string;
  policy: 'best-effort' | 'restricted' | 'single-numa-node';
  nodes: number[];
  /** Per node, its distances to nodes 0..n-1 (only with prefer-closest-numa-nodes). */
  distances?: number[][];
  preferClosest?: boolean;
  providers: Provider[];
  want: { nodes: number[] | null; preferred: boolean; admit: boolean };
}

const two = [0, 1];
const four = [0, 1, 2, 3];
// 4 nodes: 0-1 close, 2-3 close, far across.
const dist4 = [
  [10, 11, 20, 20],
  [11, 10, 20, 20],
  [20, 20, 10, 11],
  [20, 20, 11, 10],
];

const each = (
  name: string,
  nodes: number[],
  providers: Provider[],
  want: Record<MergeCase['policy'], [number[] | null, boolean, boolean]>,
  extra: Partial<MergeCase> = {},
): MergeCase[] =>
  (Object.keys(want) as MergeCase['policy'][]).map((policy) => ({
    name: `${policy}: ${name}`,
    policy,
    nodes,
    providers,
    want: { nodes: want[policy][0], preferred: want[policy][1], admit: want[policy][2] },
    ...extra,
  }));

export const MERGE_CASES: MergeCase[] = [
  ...each('no providers', two, [], {
    'best-effort': [two, true, true],
    restricted: [two, true, true],
    'single-numa-node': [null, true, true],
  }),
  ...each('one provider with no hints', two, [null], {
    'best-effort': [two, true, true],
    restricted: [two, true, true],
    'single-numa-node': [null, true, true],
  }),
  ...each('a resource with no possible affinity', two, [{ cpu: [] }], {
    'best-effort': [two, false, true],
    restricted: [two, false, false],
    'single-numa-node': [null, false, false],
  }),
  ...each('a resource with no preference', two, [{ cpu: null }], {
    'best-effort': [two, true, true],
    restricted: [two, true, true],
    'single-numa-node': [null, true, true],
  }),
  ...each('two providers, one hint each, same single node, both preferred', two, [{ cpu: [[[0], true]] }, { memory: [[[0], true]] }], {
    'best-effort': [[0], true, true],
    restricted: [[0], true, true],
    'single-numa-node': [[0], true, true],
  }),
  ...each('two providers, one hint each, both nodes, both preferred', two, [{ cpu: [[two, true]] }, { memory: [[two, true]] }], {
    'best-effort': [two, true, true],
    restricted: [two, true, true],
    'single-numa-node': [null, false, false],
  }),
  ...each('two providers, no common node', two, [{ cpu: [[[0], true]] }, { memory: [[[1], true]] }], {
    'best-effort': [two, false, true],
    restricted: [two, false, false],
    'single-numa-node': [null, false, false],
  }),
  ...each(
    'one with two hints, one with a single matching hint',
    two,
    [
      {
        cpu: [
          [[0], true],
          [[1], true],
        ],
      },
      { memory: [[[1], true]] },
    ],
    { 'best-effort': [[1], true, true], restricted: [[1], true, true], 'single-numa-node': [[1], true, true] },
  ),
  ...each(
    'a wider preferred hint beats a narrower one not preferred',
    two,
    [
      {
        cpu: [
          [[0], false],
          [two, true],
        ],
      },
      {
        memory: [
          [[0], false],
          [two, true],
        ],
      },
    ],
    { 'best-effort': [two, true, true], restricted: [two, true, true], 'single-numa-node': [null, false, false] },
  ),
  ...each('same mask, one preferred, one not', two, [{ cpu: [[[0], true]] }, { memory: [[[0], false]] }], {
    'best-effort': [[0], false, true],
    restricted: [[0], false, false],
    'single-numa-node': [null, false, false],
  }),
  ...each(
    'multiple resources of one provider',
    two,
    [
      {
        cpu: [
          [[0], true],
          [two, false],
        ],
        'hugepages-2Mi': [[two, true]],
      },
    ],
    { 'best-effort': [two, false, true], restricted: [two, false, false], 'single-numa-node': [null, false, false] },
  ),
  ...each(
    'none preferred: the widest of the narrowest per resource wins',
    four,
    [
      {
        cpu: [
          [[0], false],
          [[0, 1], false],
          [[0, 1, 2], false],
        ],
      },
      {
        memory: [
          [[0, 1], false],
          [[0, 1, 2], false],
        ],
      },
    ],
    { 'best-effort': [[0, 1], false, true], restricted: [[0, 1], false, false], 'single-numa-node': [null, false, false] },
  ),
  ...each(
    'none preferred, none at the best count: the widest below it',
    four,
    [
      {
        cpu: [
          [[0, 1, 2], false],
          [[1], false],
        ],
      },
      { memory: [[[0, 1, 2, 3], false]] },
    ],
    { 'best-effort': [[0, 1, 2], false, true], restricted: [[0, 1, 2], false, false], 'single-numa-node': [null, false, false] },
  ),
  ...each(
    'single-node hints on four nodes: the lowest',
    four,
    [
      {
        cpu: [
          [[2], true],
          [[1], true],
          [[0, 1], false],
        ],
      },
      {
        memory: [
          [[1], true],
          [[2], true],
        ],
      },
    ],
    { 'best-effort': [[1], true, true], restricted: [[1], true, true], 'single-numa-node': [[1], true, true] },
  ),
  ...each(
    'prefer-closest-numa-nodes: equal width, the closer pair',
    four,
    [
      {
        cpu: [
          [[0, 2], true],
          [[2, 3], true],
        ],
      },
    ],
    { 'best-effort': [[2, 3], true, true], restricted: [[2, 3], true, true] } as Record<
      MergeCase['policy'],
      [number[] | null, boolean, boolean]
    >,
    { preferClosest: true, distances: dist4 },
  ),
  ...each(
    'without prefer-closest-numa-nodes: equal width, the lower mask',
    four,
    [
      {
        cpu: [
          [[0, 2], true],
          [[2, 3], true],
        ],
      },
    ],
    { 'best-effort': [[0, 2], true, true], restricted: [[0, 2], true, true] } as Record<
      MergeCase['policy'],
      [number[] | null, boolean, boolean]
    >,
  ),
];
