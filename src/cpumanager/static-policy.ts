// The CPU manager's policies, as upstream's policy_none.go, policy_static.go and
// policy_options.go. `none` pins nothing. `static` keeps a shared pool (every CPU not assigned,
// reserved ones included) and gives each container of a Guaranteed pod with an integer CPU
// request its own CPUs, taken by topology (take-by-topology.ts). Regular init containers' CPUs
// go back to the pod's later containers; a restartable sidecar's stay its own. Decisions only:
// the state (CPUState) is plain data the manager keeps and checkpoints.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { isSidecar, initAndAppContainers } from '../podutil/podutil.ts';
import { podLevelResources } from '../resources/pod-resources.ts';
import { qosClass } from '../resources/qos.ts';
import { milliCPU } from '../resources/linux-resources.ts';
import { everyMask, type ProviderHints, type TopologyHint } from '../topologymanager/bitmask.ts';
import { CPUSet } from './cpuset.ts';
import { takeDistributed, takePacked } from './take-by-topology.ts';
import { type CPUTopology, alignedAtUncoreCache, cpusPerCore } from './topology.ts';

/** upstream's state.State: the shared pool (defaultCpuSet) and each container's exclusive CPUs. */
export interface CPUState {
  defaultCPUSet: CPUSet;
  /** pod UID -> container name -> CPUs. */
  assignments: Map<string, Map<string, CPUSet>>;
}

export const emptyState = (): CPUState => ({ defaultCPUSet: CPUSet.EMPTY, assignments: new Map() });

export const assignedCPUs = (s: CPUState, podUID: string, name: string): CPUSet | undefined => s.assignments.get(podUID)?.get(name);

/** GetCPUSetOrDefault: the container's own CPUs, else the shared pool. */
export const cpusOrDefault = (s: CPUState, podUID: string, name: string): CPUSet => assignedCPUs(s, podUID, name) ?? s.defaultCPUSet;

function setAssigned(s: CPUState, podUID: string, name: string, cpus: CPUSet): void {
  const pod = s.assignments.get(podUID) ?? new Map<string, CPUSet>();
  pod.set(name, cpus);
  s.assignments.set(podUID, pod);
}

function deleteAssigned(s: CPUState, podUID: string, name: string): void {
  const pod = s.assignments.get(podUID);
  pod?.delete(name);
  if (pod?.size === 0) s.assignments.delete(podUID);
}

/** Every CPU assigned to a container (getTotalAssignedExclusiveCPUs). */
export const allAssigned = (s: CPUState): CPUSet => CPUSet.EMPTY.union(...[...s.assignments.values()].flatMap((pod) => [...pod.values()]));

/** An allocation admission refuses with this reason (upstream's SMTAlignmentError, Type()). */
export class SMTAlignmentError extends Error {
  readonly reason = 'SMTAlignmentError';
  constructor(requested: number, perCore: number, availablePhysical?: number) {
    super(
      availablePhysical === undefined
        ? `SMT Alignment Error: requested ${requested} cpus not multiple cpus per core = ${perCore}`
        : `SMT Alignment Error: not enough free physical CPUs: available physical CPUs = ${availablePhysical}, requested CPUs = ${requested}, CPUs per core = ${perCore}`,
    );
  }
}

/** What the manager asks of a policy (upstream's Policy). */
export interface Policy {
  readonly name: 'none' | 'static';
  /** Checks a restored state against the topology and reservation, or fills an empty one; throws as upstream's Start. */
  start(s: CPUState): void;
  /** The container's exclusive CPUs, newly taken or already held; undefined: it runs in the shared pool. Throws when they cannot be had. */
  allocate(
    s: CPUState,
    pod: Pod,
    c: Container,
    numaAffinity?: number[],
  ): { cpus: CPUSet; isNew: boolean; uncoreAligned: boolean } | undefined;
  /** GetTopologyHints: the cpu hints of a container (src/topologymanager); undefined: no preference. */
  hints(s: CPUState, pod: Pod, c: Container): ProviderHints;
  /** GetPodTopologyHints, for the topology manager's pod scope. */
  podHints(s: CPUState, pod: Pod): ProviderHints;
  /** Frees the container's CPUs; returns those that went back to the shared pool. */
  removeContainer(s: CPUState, podUID: string, name: string): CPUSet;
  /** CPUs that can be assigned exclusively (GetAllocatableCPUs). */
  allocatableCPUs(): CPUSet;
  /** The shared pool without the reserved CPUs (GetAvailableCPUs). */
  availableCPUs(s: CPUState): CPUSet;
  readonly options: StaticPolicyOptions;
  /** The node's CPU topology (static only: none never looks at it). */
  readonly topology?: CPUTopology;
}

