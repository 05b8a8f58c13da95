// The static memory policy's cases: src/memorymanager/static-policy.test.ts checks ours against
// `want`; hack/memorymanager-check.sh runs upstream's own static policy over them and checks too.
// Each step allocates a pod's containers in admission order with the topology manager's hint
// (hint null: none), or removes one container ("pod/container"). After each step: the error (if
// any, and the steps stop), then per NUMA node "free memory bytes / cells", then every
// container's blocks as "pod/container=type:size@nodes;...", sorted.

export interface CaseContainer {
  name: string;
  /** memory and hugepages-* requests (= limits), bytes as text ("1Gi"); cpu "1" is added. */
  requests: Record<string, string>;
  init?: boolean;
  sidecar?: boolean;
  /** Memory limit above the request: a Burstable pod. */
  burstable?: boolean;
}

export interface Step {
  pod?: string;
  containers?: CaseContainer[];
  hint?: number[] | null;
  remove?: string;
}

export interface StepWant {
  error?: string;
  nodes: string[];
  blocks: string[];
}

export interface MemoryCase {
  name: string;
  /** Per NUMA node: memory in Gi, and 2Mi hugepages count. */
  nodes: { memGi: number; hugepages2Mi?: number }[];
  /** reservedMemory: node -> type -> quantity text. */
  reserved: Record<number, Record<string, string>>;
  steps: Step[];
  want: StepWant[];
}

const c = (name: string, memory: string, o: Partial<CaseContainer> = {}): CaseContainer => ({ name, requests: { memory }, ...o });
const Gi = 1024 ** 3;
const g = (n: number) => String(n * Gi);
const twoNodes = [{ memGi: 4 }, { memGi: 4 }];
const reserved = { 0: { memory: '1Gi' } };

export const MEMORY_CASES: MemoryCase[] = [
  {
    name: 'no hint: the narrowest node holding it',
    nodes: twoNodes,
    reserved,
    steps: [{ pod: 'a', containers: [c('c', '1Gi')], hint: null }],
    want: [{ nodes: [`${g(2)}/0`, `${g(4)}/1`], blocks: [`a/c=memory:${g(1)}@0`] }],
  },
  {
    name: "the topology manager's hint",
    nodes: twoNodes,
    reserved,
    steps: [{ pod: 'a', containers: [c('c', '1Gi')], hint: [1] }],
    want: [{ nodes: [`${g(3)}/0`, `${g(3)}/1`], blocks: [`a/c=memory:${g(1)}@1`] }],
  },
  {
    name: 'too big for a node: both as a group, node 0 first',
    nodes: twoNodes,
    reserved,
    steps: [{ pod: 'a', containers: [c('c', '5Gi')], hint: null }],
    want: [{ nodes: ['0/0,1', `${g(2)}/0,1`], blocks: [`a/c=memory:${g(5)}@0,1`] }],
  },
  {
    name: 'a hint too small is extended',
    nodes: twoNodes,
    reserved,
    steps: [{ pod: 'a', containers: [c('c', '5Gi')], hint: [1] }],
    want: [{ nodes: ['0/0,1', `${g(2)}/0,1`], blocks: [`a/c=memory:${g(5)}@0,1`] }],
  },
  {
    name: 'too big for the machine',
    nodes: twoNodes,
    reserved,
    steps: [{ pod: 'a', containers: [c('c', '8Gi')], hint: null }],
    want: [
      {
        error: '[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available',
        nodes: [`${g(3)}/0`, `${g(4)}/1`],
        blocks: [],
      },
    ],
  },
  {
    name: 'burstable pods are left alone',
    nodes: twoNodes,
    reserved,
    steps: [{ pod: 'a', containers: [c('c', '1Gi', { burstable: true })], hint: null }],
    want: [{ nodes: [`${g(3)}/0`, `${g(4)}/1`], blocks: [] }],
  },
  {
    name: 'a node allocated alone never joins a group',
    nodes: twoNodes,
    reserved,
    steps: [
      { pod: 'a', containers: [c('c', '1Gi')], hint: null },
      { pod: 'b', containers: [c('c', '5Gi')], hint: null },
    ],
    want: [
      { nodes: [`${g(2)}/0`, `${g(4)}/1`], blocks: [`a/c=memory:${g(1)}@0`] },
      {
        error: '[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available',
        nodes: [`${g(2)}/0`, `${g(4)}/1`],
        blocks: [`a/c=memory:${g(1)}@0`],
      },
    ],
  },
  {
    name: 'a group is reused whole, then freed',
    nodes: twoNodes,
    reserved,
    steps: [
      { pod: 'a', containers: [c('c', '5Gi')], hint: null },
      { pod: 'b', containers: [c('c', '1Gi')], hint: null },
      { remove: 'a/c' },
      { remove: 'b/c' },
    ],
    want: [
      { nodes: ['0/0,1', `${g(2)}/0,1`], blocks: [`a/c=memory:${g(5)}@0,1`] },
      { nodes: ['0/0,1', `${g(1)}/0,1`], blocks: [`a/c=memory:${g(5)}@0,1`, `b/c=memory:${g(1)}@0,1`] },
      // Released in node order: node 0's 3Gi, then 2Gi of node 1's.
      { nodes: [`${g(3)}/0,1`, `${g(3)}/0,1`], blocks: [`b/c=memory:${g(1)}@0,1`] },
      { nodes: [`${g(3)}/0`, `${g(4)}/1`], blocks: [] },
    ],
  },
  {
    name: "an init container's memory is reused by the app container",
    nodes: twoNodes,
    reserved,
    steps: [{ pod: 'a', containers: [c('i', '2Gi', { init: true }), c('c', '1Gi')], hint: null }],
    want: [{ nodes: [`${g(1)}/0`, `${g(4)}/1`], blocks: [`a/c=memory:${g(1)}@0`, `a/i=memory:${g(1)}@0`] }],
  },
  {
    name: 'hugepages and memory on the same node',
    nodes: [
      { memGi: 4, hugepages2Mi: 512 },
      { memGi: 4, hugepages2Mi: 512 },
    ],
    reserved,
    steps: [{ pod: 'a', containers: [{ name: 'c', requests: { memory: '1Gi', 'hugepages-2Mi': '512Mi' } }], hint: null }],
    want: [{ nodes: [`${g(1)}/0`, `${g(3)}/1`], blocks: [`a/c=hugepages-2Mi:${g(0.5)}@0;memory:${g(1)}@0`] }],
  },
  {
    name: 'one node, as this machine: a fitting pod, one too big',
    nodes: [{ memGi: 4 }],
    reserved,
    steps: [
      { pod: 'a', containers: [c('c', '2Gi')], hint: null },
      { pod: 'b', containers: [c('c', '2Gi')], hint: null },
    ],
    want: [
      { nodes: [`${g(1)}/0`], blocks: [`a/c=memory:${g(2)}@0`] },
      {
        error: '[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available',
        nodes: [`${g(1)}/0`],
        blocks: [`a/c=memory:${g(2)}@0`],
      },
    ],
  },
];
