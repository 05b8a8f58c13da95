// What each signal reads now, from the Summary (upstream's makeSignalObservations): the
// amount available, the capacity percentages are taken of, and when it was measured (so a
// stale figure does not evict twice).
import type { ContainerStats, FsStats, Summary } from '../stats/summary-types.ts';
import type { Signal } from './types.ts';

export interface Observation {
  available: number;
  capacity: number;
  /** Epoch ms of the stats; undefined when the stats carry no time. */
  timeMs?: number;
}
export type Observations = Partial<Record<Signal, Observation>>;

/**
 * Figures that fill in for the Summary where it has none; upstream reads the Summary alone.
 * memoryCapacityBytes: the machine's memory, when the node's memory stats have a working
 * set but no availableBytes. allocatableMemoryBytes: the pods cgroup's limit, when the
 * "pods" system container has a working set but no availableBytes. pidMax: when rlimit
 * has a process count but no maximum.
 */
export interface NodeFacts {
  memoryCapacityBytes?: number;
  allocatableMemoryBytes?: number;
  pidMax?: number;
}

const timeOf = (t: string | undefined) => {
  const ms = t === undefined ? NaN : Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
};

/** available = limit - working set; capacity = available + working set, as upstream computes both. */
function memoryObservation(m: ContainerStats['memory'], limit: number | undefined): Observation | undefined {
  if (m?.workingSetBytes === undefined) return undefined;
  const available = m.availableBytes ?? (limit !== undefined ? Math.max(0, limit - m.workingSetBytes) : undefined);
  if (available === undefined) return undefined;
  return { available, capacity: available + m.workingSetBytes, timeMs: timeOf(m.time) };
}

function fsObservations(fs: FsStats | undefined, bytes: Signal, inodes: Signal, out: Observations): void {
  if (!fs) return;
  if (fs.availableBytes !== undefined && fs.capacityBytes !== undefined) {
    out[bytes] = { available: fs.availableBytes, capacity: fs.capacityBytes, timeMs: timeOf(fs.time) };
  }
  if (fs.inodesFree !== undefined && fs.inodes !== undefined) {
    out[inodes] = { available: fs.inodesFree, capacity: fs.inodes, timeMs: timeOf(fs.time) };
  }
}

/** Pure: the observations a Summary supports; a signal without the figures it needs is absent (never met). */
export function makeObservations(summary: Summary, facts: NodeFacts = {}): Observations {
  const out: Observations = {};
  const node = summary.node;
  const memory = memoryObservation(node.memory, facts.memoryCapacityBytes);
  if (memory) out['memory.available'] = memory;
  const pods = node.systemContainers?.find((c) => c.name === 'pods');
  const allocatable = memoryObservation(pods?.memory, facts.allocatableMemoryBytes);
  if (allocatable) out['allocatableMemory.available'] = allocatable;
  fsObservations(node.fs, 'nodefs.available', 'nodefs.inodesFree', out);
  fsObservations(node.runtime?.imageFs, 'imagefs.available', 'imagefs.inodesFree', out);
  // Writable layers sit on the node's filesystem when the runtime reports no filesystem of
  // their own; upstream's Summary always names one, this fills the same figure in.
  fsObservations(node.runtime?.containerFs ?? node.fs, 'containerfs.available', 'containerfs.inodesFree', out);
  const maxpid = node.rlimit?.maxpid ?? facts.pidMax;
  if (node.rlimit?.curproc !== undefined && maxpid !== undefined) {
    out['pid.available'] = { available: maxpid - node.rlimit.curproc, capacity: maxpid, timeMs: timeOf(node.rlimit.time) };
  }
  return out;
}
