// Synthetic topologies for the tests, numbered as Linux numbers x86 CPUs: the first thread of
// every core first (socket by socket, NUMA node by node), then the second threads in the same order.
import { CPUSet } from './cpuset.ts';
import { type CPUTopology, type SysfsCPU, discoverTopology } from './topology.ts';

export interface Shape {
  sockets: number;
  numaPerSocket: number;
  coresPerNuma: number;
  threadsPerCore: number;
  /** Uncore (L3) caches per NUMA node; 0: sysfs shows no L3. */
  uncorePerNuma?: number;
  /** All CPUs in NUMA node 0 whatever their socket (sockets outnumber NUMA nodes). */
  oneNuma?: boolean;
}

export function sysfsOf(s: Shape): { cpus: SysfsCPU[]; numaNodes: { id: number; cpus: CPUSet }[] } {
  const cores = s.sockets * s.numaPerSocket * s.coresPerNuma;
  const cpus: SysfsCPU[] = [];
  const nodes = new Map<number, number[]>();
  const uncore = s.uncorePerNuma ?? 0;
  for (let t = 0; t < s.threadsPerCore; t++)
    for (let core = 0; core < cores; core++) {
      const numa = s.oneNuma ? 0 : Math.floor(core / s.coresPerNuma);
      const socket = Math.floor(Math.floor(core / s.coresPerNuma) / s.numaPerSocket);
      const cpu = t * cores + core;
      const inNuma = core % s.coresPerNuma;
      const l3Id = uncore
        ? Math.floor(core / s.coresPerNuma) * uncore + Math.floor(inNuma / Math.ceil(s.coresPerNuma / uncore))
        : undefined;
      cpus.push({ cpu, packageId: socket, coreId: core - socket * s.numaPerSocket * s.coresPerNuma, l3Id });
      nodes.set(numa, [...(nodes.get(numa) ?? []), cpu]);
    }
  return { cpus, numaNodes: [...nodes].map(([id, ids]) => ({ id, cpus: CPUSet.of(...ids) })) };
}

type Facts = { cpus: SysfsCPU[]; numaNodes: { id: number; cpus: CPUSet }[] };

/** The sysfs facts of a shape, or the facts themselves. */
export const factsOf = (s: Shape | Facts): Facts => ('cpus' in s ? s : sysfsOf(s));

export function topologyOf(s: Shape | Facts): CPUTopology {
  const { cpus, numaNodes } = factsOf(s);
  return discoverTopology(cpus, numaNodes);
}

/** This machine's kind: 1 socket, 2 cores, no SMT. */
export const SINGLE_SOCKET_2_CORES: Shape = { sockets: 1, numaPerSocket: 1, coresPerNuma: 2, threadsPerCore: 1 };
/** upstream's topoSingleSocketHT: 1 socket, 4 cores, 2 threads (CPUs 0-3, siblings 4-7). */
export const SINGLE_SOCKET_HT: Shape = { sockets: 1, numaPerSocket: 1, coresPerNuma: 4, threadsPerCore: 2 };
/** 2 sockets, one NUMA node each, 6 cores, 2 threads. */
export const DUAL_SOCKET_HT: Shape = { sockets: 2, numaPerSocket: 1, coresPerNuma: 3, threadsPerCore: 2 };
/** 2 sockets x 2 NUMA nodes x 8 cores x 2 threads (64 CPUs). */
export const DUAL_SOCKET_MULTI_NUMA_HT: Shape = { sockets: 2, numaPerSocket: 2, coresPerNuma: 8, threadsPerCore: 2 };
/** 1 socket, 2 NUMA nodes, 4 cores each with two uncore caches each, 2 threads. */
export const SINGLE_SOCKET_UNCORE_HT: Shape = { sockets: 1, numaPerSocket: 2, coresPerNuma: 4, threadsPerCore: 2, uncorePerNuma: 2 };

/**
 * upstream's topoDualSocketHT (policy_test.go), numbered as its tests number it: CPU i on socket
 * i % 2 (its NUMA node), core i % 6, so siblings are i and i + 6 and the sockets alternate.
 */
export const UPSTREAM_DUAL_SOCKET_HT: { cpus: SysfsCPU[]; numaNodes: { id: number; cpus: CPUSet }[] } = {
  cpus: Array.from({ length: 12 }, (_, cpu) => ({ cpu, packageId: cpu % 2, coreId: cpu % 6 })),
  numaNodes: [
    { id: 0, cpus: CPUSet.of(0, 2, 4, 6, 8, 10) },
    { id: 1, cpus: CPUSet.of(1, 3, 5, 7, 9, 11) },
  ],
};
