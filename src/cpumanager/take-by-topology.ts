// Which CPUs an exclusive request gets, as upstream's cpu_assignment.go: whole NUMA nodes or
// sockets first (the bigger level first), then whole uncore caches (prefer-align-cpus-by-uncorecache),
// then whole cores, then single threads; or spread evenly over NUMA nodes
// (distribute-cpus-across-numa), or thread by thread over cores (distribute-cpus-across-cores).
// Every order is upstream's: by free CPUs ascending, then by id. Pure.
import { CPUSet } from './cpuset.ts';
import { type CPUDetails, type CPUTopology, cpusPerCore, cpusPerSocket, cpusPerUncore } from './topology.ts';

export type SortingStrategy = 'packed' | 'spread';

/** upstream's cpuAccumulator: the CPUs still free (details), what is taken so far, what is still wanted. */
class Accumulator {
  details: CPUDetails;
  needed: number;
  result = CPUSet.EMPTY;
  /** numaFirst when sockets >= NUMA nodes (NUMA nodes inside sockets), else socketsFirst. */
  readonly numaFirst: boolean;
  readonly topo: CPUTopology;
  readonly strategy: SortingStrategy;

  constructor(topo: CPUTopology, available: CPUSet, numCPUs: number, strategy: SortingStrategy) {
    this.topo = topo;
    this.strategy = strategy;
    this.details = topo.details.keepOnly(available);
    this.needed = numCPUs;
    this.numaFirst = topo.numSockets >= topo.numNUMANodes;
  }

  /** Ascending by free CPUs in each, then by id (upstream's sort). */
  private sorted(ids: CPUSet, cpusIn: (id: number) => CPUSet): number[] {
    return ids
      .list()
      .map((id) => [id, cpusIn(id).size] as const)
      .sort((a, b) => a[1] - b[1] || a[0] - b[0])
      .map(([id]) => id);
  }

  sortNUMANodes(): number[] {
    const d = this.details;
    if (this.numaFirst) return this.sorted(d.numaNodes(), (n) => d.cpusInNUMANodes(n));
    return this.sortSockets().flatMap((s) => this.sorted(d.numaNodesInSockets(s), (n) => d.cpusInNUMANodes(n)));
  }
  sortSockets(): number[] {
    const d = this.details;
    if (!this.numaFirst) return this.sorted(d.sockets(), (s) => d.cpusInSockets(s));
    return this.sortNUMANodes().flatMap((n) => this.sorted(d.socketsInNUMANodes(n), (s) => d.cpusInSockets(s)));
  }
  sortCores(): number[] {
    const d = this.details;
    if (this.numaFirst) return this.sortSockets().flatMap((s) => this.sorted(d.coresInSockets(s), (c) => d.cpusInCores(c)));
    return this.sortNUMANodes().flatMap((n) => this.sorted(d.coresInNUMANodes(n), (c) => d.cpusInCores(c)));
  }
  sortUncoreCaches(): number[] {
    const d = this.details;
    return this.sortNUMANodes().flatMap((n) => this.sorted(d.uncoreInNUMANodes(n), (u) => d.cpusInUncoreCaches(u)));
  }
  /** packed: core by core; spread: socket by socket, ascending ids (so siblings come apart). */
  sortCPUs(): number[] {
    const d = this.details;
    if (this.strategy === 'packed') return this.sortCores().flatMap((c) => d.cpusInCores(c).list());
    return this.sortSockets().flatMap((s) => d.cpusInSockets(s).list());
  }

  take(cpus: CPUSet): void {
    this.result = this.result.union(cpus);
    this.details = this.details.keepOnly(this.details.cpus().difference(this.result));
    this.needed -= cpus.size;
  }
  needsAtLeast = (n: number) => this.needed >= n;
  satisfied = () => this.needed < 1;
  failed = () => this.needed > this.details.cpus().size;

