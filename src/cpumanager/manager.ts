// The CPU manager (upstream's cpumanager.Manager): at start it restores cpu_manager_state and
// checks it against the topology and the policy; at admission it gives each container of a pod
// its exclusive CPUs (static policy) or refuses the pod with upstream's reason; at container
// creation it names the cpuset for CRI CreateContainer; every reconcilePeriod it drops the
// assignments of pods gone and applies the shared pool to the other running containers through
// CRI UpdateContainerResources. Decisions are in static-policy.ts and reconcile.ts.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { backoff, jittered, sleep } from '../backoff/backoff.ts';
import { labels as criLabels } from '../container/types.ts';
import type { Logger } from '../log/log.ts';
import { allocationRefusal, type Admission } from '../pods/verdict.ts';
import { restoreState, writeState } from './checkpoint.ts';
import { CPUSet } from './cpuset.ts';
import { activeContainers, cpusetUpdates, type RunningContainer, staleAssignments } from './reconcile.ts';
import {
  allAssigned,
  assignedCPUs,
  type CPUState,
  cpusOrDefault,
  emptyState,
  guaranteedCPUs,
  nonePolicy,
  type Policy,
  staticPolicy,
  staticPolicyOptions,
} from './static-policy.ts';
import { cpusPerNUMA, type CPUTopology } from './topology.ts';
import type { ProviderHints, TopologyHint } from '../topologymanager/bitmask.ts';
import { initAndAppContainers } from '../podutil/podutil.ts';

/** What the manager reports (src/kubelet/observers.ts maps it to upstream's series). */
export interface CPUManagerObserver {
  /** The static policy started (upstream's initializeMetrics: the alignment series exist from then). */
  staticStarted(): void;
  pinningRequest(): void;
  pinningError(): void;
  /**
   * A container's CPUs aligned at a boundary or not (upstream's container_aligned_compute_resources
   * counters, container scope): physical_cpu under full-pcpus-only, uncore_cache for each new set
   * within one cache.
   */
  aligned(boundary: 'physical_cpu' | 'uncore_cache', ok: boolean): void;
  /** The shared pool less the reserved CPUs, in millicores, the CPUs assigned to containers, and those by NUMA node. */
  pools(sharedMillicores: number, exclusiveCPUs: number, perNUMA: Map<number, number>): void;
  reconcileFailure(): void;
}

/** The runtime calls the reconcile loop makes. */
export interface CPUManagerRuntime {
  listContainers(r: {
    filter: { state: { state: 'CONTAINER_RUNNING' } };
  }): Promise<{ containers: { id: string; labels: Record<string, string> }[] }>;
  updateContainerResources(r: { containerId: string; linux: { cpusetCpus: string; cpusetMems?: string } }): Promise<unknown>;
}

export interface CPUManagerSettings {
  policyName: string;
  policyOptions: Record<string, string>;
  reconcilePeriodMs: number;
  topology: CPUTopology;
  /** reservedSystemCPUs, parsed; empty when unset. */
  reservedCPUs: CPUSet;
  /** kubeReserved.cpu + systemReserved.cpu in millicores, after reservedSystemCPUs overrode them. */
  reservedMillicores: number;
  /** CPUManagerPolicyAlphaOptions, CPUManagerPolicyBetaOptions. */
  gates: { alpha: boolean; beta: boolean };
  /** The topology manager's policy (align-by-socket refuses single-numa-node). */
  topologyManagerPolicy?: string;
}

/**
 * NewManager's policy: none, or static with ceil(reserved cpu) CPUs held back; the static
 * policy refuses a zero reservation. Throws with upstream's text, the start fails with it.
 */
export function newPolicy(s: CPUManagerSettings): Policy {
  switch (s.policyName) {
    case 'none':
      try {
        return nonePolicy(s.policyOptions);
      } catch (e) {
        throw new Error(`new none policy error: ${(e as Error).message}`);
      }
    case 'static': {
      if (s.reservedMillicores <= 0)
        throw new Error('[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be greater than zero');
      try {
        return staticPolicy({
          topology: s.topology,
          numReservedCPUs: Math.ceil(s.reservedMillicores / 1000),
          reservedCPUs: s.reservedCPUs,
          options: staticPolicyOptions(s.policyOptions, s.gates),
          topologyManagerPolicy: s.topologyManagerPolicy,
        });
      } catch (e) {
        throw new Error(`new static policy error: ${(e as Error).message}`);
      }
    }
    default:
      throw new Error(`unknown policy: "${s.policyName}"`);
  }
}

/**
 * getReservedCPUs: reservedSystemCPUs parsed and within the node's CPUs. The reserved cpu
 * quantity follows from it (reservedQuantities).
 */
