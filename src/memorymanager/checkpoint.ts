// The memory manager's checkpoint, <root-dir>/memory_manager_state, in upstream's v1 format
// (state.MemoryManagerCheckpointV1, written while PodLevelResourceManagers is off) with upstream's
// checksum, so a node switched between kubelet-ts and the upstream kubelet keeps its containers'
// memory. A checkpoint of another policy is refused, as upstream's restoreState.
import { join } from 'node:path';
import { readCheckpointFile, writeCheckpointFile } from '../checkpoint/file-store.ts';
import type { Assignments, Block, MachineState, MemoryState, MemoryTable, NUMANodeState } from './state.ts';

export const MEMORY_MANAGER_STATE_FILE = 'memory_manager_state';

export interface MemoryCheckpoint {
  policyName: string;
  machineState: MachineState;
  entries: Assignments;
}

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byNumber = (a: number, b: number) => a - b;

/**
 * dump.ForHash of the checkpoint with its checksum 0 (go-spew: sorted keys, "%#v" types, pointers
 * inside maps as "<*>", strings unquoted), under the name "MemoryManagerCheckpoint" as
 * MemoryManagerCheckpointV1.MarshalCheckpoint hashes it.
 */
export function spewCheckpoint(c: MemoryCheckpoint): string {
  const table = (t: MemoryTable) =>
    `<*>{TotalMemSize:(uint64)${t.total} SystemReserved:(uint64)${t.systemReserved} Allocatable:(uint64)${t.allocatable} Reserved:(uint64)${t.reserved} Free:(uint64)${t.free}}`;
  const ints = (xs: number[]) => `[${xs.join(' ')}]`;
  const node = (n: NUMANodeState) =>
    `<*>{NumberOfAssignments:(int)${n.numberOfAssignments} MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[${Object.keys(n.memoryMap)
      .sort(byString)
      .map((t) => `${t}:${table(n.memoryMap[t]!)}`)
      .join(' ')}] Cells:([]int)${ints(n.cells)}}`;
  const block = (b: Block) => `{NUMAAffinity:([]int)${ints(b.numaAffinity)} Type:(v1.ResourceName)${b.type} Size:(uint64)${b.size}}`;
  const machine = [...c.machineState.keys()]
    .sort(byNumber)
    .map((id) => `${id}:${node(c.machineState.get(id)!)}`)
    .join(' ');
  const entries = [...c.entries.keys()]
    .sort(byString)
    .map((pod) => {
      const cs = c.entries.get(pod)!;
      return `${pod}:map[${[...cs.keys()]
        .sort(byString)
        .map((name) => `${name}:[${cs.get(name)!.map(block).join(' ')}]`)
        .join(' ')}]`;
    })
    .join(' ');
  return (
    `(*state.MemoryManagerCheckpoint){PolicyName:(string)${c.policyName} MachineState:(state.NUMANodeMap)map[${machine}] ` +
    `Entries:(state.ContainerMemoryAssignments)map[${entries}] Checksum:(checksum.Checksum)0}`
  );
}

/** hash/fnv New32a over the UTF-8 bytes. */
function fnv32a(text: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(text, 'utf8')) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

export const checksum = (c: MemoryCheckpoint): number => fnv32a(spewCheckpoint(c));

/** Go's json.Marshal: map keys sorted as strings (so NUMA node "10" before "2"), entries left out when empty. */
export function marshalCheckpoint(c: MemoryCheckpoint): string {
  const q = JSON.stringify;
  const table = (t: MemoryTable) =>
    `{"total":${t.total},"systemReserved":${t.systemReserved},"allocatable":${t.allocatable},"reserved":${t.reserved},"free":${t.free}}`;
  const node = (n: NUMANodeState) =>
    `{"numberOfAssignments":${n.numberOfAssignments},"memoryMap":{${Object.keys(n.memoryMap)
      .sort(byString)
      .map((t) => `${q(t)}:${table(n.memoryMap[t]!)}`)
      .join(',')}},"cells":[${n.cells.join(',')}]}`;
  const block = (b: Block) => `{"numaAffinity":[${b.numaAffinity.join(',')}],"type":${q(b.type)},"size":${b.size}}`;
  const machine = [...c.machineState.keys()]
    .map(String)
    .sort(byString)
    .map((id) => `${q(id)}:${node(c.machineState.get(Number(id))!)}`)
    .join(',');
  const pods = [...c.entries.keys()].sort(byString);
  const entries = pods.length
    ? `,"entries":{${pods
        .map((pod) => {
          const cs = c.entries.get(pod)!;
          return `${q(pod)}:{${[...cs.keys()]
            .sort(byString)
            .map((name) => `${q(name)}:[${cs.get(name)!.map(block).join(',')}]`)
            .join(',')}}`;
        })
        .join(',')}}`
    : '';
  return `{"policyName":${q(c.policyName)},"machineState":{${machine}}${entries},"checksum":${checksum(c)}}`;
}