  takeFullNUMANodes(): void {
    const all = this.topo.details;
    for (const n of this.sortNUMANodes().filter((n) => this.details.cpusInNUMANodes(n).size === all.cpusInNUMANodes(n).size)) {
      const cpus = all.cpusInNUMANodes(n);
      if (this.needsAtLeast(cpus.size)) this.take(cpus);
    }
  }
  takeFullSockets(): void {
    const all = this.topo.details;
    for (const s of this.sortSockets().filter((s) => this.details.cpusInSockets(s).size === cpusPerSocket(this.topo))) {
      const cpus = all.cpusInSockets(s);
      if (this.needsAtLeast(cpus.size)) this.take(cpus);
    }
  }
  takeFullFirstLevel(): void {
    if (this.numaFirst) this.takeFullNUMANodes();
    else this.takeFullSockets();
  }
  takeFullSecondLevel(): void {
    if (this.numaFirst) this.takeFullSockets();
    else this.takeFullNUMANodes();
  }
  takeFullUncore(): void {
    const all = this.topo.details;
    const free = this.sortUncoreCaches().filter((u) => this.details.cpusInUncoreCaches(u).size === all.cpusInUncoreCaches(u).size);
    for (const u of free) {
      const cpus = all.cpusInUncoreCaches(u);
      if (this.needsAtLeast(cpus.size)) this.take(cpus);
    }
  }
  /** takePartialUncore: the request's whole cores inside one uncore cache, if they are enough. */
  takePartialUncore(uncore: number): void {
    const perCore = cpusPerCore(this.topo);
    const coresNeeded = Math.ceil(this.needed / perCore);
    let free = this.details.cpusInCores(...this.details.coresNeededInUncoreCache(coresNeeded, uncore).list());
    // An odd request on SMT leaves the last thread out.
    if (this.needed % 2 !== 0 && perCore > 1) {
      const ids = free.list();
      free = CPUSet.of(...(ids.length > this.needed ? ids.slice(0, free.size - 1) : ids));
    }
    if (this.needed === free.size) this.take(free);
  }
  takeUncoreCache(): void {
    const perUncore = cpusPerUncore(this.topo);
    for (const u of this.sortUncoreCaches()) {
      if (this.needsAtLeast(perUncore)) this.takeFullUncore();
      if (this.satisfied()) return;
      this.takePartialUncore(u);
      if (this.satisfied()) return;
    }
  }
  takeFullCores(): void {
    const all = this.topo.details;
    for (const c of this.sortCores().filter((c) => this.details.cpusInCores(c).size === cpusPerCore(this.topo))) {
      const cpus = all.cpusInCores(c);
      if (this.needsAtLeast(cpus.size)) this.take(cpus);
    }
  }
  takeRemainingCPUs(): void {
    for (const cpu of this.sortCPUs()) {
      this.take(CPUSet.of(cpu));
      if (this.satisfied()) return;
    }
  }
  /** rangeNUMANodesNeededToSatisfy. */
  numaRange(groupSize: number): [min: number, max: number] {
    const numNUMA = this.topo.details.numaNodes().size;
    const groups = Math.floor((this.topo.details.cpus().size - 1) / groupSize) + 1;
    const groupsPerNUMA = Math.floor((groups - 1) / numNUMA) + 1;
    const groupsNeeded = Math.floor((this.needed - 1) / groupSize) + 1;
    return [Math.floor((groupsNeeded - 1) / groupsPerNUMA) + 1, Math.min(groupsNeeded, this.details.numaNodes().size)];
  }
}

/** takeByTopologyNUMAPacked. Throws when the CPUs are not there. */
export function takePacked(
  topo: CPUTopology,
  available: CPUSet,
  numCPUs: number,
  strategy: SortingStrategy,
  preferUncore: boolean,
): CPUSet {
  const acc = new Accumulator(topo, available, numCPUs, strategy);
  if (acc.satisfied()) return acc.result;
  if (acc.failed()) throw new Error(`not enough cpus available to satisfy request: requested=${numCPUs}, available=${available.size}`);
  const steps = [
    () => acc.takeFullFirstLevel(),
    () => acc.takeFullSecondLevel(),
    ...(preferUncore ? [() => acc.takeUncoreCache()] : []),
    ...(strategy !== 'spread' ? [() => acc.takeFullCores()] : []),
    () => acc.takeRemainingCPUs(),
  ];
  for (const step of steps) {
    step();
    if (acc.satisfied()) return acc.result;
  }
  throw new Error('failed to allocate cpus');
}