// ---- options (policy_options.go) ----

export const FULL_PCPUS_ONLY = 'full-pcpus-only';
export const DISTRIBUTE_CPUS_ACROSS_NUMA = 'distribute-cpus-across-numa';
export const ALIGN_BY_SOCKET = 'align-by-socket';
export const DISTRIBUTE_CPUS_ACROSS_CORES = 'distribute-cpus-across-cores';
export const STRICT_CPU_RESERVATION = 'strict-cpu-reservation';
export const PREFER_ALIGN_BY_UNCORECACHE = 'prefer-align-cpus-by-uncorecache';

/** The maturity of each option in the pinned release: alpha ones need CPUManagerPolicyAlphaOptions, beta ones CPUManagerPolicyBetaOptions. */
const MATURITY: Record<string, 'alpha' | 'beta' | 'stable'> = {
  [ALIGN_BY_SOCKET]: 'alpha',
  [DISTRIBUTE_CPUS_ACROSS_CORES]: 'alpha',
  [DISTRIBUTE_CPUS_ACROSS_NUMA]: 'beta',
  [FULL_PCPUS_ONLY]: 'stable',
  [STRICT_CPU_RESERVATION]: 'stable',
  [PREFER_ALIGN_BY_UNCORECACHE]: 'stable',
};

export interface StaticPolicyOptions {
  fullPhysicalCPUsOnly: boolean;
  distributeCPUsAcrossNUMA: boolean;
  alignBySocket: boolean;
  distributeCPUsAcrossCores: boolean;
  strictCPUReservation: boolean;
  preferAlignByUncoreCache: boolean;
}

const FIELD_OF: Record<string, keyof StaticPolicyOptions> = {
  [FULL_PCPUS_ONLY]: 'fullPhysicalCPUsOnly',
  [DISTRIBUTE_CPUS_ACROSS_NUMA]: 'distributeCPUsAcrossNUMA',
  [ALIGN_BY_SOCKET]: 'alignBySocket',
  [DISTRIBUTE_CPUS_ACROSS_CORES]: 'distributeCPUsAcrossCores',
  [STRICT_CPU_RESERVATION]: 'strictCPUReservation',
  [PREFER_ALIGN_BY_UNCORECACHE]: 'preferAlignByUncoreCache',
};

