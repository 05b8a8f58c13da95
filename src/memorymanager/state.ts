// The memory manager's state (upstream's memorymanager/state): per NUMA node, per memory type
// (memory, hugepages-<size>) its total, reserved-for-system, allocatable, reserved-for-pods and
// free bytes, how many assignments touch it and the group of nodes it is allocated with; per
// container, its memory blocks. Plain data: the policy's decisions are pure functions over it.

/** state.MemoryTable; bytes. */
export interface MemoryTable {
  total: number;
  systemReserved: number;
  allocatable: number;
  reserved: number;
  free: number;
}

/** state.NUMANodeState. cells: the NUMA nodes this node is allocated together with (itself alone when free). */
export interface NUMANodeState {
  numberOfAssignments: number;
  memoryMap: Record<string, MemoryTable>;
  cells: number[];
}

/** state.NUMANodeMap: NUMA node id -> its state. */
export type MachineState = Map<number, NUMANodeState>;

/** state.Block: size bytes of a memory type over these NUMA nodes. */
export interface Block {
  numaAffinity: number[];
  type: string;
  size: number;
}

/** state.ContainerMemoryAssignments: pod UID -> container name -> blocks. */
export type Assignments = Map<string, Map<string, Block[]>>;

export interface MemoryState {
  machine: MachineState;
  assignments: Assignments;
}

export const emptyMemoryState = (): MemoryState => ({ machine: new Map(), assignments: new Map() });

export function cloneMachine(m: MachineState): MachineState {
  const out: MachineState = new Map();
  for (const [id, n] of m) {
    const memoryMap: Record<string, MemoryTable> = {};
    for (const [t, v] of Object.entries(n.memoryMap)) memoryMap[t] = { ...v };
    out.set(id, { numberOfAssignments: n.numberOfAssignments, memoryMap, cells: [...n.cells] });
  }
  return out;
}

export const blocksOf = (s: MemoryState, podUID: string, name: string): Block[] | undefined => s.assignments.get(podUID)?.get(name);

export function setBlocks(s: MemoryState, podUID: string, name: string, blocks: Block[]): void {
  let pod = s.assignments.get(podUID);
  if (!pod) s.assignments.set(podUID, (pod = new Map()));
  pod.set(
    name,
    blocks.map((b) => ({ ...b, numaAffinity: [...b.numaAffinity] })),
  );
}

/** state.Delete: the container's entry, and its pod's once empty. */
export function deleteBlocks(s: MemoryState, podUID: string, name: string): void {
  const pod = s.assignments.get(podUID);
  if (!pod) return;
  pod.delete(name);
  if (pod.size === 0) s.assignments.delete(podUID);
}
