// The node's CPU topology (sockets, NUMA nodes, cores, threads, uncore caches), as upstream's
// cpumanager/topology over what cAdvisor reads from sysfs. Discovery is pure over plain data
// (discoverTopology); readSysfsTopology is the thin reader of /sys.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CPUSet, parseCPUSet } from './cpuset.ts';

/** upstream's CPUInfo; core is the lowest CPU id among the core's threads (getUniqueCoreID), unique on the node. */
export interface CPUInfo {
  numaNode: number;
  socket: number;
  core: number;
  uncoreCache: number;
}

/** upstream's CPUDetails: the CPUs and what holds each; every query answers as a CPUSet of ids. */
export class CPUDetails {
  readonly byCPU: ReadonlyMap<number, CPUInfo>;
  constructor(byCPU: ReadonlyMap<number, CPUInfo>) {
    this.byCPU = byCPU;
  }

  keepOnly(cpus: CPUSet): CPUDetails {
    return new CPUDetails(new Map([...this.byCPU].filter(([cpu]) => cpus.has(cpu))));
  }
  info(cpu: number): CPUInfo | undefined {
    return this.byCPU.get(cpu);
  }
  private ids(pick: (i: CPUInfo) => number, where: (i: CPUInfo) => boolean = () => true): CPUSet {
    return CPUSet.of(...[...this.byCPU.values()].filter(where).map(pick));
  }
  private cpusWhere(where: (i: CPUInfo) => boolean): CPUSet {
    return CPUSet.of(...[...this.byCPU].filter(([, i]) => where(i)).map(([cpu]) => cpu));
  }

  cpus(): CPUSet {
    return CPUSet.of(...this.byCPU.keys());
  }
  numaNodes(): CPUSet {
    return this.ids((i) => i.numaNode);
  }
  sockets(): CPUSet {
    return this.ids((i) => i.socket);
  }
  cores(): CPUSet {
    return this.ids((i) => i.core);
  }
  uncoreCaches(): CPUSet {
    return this.ids((i) => i.uncoreCache);
  }
  numaNodesInSockets(...ids: number[]): CPUSet {
    return this.ids(
      (i) => i.numaNode,
      (i) => ids.includes(i.socket),
    );
  }
  socketsInNUMANodes(...ids: number[]): CPUSet {
    return this.ids(
      (i) => i.socket,
      (i) => ids.includes(i.numaNode),
    );
  }
  coresInNUMANodes(...ids: number[]): CPUSet {
    return this.ids(
      (i) => i.core,
      (i) => ids.includes(i.numaNode),
    );
  }
  coresInSockets(...ids: number[]): CPUSet {
    return this.ids(
      (i) => i.core,
      (i) => ids.includes(i.socket),
    );
  }
  uncoreInNUMANodes(...ids: number[]): CPUSet {
    return this.ids(
      (i) => i.uncoreCache,
      (i) => ids.includes(i.numaNode),
    );
  }
  /** CoresNeededInUncoreCache: the lowest n cores of these uncore caches (all of them when fewer). */
  coresNeededInUncoreCache(n: number, ...ids: number[]): CPUSet {
    const cores = this.ids(
      (i) => i.core,
      (i) => ids.includes(i.uncoreCache),
    );
    return cores.size <= n ? cores : CPUSet.of(...cores.list().slice(0, n));
  }
  cpusInNUMANodes(...ids: number[]): CPUSet {
    return this.cpusWhere((i) => ids.includes(i.numaNode));
  }
  cpusInSockets(...ids: number[]): CPUSet {
    return this.cpusWhere((i) => ids.includes(i.socket));
  }
  cpusInCores(...ids: number[]): CPUSet {
    return this.cpusWhere((i) => ids.includes(i.core));
  }
  cpusInUncoreCaches(...ids: number[]): CPUSet {
    return this.cpusWhere((i) => ids.includes(i.uncoreCache));
  }
}

/** upstream's CPUTopology. */
export interface CPUTopology {
  numCPUs: number;
  /** Physical cores. */
  numCores: number;
  numSockets: number;
  numNUMANodes: number;
  numUncoreCaches: number;
  details: CPUDetails;
}

const per = (n: number, d: number) => (d === 0 ? 0 : Math.floor(n / d));
export const cpusPerCore = (t: CPUTopology) => per(t.numCPUs, t.numCores);
export const cpusPerSocket = (t: CPUTopology) => per(t.numCPUs, t.numSockets);
export const cpusPerUncore = (t: CPUTopology) => per(t.numCPUs, t.numUncoreCaches);