/** Go's strconv.ParseBool. */
function parseBool(name: string, v: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  throw new Error(`bad value for option ${JSON.stringify(name)}: strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
}

/** Which option pairs cannot go together (NewStaticPolicyOptions), in upstream's order. */
const EXCLUSIVE: [string, string][] = [
  [FULL_PCPUS_ONLY, DISTRIBUTE_CPUS_ACROSS_CORES],
  [DISTRIBUTE_CPUS_ACROSS_NUMA, DISTRIBUTE_CPUS_ACROSS_CORES],
  [PREFER_ALIGN_BY_UNCORECACHE, DISTRIBUTE_CPUS_ACROSS_CORES],
  [PREFER_ALIGN_BY_UNCORECACHE, DISTRIBUTE_CPUS_ACROSS_NUMA],
];

/**
 * NewStaticPolicyOptions with CheckPolicyOptionAvailable: unknown options, options whose
 * maturity gate is off, bad booleans and incompatible pairs are refused with upstream's text.
 * gates: whether CPUManagerPolicyAlphaOptions and CPUManagerPolicyBetaOptions are on.
 */
export function staticPolicyOptions(given: Record<string, string>, gates: { alpha: boolean; beta: boolean }): StaticPolicyOptions {
  const o: StaticPolicyOptions = {
    fullPhysicalCPUsOnly: false,
    distributeCPUsAcrossNUMA: false,
    alignBySocket: false,
    distributeCPUsAcrossCores: false,
    strictCPUReservation: false,
    preferAlignByUncoreCache: false,
  };
  for (const [name, value] of Object.entries(given)) {
    const maturity = MATURITY[name];
    if (!maturity) throw new Error(`unknown CPU Manager Policy option: ${JSON.stringify(name)}`);
    if (maturity === 'alpha' && !gates.alpha)
      throw new Error(`CPU Manager Policy Alpha-level Options not enabled, but option ${JSON.stringify(name)} provided`);
    if (maturity === 'beta' && !gates.beta)
      throw new Error(`CPU Manager Policy Beta-level Options not enabled, but option ${JSON.stringify(name)} provided`);
    o[FIELD_OF[name]!] = parseBool(name, value);
  }
  for (const [a, b] of EXCLUSIVE)
    if (o[FIELD_OF[a]!] && o[FIELD_OF[b]!]) throw new Error(`static policy options ${a} and ${b} can not be used at the same time`);
  return o;
}

// ---- none ----

/** NewNonePolicy: takes no option. */
export function nonePolicy(given: Record<string, string>): Policy {
  if (Object.keys(given).length) {
    const shown = Object.keys(given)
      .sort()
      .map((k) => `${k}:${given[k]}`)
      .join(' ');
    throw new Error(`None policy: received unsupported options=map[${shown}]`);
  }
  return {
    name: 'none',
    options: staticPolicyOptions({}, { alpha: false, beta: false }),
    start() {},
    allocate: () => undefined,
    hints: () => undefined,
    podHints: () => undefined,
    removeContainer: () => CPUSet.EMPTY,
    allocatableCPUs: () => CPUSet.EMPTY,
    availableCPUs: () => CPUSet.EMPTY,
  };
}

// ---- static ----

/** isIntegralCPUAmount over the request: Value()*1000 == MilliValue(), both rounded up. */
function integralCPUs(q: string | number | undefined): number {
  if (q === undefined) return 0;
  const milli = milliCPU(q);
  return milli % 1000 === 0 ? milli / 1000 : 0;
}

/**
 * guaranteedCPUs: the container's integer CPU request when its pod is Guaranteed, else 0.
 * A pod with pod-level resources gets none: PodLevelResourceManagers is alpha and off, as upstream skips it then.
 */
export function guaranteedCPUs(pod: Pod, c: Container): number {
  if (podLevelResources(pod)) return 0;
  if (qosClass(pod) !== 'Guaranteed') return 0;
  return integralCPUs(c.resources?.requests?.cpu);
}

export interface StaticPolicyConfig {
  topology: CPUTopology;
  /** ceil(kubeReserved.cpu + systemReserved.cpu), or reservedSystemCPUs' size. */
  numReservedCPUs: number;
  /** reservedSystemCPUs; empty: the reserved CPUs are taken by topology. */
  reservedCPUs: CPUSet;
  options: StaticPolicyOptions;
  /** The topology manager's policy name, for align-by-socket's check. */
  topologyManagerPolicy?: string;
}

/** NewStaticPolicy: the reserved CPUs (reservedSystemCPUs, else the lowest cores by topology) and their whole cores. */
export function staticPolicy(cfg: StaticPolicyConfig): Policy {
  const { topology: topo, options: o } = cfg;
  if (o.alignBySocket) {
    if (cfg.topologyManagerPolicy === 'single-numa-node')
      throw new Error(`Topolgy manager single-numa-node policy is incompatible with CPUManager ${ALIGN_BY_SOCKET} policy option`);
    if (topo.numSockets > topo.numNUMANodes)
      throw new Error('Align by socket is not compatible with hardware where number of sockets are more than number of NUMA');
  }
  const groupSize = cpusPerCore(topo);
  const take = (available: CPUSet, n: number): CPUSet => {
    const strategy = o.distributeCPUsAcrossCores ? 'spread' : 'packed';
    if (o.distributeCPUsAcrossNUMA) return takeDistributed(topo, available, n, o.fullPhysicalCPUsOnly ? groupSize : 1, strategy);
    return takePacked(topo, available, n, strategy, o.preferAlignByUncoreCache);
  };
  const all = topo.details.cpus();
  let reserved: CPUSet;
  if (cfg.reservedCPUs.size > 0) reserved = cfg.reservedCPUs;
  else {
    try {
      reserved = take(all, cfg.numReservedCPUs);
    } catch {
      reserved = CPUSet.EMPTY;
    }
  }
  if (reserved.size !== cfg.numReservedCPUs)
    throw new Error(
      `[cpumanager] unable to reserve the required amount of CPUs (size of ${reserved} did not equal ${cfg.numReservedCPUs})`,
    );
  let reservedPhysical = CPUSet.EMPTY;
  for (const cpu of reserved.list()) {
    const info = topo.details.info(cpu);
    if (!info) throw new Error(`[cpumanager] unable to build the reserved physical CPUs from the reserved set: unknown CPU ID: ${cpu}`);
    reservedPhysical = reservedPhysical.union(topo.details.cpusInCores(info.core));
  }
  // CPUs of a pod's regular init containers, reusable by its next containers (cpusToReuse).
  const toReuse = new Map<string, CPUSet>();

  const available = (s: CPUState) => s.defaultCPUSet.difference(reserved);

  /** updateCPUsToReuse: a regular init container's CPUs become reusable; an app container's stop being so. */
  function updateReuse(pod: Pod, c: Container, cpus: CPUSet): void {
    const uid = pod.metadata!.uid!;
    for (const k of toReuse.keys()) if (k !== uid) toReuse.delete(k);
    const prev = toReuse.get(uid) ?? CPUSet.EMPTY;
    const init = pod.spec?.initContainers?.find((i) => i.name === c.name);
    if (init && !isSidecar(init)) toReuse.set(uid, prev.union(cpus));
    else toReuse.set(uid, prev.difference(cpus));
  }

  function enforceSMTAlignment(s: CPUState, n: number): void {
    if (!o.fullPhysicalCPUsOnly) return;
    if (n % groupSize !== 0) throw new SMTAlignmentError(n, groupSize);
    // The reserved CPUs' siblings count as taken, so that no allocation has to split a core.
    const physical = s.defaultCPUSet.difference(reservedPhysical).size;
    if (n > physical) throw new SMTAlignmentError(n, groupSize, physical);
  }

  return {
    name: 'static',
    topology: topo,
    options: o,

    // validateState.
    start(s) {
      const allCPUs = o.strictCPUReservation ? all.difference(reserved) : all;
      if (s.defaultCPUSet.isEmpty()) {
        if (s.assignments.size) throw new Error('default cpuset cannot be empty');
        s.defaultCPUSet = allCPUs;
        return;
      }
      const d = s.defaultCPUSet;
      if (o.strictCPUReservation) {
        const overlap = reserved.intersection(d);
        if (!overlap.isEmpty()) throw new Error(`some of strictly reserved cpus: "${overlap}" are present in defaultCpuSet: "${d}"`);
      } else if (!reserved.intersection(d).equals(reserved)) {
        throw new Error(`not all reserved cpus: "${reserved}" are present in defaultCpuSet: "${d}"`);
      }
      for (const [pod, containers] of s.assignments)
        for (const [name, cpus] of containers)
          if (!d.intersection(cpus).isEmpty())
            throw new Error(`pod: ${pod}, container: ${name} cpuset: "${cpus}" overlaps with default cpuset "${d}"`);
      const known = d.union(allAssigned(s));
      if (!known.equals(allCPUs)) throw new Error(`current set of available CPUs "${allCPUs}" doesn't match with CPUs in state "${known}"`);
    },

    allocate(s, pod, c, numaAffinity) {
      const n = guaranteedCPUs(pod, c);
      if (n === 0) return undefined;
      enforceSMTAlignment(s, n);
      const uid = pod.metadata!.uid!;
      const held = assignedCPUs(s, uid, c.name);
      if (held) {
        updateReuse(pod, c, held);
        return { cpus: held, isNew: false, uncoreAligned: alignedAtUncoreCache(topo, held) };
      }
      // allocateCPUs: first from the NUMA nodes of the topology manager's hint, the rest from anywhere.
      const allocatable = available(s).union(toReuse.get(uid) ?? CPUSet.EMPTY);
      let cpus = CPUSet.EMPTY;
      if (numaAffinity) {
        const aligned = allocatable.intersection(topo.details.cpusInNUMANodes(...numaAffinity));
        cpus = take(aligned, Math.min(n, aligned.size));
      }
      if (cpus.size < n) cpus = cpus.union(take(allocatable.difference(cpus), n - cpus.size));
      s.defaultCPUSet = s.defaultCPUSet.difference(cpus);
      setAssigned(s, uid, c.name, cpus);
      updateReuse(pod, c, cpus);
      return { cpus, isNew: true, uncoreAligned: alignedAtUncoreCache(topo, cpus) };
    },

    removeContainer(s, podUID, name) {
      const held = assignedCPUs(s, podUID, name);
      if (!held) return CPUSet.EMPTY;
      deleteAssigned(s, podUID, name);
      // CPUs a sibling still holds (an init container's reused by an app container) stay out of the pool.
      const siblings = CPUSet.EMPTY.union(...(s.assignments.get(podUID)?.values() ?? []));
      const released = held.difference(siblings);
      s.defaultCPUSet = s.defaultCPUSet.union(released);
      return released;
    },

    hints(s, pod, c) {
      const n = guaranteedCPUs(pod, c);
      if (n === 0) return undefined;
      const held = assignedCPUs(s, pod.metadata!.uid!, c.name);
      if (held) return { cpu: held.size !== n ? [] : cpuHints(topo, held, CPUSet.EMPTY, n) };
      return { cpu: cpuHints(topo, available(s), toReuse.get(pod.metadata!.uid!) ?? CPUSet.EMPTY, n) };
    },

    podHints(s, pod) {
      const n = podGuaranteedCPUs(pod);
      if (n === 0) return undefined;
      const uid = pod.metadata!.uid!;
      // Containers already allocated: the pod's CPUs again, when they still make the request.
      let held = CPUSet.EMPTY;
      for (const c of initAndAppContainers(pod)) held = held.union(assignedCPUs(s, uid, c.name) ?? CPUSet.EMPTY);
      if (!held.isEmpty()) return { cpu: held.size !== n ? [] : cpuHints(topo, held, CPUSet.EMPTY, n) };
      return { cpu: cpuHints(topo, available(s), toReuse.get(uid) ?? CPUSet.EMPTY, n) };
    },

    allocatableCPUs: () => all.difference(reserved),
    availableCPUs: available,
  };
}