export function reservedSystemCPUs(text: string, topology: CPUTopology, parse: (s: string) => CPUSet): CPUSet {
  if (text === '') return CPUSet.EMPTY;
  let set: CPUSet;
  try {
    set = parse(text);
  } catch (e) {
    throw new Error(`unable to parse reserved-cpus list: ${(e as Error).message}`);
  }
  const all = topology.details.cpus();
  if (!set.isSubsetOf(all)) throw new Error(`reserved-cpus: ${text} is not a subset of online-cpus: ${all}`);
  return set;
}

/**
 * upstream's run: with reservedSystemCPUs, kubeReserved loses its cpu and systemReserved's cpu
 * becomes their count, so node allocatable, the kubepods cgroup and the static policy's
 * reservation all follow the CPUs named.
 */
export function reservedQuantities(
  kubeReserved: Record<string, string>,
  systemReserved: Record<string, string>,
  reserved: CPUSet,
): { kubeReserved: Record<string, string>; systemReserved: Record<string, string> } {
  if (reserved.isEmpty()) return { kubeReserved, systemReserved };
  const { cpu: _dropped, ...kube } = kubeReserved;
  return { kubeReserved: kube, systemReserved: { ...systemReserved, cpu: String(reserved.size) } };
}

export interface CPUManagerDeps {
  rootDir: string;
  policy: Policy;
  reconcilePeriodMs: number;
  cri: CPUManagerRuntime;
  /** The pods admitted and not terminated (upstream's activePods). */
  activePods: () => Pod[];
  /** Every pod source has listed its pods: only then may assignments of pods not seen go. */
  sourcesReady: () => boolean;
  /** The memory manager's cpuset.mems of a container, carried in the same update so that it is never lost. */
  memsFor?: (podUID: string, name: string) => string | undefined;
  observe?: CPUManagerObserver;
  log: Logger;
}

export class CPUManager {
  readonly #d: CPUManagerDeps;
  #state: CPUState = emptyState();
  /** Container id -> the cpuset last applied (upstream's lastUpdateState). */
  readonly #applied = new Map<string, string>();
  #stop = new AbortController();

  constructor(d: CPUManagerDeps) {
    this.#d = d;
  }

  get policyName(): string {
    return this.#d.policy.name;
  }