/** isAlignedAtUncoreCache: all in one uncore cache (one CPU or none is). */
export function alignedAtUncoreCache(t: CPUTopology, cpus: CPUSet): boolean {
  const caches = cpus.list().map((c) => t.details.info(c)?.uncoreCache);
  return caches.length <= 1 || (caches[0] !== undefined && caches.every((c) => c === caches[0]));
}

/** updateAllocationPerNUMAMetric's count: how many of these CPUs each NUMA node holds (nodes holding none absent). */
export function cpusPerNUMA(t: CPUTopology, cpus: CPUSet): Map<number, number> {
  const count = new Map<number, number>();
  for (const cpu of cpus.list()) {
    const numa = t.details.info(cpu)?.numaNode ?? 0;
    count.set(numa, (count.get(numa) ?? 0) + 1);
  }
  return count;
}

/** One online CPU as sysfs shows it: topology/physical_package_id, topology/core_id, the id of its level-3 cache (none: undefined). */
export interface SysfsCPU {
  cpu: number;
  packageId: number;
  coreId: number;
  l3Id?: number;
}

/**
 * upstream's Discover over cAdvisor's machine info, from sysfs facts: a core is the CPUs of one
 * NUMA node sharing (physical_package_id, core_id), named by its lowest CPU id; its uncore cache
 * is its L3's id, else its socket (getUncoreCacheID). No NUMA node in sysfs: all in node 0, as cAdvisor.
 */
export function discoverTopology(cpus: SysfsCPU[], numaNodes: { id: number; cpus: CPUSet }[]): CPUTopology {
  if (cpus.length === 0) throw new Error('could not detect number of cpus');
  const nodeOf = (cpu: number) => (numaNodes.length ? numaNodes.find((n) => n.cpus.has(cpu))?.id : 0);
  const cores = new Map<string, SysfsCPU[]>();
  for (const c of cpus) {
    const node = nodeOf(c.cpu);
    if (node === undefined) continue;
    const key = `${node}/${c.packageId}/${c.coreId}`;
    cores.set(key, [...(cores.get(key) ?? []), c]);
  }
  const byCPU = new Map<number, CPUInfo>();
  for (const [key, threads] of cores) {
    const numaNode = Number(key.split('/')[0]);
    const core = Math.min(...threads.map((t) => t.cpu));
    for (const t of threads) byCPU.set(t.cpu, { numaNode, socket: t.packageId, core, uncoreCache: threads[0]!.l3Id ?? t.packageId });
  }
  const details = new CPUDetails(byCPU);
  return {
    numCPUs: cpus.length,
    numCores: cores.size,
    numSockets: new Set(cpus.map((c) => c.packageId)).size,
    numNUMANodes: details.numaNodes().size,
    numUncoreCaches: details.uncoreCaches().size,
    details,
  };
}

const readText = (p: string) => readFileSync(p, 'utf8').trim();
const intAt = (p: string) => {
  try {
    const n = Number.parseInt(readText(p), 10);
    return Number.isNaN(n) ? undefined : n;
  } catch {
    return undefined;
  }
};

/** The facts discoverTopology needs, from sysfs (root: /sys): the online CPUs and the NUMA nodes' cpulists. */
export function readSysfsTopology(root = '/sys'): { cpus: SysfsCPU[]; numaNodes: { id: number; cpus: CPUSet }[] } {
  const cpuDir = join(root, 'devices/system/cpu');
  const online = parseCPUSet(readText(join(cpuDir, 'online')));
  const cpus = online.list().map((cpu): SysfsCPU => {
    const dir = join(cpuDir, `cpu${cpu}`);
    let l3Id: number | undefined;
    try {
      for (const idx of readdirSync(join(dir, 'cache')).filter((n) => n.startsWith('index'))) {
        if (intAt(join(dir, 'cache', idx, 'level')) === 3) l3Id = intAt(join(dir, 'cache', idx, 'id'));
      }
    } catch {
      // No cache information: the socket stands for the uncore cache.
    }
    return {
      cpu,
      packageId: intAt(join(dir, 'topology/physical_package_id')) ?? 0,
      coreId: intAt(join(dir, 'topology/core_id')) ?? cpu,
      l3Id,
    };
  });
  let numaNodes: { id: number; cpus: CPUSet }[] = [];
  try {
    const nodeDir = join(root, 'devices/system/node');
    numaNodes = readdirSync(nodeDir)
      .filter((n) => /^node\d+$/.test(n))
      .map((n) => ({ id: Number(n.slice(4)), cpus: parseCPUSet(readText(join(nodeDir, n, 'cpulist'))) }));
  } catch {
    // No NUMA support in the kernel: one node.
  }
  return { cpus, numaNodes };
}