/**
 * generateCPUTopologyHints: every set of NUMA nodes whose available (and reusable) CPUs make the
 * request; preferred are those of the fewest nodes whose CPUs could make it at all.
 */
export function cpuHints(topo: CPUTopology, availableCPUs: CPUSet, reusable: CPUSet, request: number): TopologyHint[] {
  const nodes = topo.details.numaNodes().list();
  let minSize = nodes.length;
  const hints: TopologyHint[] = [];
  everyMask(nodes, (mask) => {
    const bits = mask.list();
    if (topo.details.cpusInNUMANodes(...bits).size >= request && bits.length < minSize) minSize = bits.length;
    let matching = 0;
    for (const c of reusable.list()) {
      if (!bits.includes(topo.details.info(c)!.numaNode)) return;
      matching++;
    }
    for (const c of availableCPUs.list()) if (bits.includes(topo.details.info(c)!.numaNode)) matching++;
    if (matching < request) return;
    hints.push({ affinity: mask, preferred: false });
  });
  for (const h of hints) h.preferred = h.affinity!.count() === minSize;
  return hints;
}

/** podGuaranteedCPUs: the larger of the long-running containers' sum and the largest init container's need. */
export function podGuaranteedCPUs(pod: Pod): number {
  let init = 0;
  let sidecars = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    const n = guaranteedCPUs(pod, c);
    if (isSidecar(c)) sidecars += n;
    else init = Math.max(init, sidecars + n);
  }
  let apps = 0;
  for (const c of pod.spec?.containers ?? []) apps += guaranteedCPUs(pod, c);
  return Math.max(apps + sidecars, init);
}