const num = (v: unknown, what: string): number => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new Error(`json: cannot unmarshal ${what}`);
  return v;
};

/** A file's text as a checkpoint; throws "checkpoint is corrupted" when a non-zero checksum does not match. */
export function unmarshalCheckpoint(text: string): MemoryCheckpoint {
  const raw = JSON.parse(text) as {
    policyName?: string;
    machineState?: Record<string, unknown>;
    entries?: Record<string, unknown>;
    checksum?: number;
  };
  const machineState: MachineState = new Map();
  for (const [id, n] of Object.entries(raw.machineState ?? {})) {
    const v = n as { numberOfAssignments?: unknown; memoryMap?: Record<string, Record<string, unknown>>; cells?: unknown[] };
    const memoryMap: Record<string, MemoryTable> = {};
    for (const [t, m] of Object.entries(v.memoryMap ?? {}))
      memoryMap[t] = {
        total: num(m.total ?? 0, 'total'),
        systemReserved: num(m.systemReserved ?? 0, 'systemReserved'),
        allocatable: num(m.allocatable ?? 0, 'allocatable'),
        reserved: num(m.reserved ?? 0, 'reserved'),
        free: num(m.free ?? 0, 'free'),
      };
    machineState.set(Number(id), {
      numberOfAssignments: Number(v.numberOfAssignments ?? 0),
      memoryMap,
      cells: (v.cells ?? []).map((x) => num(x, 'cells')),
    });
  }
  const entries: Assignments = new Map();
  for (const [pod, cs] of Object.entries(raw.entries ?? {})) {
    const m = new Map<string, Block[]>();
    for (const [name, blocks] of Object.entries(cs as Record<string, Block[]>))
      m.set(
        name,
        (blocks ?? []).map((b) => ({
          numaAffinity: (b.numaAffinity ?? []).map((x) => num(x, 'numaAffinity')),
          type: b.type,
          size: num(b.size, 'size'),
        })),
      );
    entries.set(pod, m);
  }
  const c = { policyName: raw.policyName ?? '', machineState, entries };
  const sum = raw.checksum ?? 0;
  if (sum !== 0 && sum !== checksum(c)) throw new Error('checkpoint is corrupted');
  return c;
}

/**
 * restoreState: the file's state, checked against the policy; none yet: an empty state, written.
 * Throws with upstream's text (the kubelet does not start).
 */
export function restoreState(rootDir: string, policyName: string): MemoryState {
  const path = join(rootDir, MEMORY_MANAGER_STATE_FILE);
  const text = readCheckpointFile(path);
  const fail = (err: string) =>
    new Error(
      `could not restore state from checkpoint: ${err}, please drain this node and delete the memory manager checkpoint file "${path}" before restarting Kubelet`,
    );
  if (text === undefined) {
    const s = { machine: new Map(), assignments: new Map() };
    writeState(rootDir, policyName, s);
    return s;
  }
  let c: MemoryCheckpoint;
  try {
    c = unmarshalCheckpoint(text);
  } catch (e) {
    throw fail((e as Error).message);
  }
  if (c.policyName !== policyName)
    throw fail(`[memorymanager] configured policy "${policyName}" differs from state checkpoint policy "${c.policyName}"`);
  return { machine: c.machineState, assignments: c.entries };
}

/** storeState: the whole state, written whole or not at all. */
export function writeState(rootDir: string, policyName: string, s: MemoryState): void {
  writeCheckpointFile(
    join(rootDir, MEMORY_MANAGER_STATE_FILE),
    marshalCheckpoint({ policyName, machineState: s.machine, entries: s.assignments }),
  );
}