  /** Start: the checkpoint restored and checked (throws with upstream's text: the kubelet does not start); the reconcile loop for static. */
  start(): void {
    const { policy, rootDir, log } = this.#d;
    this.#state = restoreState(rootDir, policy.name);
    policy.start(this.#state);
    writeState(rootDir, policy.name, this.#state);
    if (policy.name === 'static') this.#d.observe?.staticStarted();
    this.#report();
    log.info('Starting', { policy: policy.name, reconcilePeriod: `${this.#d.reconcilePeriodMs}ms` });
    if (policy.name !== 'none') void this.#loop(this.#stop.signal);
  }

  stop(): void {
    this.#stop.abort();
  }

  /**
   * The topology manager's admission with its policy none (admitPolicyNone): each init and app
   * container allocated in turn; a failure refuses the pod with the error's type as reason
   * (SMTAlignmentError) or UnexpectedAdmissionError, as admission.GetPodAdmitResult.
   * With another policy the topology manager (src/topologymanager) calls hints and allocate.
   */
  admit(pod: Pod): Admission {
    try {
      for (const c of initAndAppContainers(pod)) this.allocate(pod, c);
    } catch (e) {
      return allocationRefusal(e);
    }
    return { admit: true };
  }

  /** GetTopologyHints (the topology manager's container scope). */
  hints(pod: Pod, c: Container): ProviderHints {
    this.#removeStale();
    return this.#d.policy.hints(this.#state, pod, c);
  }

  /** GetPodTopologyHints (the topology manager's pod scope). */
  podHints(pod: Pod): ProviderHints {
    this.#removeStale();
    return this.#d.policy.podHints(this.#state, pod);
  }

  /**
   * Allocate: the container's CPUs, from the hint's NUMA nodes first; throws as upstream
   * (SMTAlignmentError carries its reason). Counted as upstream's staticPolicy.Allocate counts.
   */
  allocate(pod: Pod, c: Container, hint?: TopologyHint): void {
    this.#removeStale();
    const { policy, observe } = this.#d;
    const pinned = policy.name === 'static' && guaranteedCPUs(pod, c) > 0;
    const physicalCPUs = pinned && policy.options.fullPhysicalCPUsOnly;
    if (pinned) observe?.pinningRequest();
    let r: ReturnType<Policy['allocate']>;
    try {
      r = policy.allocate(this.#state, pod, c, hint?.affinity?.list());
    } catch (e) {
      if (pinned) observe?.pinningError();
      if (physicalCPUs) observe?.aligned('physical_cpu', false);
      this.#d.log.error('Failed to allocate CPUs', {
        pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`,
        podUID: pod.metadata?.uid,
        containerName: c.name,
        err: (e as Error).message,
      });
      throw e;
    }
    if (physicalCPUs) observe?.aligned('physical_cpu', true);
    if (r?.isNew) {
      if (r.uncoreAligned) observe?.aligned('uncore_cache', true);
      this.#save();
    }
  }

  /** GetCPUAffinity for CreateContainer's cpuset_cpus: the container's CPUs, else the shared pool; undefined with the none policy. */
  cpusetFor(pod: Pod, c: Container): string | undefined {
    const cpus = cpusOrDefault(this.#state, pod.metadata!.uid!, c.name);
    return cpus.isEmpty() ? undefined : cpus.toString();
  }

  /** GetExclusiveCPUs, for PodResources' cpu_ids. */
  exclusiveCPUs(podUID: string, name: string): number[] {
    return assignedCPUs(this.#state, podUID, name)?.list() ?? [];
  }

  /** GetAllocatableCPUs, for PodResources' GetAllocatableResources. */
  allocatableCPUs(): number[] {
    return this.#d.policy.allocatableCPUs().list();
  }

  /** One reconcile round (reconcileState); the containers whose update failed. */
  async reconcile(): Promise<number> {
    this.#removeStale();
    const { cri, log, observe } = this.#d;
    const listed = await cri.listContainers({ filter: { state: { state: 'CONTAINER_RUNNING' } } });
    const running: RunningContainer[] = listed.containers.map((c) => ({
      id: c.id,
      podUID: c.labels[criLabels.podUID] ?? '',
      name: c.labels[criLabels.containerName] ?? '',
    }));
    // Containers gone forget what was applied to them.
    const ids = new Set(running.map((c) => c.id));
    for (const id of this.#applied.keys()) if (!ids.has(id)) this.#applied.delete(id);
    let failed = 0;
    for (const u of cpusetUpdates(this.#state, running, activeContainers(this.#d.activePods()), this.#applied)) {
      try {
        const mems = this.#d.memsFor?.(u.podUID, u.name);
        await cri.updateContainerResources({
          containerId: u.id,
          linux: { cpusetCpus: u.cpus.toString(), ...(mems ? { cpusetMems: mems } : {}) },
        });
        this.#applied.set(u.id, u.cpus.toString());
        log.v(4, 'Updated container cpuset', { podUID: u.podUID, containerName: u.name, containerID: u.id, cpuSet: u.cpus.toString() });
      } catch (e) {
        failed++;
        observe?.reconcileFailure();
        log.error('ReconcileState: failed to update container', {
          podUID: u.podUID,
          containerName: u.name,
          containerID: u.id,
          cpuSet: u.cpus.toString(),
          err: e,
        });
      }
    }
    return failed;
  }

  /** Every period (jittered), one round at a time; after a failed round, back off up to ten periods. */
  async #loop(signal: AbortSignal): Promise<void> {
    const period = this.#d.reconcilePeriodMs;
    const retry = backoff(period, period * 10);
    // The first round right after start, as upstream's wait.Until, but off the start's own turn.
    await sleep(0, signal);
    while (!signal.aborted) {
      let wait = jittered(period);
      try {
        if ((await this.reconcile()) > 0) wait = retry.next();
        else retry.reset();
      } catch (e) {
        this.#d.observe?.reconcileFailure();
        this.#d.log.error('CPU manager reconcile failed', { err: e });
        wait = retry.next();
      }
      await sleep(wait, signal);
    }
  }

  /** removeStaleState: once the sources are ready, the assignments of containers no active pod has go back to the pool. */
  #removeStale(): void {
    if (!this.#d.sourcesReady()) return;
    const stale = staleAssignments(this.#state, activeContainers(this.#d.activePods()));
    for (const [pod, name] of stale) {
      const released = this.#d.policy.removeContainer(this.#state, pod, name);
      this.#d.log.info('RemoveStaleState: removing container', { podUID: pod, containerName: name, released: released.toString() });
    }
    if (stale.length) this.#save();
  }

  #save(): void {
    try {
      writeState(this.#d.rootDir, this.#d.policy.name, this.#state);
    } catch (e) {
      this.#d.log.error('Failed to save checkpoint', { err: e });
    }
    this.#report();
  }

  #report(): void {
    if (this.#d.policy.name === 'none') return;
    const { policy, observe } = this.#d;
    const assigned = allAssigned(this.#state);
    const perNUMA = policy.topology ? cpusPerNUMA(policy.topology, assigned) : new Map<number, number>();
    observe?.pools(policy.availableCPUs(this.#state).size * 1000, assigned.size, perNUMA);
  }
}