/** Each k-subset of n in order (iterateCombinations); f returns true to stop. */
function combinations(n: number[], k: number, f: (combo: number[]) => boolean | undefined): void {
  if (k < 1) return;
  const go = (start: number, acc: number[]): boolean => {
    if (acc.length === k) return !!f(acc);
    for (let i = start; i <= n.length - (k - acc.length); i++) if (go(i + 1, [...acc, n[i]!])) return true;
    return false;
  };
  go(0, []);
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
/** upstream's standardDeviation, its mean and result rounded to 3 decimals. */
function standardDeviation(xs: number[]): number {
  const m = round3(xs.reduce((a, b) => a + b, 0) / xs.length);
  return round3(Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / xs.length));
}

/**
 * takeByTopologyNUMADistributed: the request spread evenly, in groups of groupSize CPUs (a whole
 * core with full-pcpus-only), over the fewest NUMA nodes that hold it, the combination leaving
 * the nodes' free CPUs most balanced; the remainder on the subset that balances best.
 */
export function takeDistributed(
  topo: CPUTopology,
  available: CPUSet,
  numCPUs: number,
  groupSize: number,
  strategy: SortingStrategy,
): CPUSet {
  if (numCPUs % groupSize !== 0) return takePacked(topo, available, numCPUs, strategy, false);
  const acc = new Accumulator(topo, available, numCPUs, strategy);
  if (acc.satisfied()) return acc.result;
  if (acc.failed()) throw new Error(`not enough cpus available to satisfy request: requested=${numCPUs}, available=${available.size}`);
  const numas = acc.sortNUMANodes();
  const free = (n: number) => acc.details.cpusInNUMANodes(n).size;
  const [minK, maxK] = acc.numaRange(groupSize);
  for (let k = minK; k <= maxK; k++) {
    let bestBalance = Number.MAX_VALUE;
    let bestRemainder: number[] | undefined;
    let bestCombo: number[] | undefined;
    combinations(numas, k, (combo) => {
      if (bestBalance === 0) return true;
      if (acc.details.cpusInNUMANodes(...combo).size < numCPUs) return false;
      const groups = combo.reduce((g, n) => g + Math.floor(free(n) / groupSize), 0);
      if (groups * groupSize < numCPUs) return false;
      const distribution = Math.floor(numCPUs / combo.length / groupSize) * groupSize;
      if (combo.some((n) => free(n) < distribution)) return false;
      const after = new Map(numas.map((n) => [n, free(n)]));
      for (const n of combo) after.set(n, after.get(n)! - distribution);
      const remainder = numCPUs - distribution * combo.length;
      const remainderCombo = combo.filter((n) => after.get(n)! >= groupSize);
      let localBalance = Number.MAX_VALUE;
      let localRemainder: number[] | undefined;
      if (remainder === 0) localBalance = standardDeviation([...after.values()]);
      for (let j = remainderCombo.length; remainder > 0 && j >= 1; j--) {
        combinations(remainderCombo, j, (subset) => {
          let left = remainder;
          const a = new Map(after);
          if (subset.reduce((s, n) => s + a.get(n)!, 0) < left) return false;
          while (left > 0) {
            for (const n of subset) {
              if (left === 0) break;
              if (a.get(n)! < groupSize) continue;
              a.set(n, a.get(n)! - groupSize);
              left -= groupSize;
            }
          }
          const balance = standardDeviation([...a.values()]);
          if (balance < localBalance) {
            localBalance = balance;
            localRemainder = subset;
          }
          return false;
        });
      }
      if (localBalance < bestBalance) {
        bestBalance = localBalance;
        bestRemainder = localRemainder;
        bestCombo = combo;
      }
      return false;
    });
    if (!bestCombo) continue;
    const distribution = Math.floor(numCPUs / bestCombo.length / groupSize) * groupSize;
    for (const n of bestCombo) acc.take(takePacked(acc.topo, acc.details.cpusInNUMANodes(n), distribution, strategy, false));
    let remainder = numCPUs - distribution * bestCombo.length;
    while (remainder > 0) {
      for (const n of bestRemainder ?? []) {
        if (remainder === 0) break;
        if (free(n) < groupSize) continue;
        acc.take(takePacked(acc.topo, acc.details.cpusInNUMANodes(n), groupSize, strategy, false));
        remainder -= groupSize;
      }
    }
    if (acc.needed > 0) throw new Error(`accounting error, not enough CPUs allocated, remaining: ${acc.needed}`);
    if (acc.needed < 0) throw new Error(`accounting error, too many CPUs allocated, remaining: ${acc.needed}`);
    return acc.result;
  }
  return takePacked(topo, available, numCPUs, strategy, false);
}
