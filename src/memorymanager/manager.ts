// The memory manager (upstream's memorymanager.Manager): at start it restores memory_manager_state
// and checks it against the policy and the machine; as a hint provider of the topology manager it
// gives each Guaranteed container's memory and hugepages NUMA hints and allocates them with the
// hint chosen; at container creation it names the container's NUMA nodes for CRI's cpuset_mems;
// assignments of pods gone are dropped (removeStaleState) before each decision.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import type { ProviderHints, TopologyHint } from '../topologymanager/bitmask.ts';
import { restoreState, writeState } from './checkpoint.ts';
import { type Block, emptyMemoryState, type MemoryState } from './state.ts';
import { type MemoryPolicy, memoryNodes, nonePolicy, type NUMAMemory, staticPolicy } from './static-policy.ts';
import { isPodLevelResourcesSet } from '../resources/pod-resources.ts';
import { qosClass } from '../resources/qos.ts';
import { parseQuantity } from '../resources/quantity.ts';
import { formatQuantity, quantityFormat } from '../eviction/format.ts';

export interface MemoryReservation {
  numaNode: number;
  limits: Record<string, string>;
}

/**
 * NewManager's policy: None, or Static with reservedMemory checked against the node allocatable
 * reservation (kube + system reserved + hard eviction) per memory type, as upstream's
 * validateReservedMemory. Throws with upstream's text: the start fails with it.
 * nodeReservation: per type (memory, hugepages-*), the quantities summed (GetNodeAllocatableReservation).
 */
export function newMemoryPolicy(
  policyName: string,
  nodes: NUMAMemory[],
  nodeReservation: Record<string, string[]>,
  reserved: MemoryReservation[],
): MemoryPolicy {
  switch (policyName) {
    case 'None':
      return nonePolicy();
    case 'Static': {
      const ids = new Set(nodes.map((n) => n.id));
      const total: Record<string, string[]> = {};
      for (const r of reserved) {
        if (!ids.has(r.numaNode))
          throw new Error(`the reserved memory configuration references a NUMA node ${r.numaNode} that does not exist on this machine`);
        for (const [t, q] of Object.entries(r.limits)) total[t] = [...(total[t] ?? []), q];
      }
      const types = new Set([
        ...Object.keys(total),
        ...Object.keys(nodeReservation).filter((t) => t === 'memory' || t.startsWith('hugepages-')),
      ]);
      for (const t of [...types].sort()) {
        const want = sumQuantities(nodeReservation[t] ?? []);
        const got = sumQuantities(total[t] ?? []);
        if (want.bytes !== got.bytes)
          throw new Error(
            `the total amount "${got.text}" of type "${t}" is not equal to the value "${want.text}" determined by Node Allocatable feature`,
          );
      }
      const systemReserved = new Map(nodes.map((n) => [n.id, {} as Record<string, number>]));
      for (const r of reserved)
        for (const [t, q] of Object.entries(r.limits)) systemReserved.get(r.numaNode)![t] = Math.trunc(parseQuantity(q) ?? 0);
      return staticPolicy({ nodes, systemReserved });
    }
    default:
      throw new Error(`unknown policy: "${policyName}"`);
  }
}

/** What the manager reports (src/kubelet/observers.ts maps it to upstream's series). */
export interface MemoryManagerObserver {
  pinningRequest(): void;
  pinningError(): void;
}

export interface MemoryManagerDeps {
  rootDir: string;
  policy: MemoryPolicy;
  /** The pods admitted and not terminated (upstream's activePods). */
  activePods: () => Pod[];
  /** Every pod source has listed its pods: only then may assignments of pods not seen go. */
  sourcesReady: () => boolean;
  observe?: MemoryManagerObserver;
  log: Logger;
}

export class MemoryManager {
  readonly #d: MemoryManagerDeps;
  #state: MemoryState = emptyMemoryState();
  #timer?: NodeJS.Timeout;

  constructor(d: MemoryManagerDeps) {
    this.#d = d;
  }

  get policyName(): string {
    return this.#d.policy.name;
  }

  /** Start: the checkpoint restored and checked (throws with upstream's text: the kubelet does not start). */
  start(): void {
    const { policy, rootDir, log } = this.#d;
    this.#state = restoreState(rootDir, policy.name);
    try {
      policy.start(this.#state);
    } catch (e) {
      log.error('Invalid state, please drain node and remove policy state file', { err: e });
      throw e;
    }
    writeState(rootDir, policy.name, this.#state);
    log.info('Starting memorymanager', { policy: policy.name });
    // Upstream frees a container's memory when it stops (PostStopContainer); here the pods gone
    // are looked for every 10 s too, so that the memory is back before the next admission.
    if (policy.name === 'Static') this.#timer = setInterval(() => this.#removeStale(), 10_000).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  hints(pod: Pod, c: Container): ProviderHints {
    this.#removeStale();
    return this.#d.policy.hints(this.#state, pod, c);
  }

  podHints(pod: Pod): ProviderHints {
    this.#removeStale();
    return this.#d.policy.podHints(this.#state, pod);
  }

  /** Allocate with the topology manager's hint; throws with upstream's text (the pod is refused as unexpected). */
  allocate(pod: Pod, c: Container, hint: TopologyHint): void {
    this.#removeStale();
    const uid = pod.metadata!.uid!;
    const had = this.#state.assignments.get(uid)?.has(c.name) ?? false;
    // Counted as upstream's static Allocate counts: every Guaranteed container without pod-level resources.
    const pinned = this.#d.policy.name === 'Static' && qosClass(pod) === 'Guaranteed' && !isPodLevelResourcesSet(pod);
    if (pinned) this.#d.observe?.pinningRequest();
    try {
      this.#d.policy.allocate(this.#state, pod, c, hint);
    } catch (e) {
      if (pinned) this.#d.observe?.pinningError();
      this.#d.log.error('Allocate error', {
        pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`,
        containerName: c.name,
        err: (e as Error).message,
      });
      throw e;
    }
    // Written when the container got memory (a Burstable pod's or the None policy's leave the state as it was).
    if (!had && this.#state.assignments.get(uid)?.has(c.name)) this.#save();
  }

  /** GetMemoryNUMANodes for CreateContainer's cpuset_mems: "0", "0-1"... ; undefined without an assignment. */
  cpusetMems(podUID: string, name: string): string | undefined {
    const nodes = memoryNodes(this.#state, podUID, name);
    return nodes ? compactList(nodes) : undefined;
  }

  /** GetMemory, for PodResources' memory of a container. */
  memory(podUID: string, name: string): Block[] {
    return this.#state.assignments.get(podUID)?.get(name) ?? [];
  }

  /** GetAllocatableMemory, for PodResources' GetAllocatableResources. */
  allocatable(): Block[] {
    return this.#d.policy.allocatable(this.#state);
  }

  /** removeStaleState: once the sources are ready, the containers of pods no longer active give their memory back. */
  #removeStale(): void {
    if (!this.#d.sourcesReady()) return;
    const active = new Map(
      this.#d
        .activePods()
        .map((p) => [p.metadata!.uid!, new Set([...(p.spec?.initContainers ?? []), ...(p.spec?.containers ?? [])].map((c) => c.name))]),
    );
    let changed = false;
    for (const [uid, cs] of [...this.#state.assignments])
      for (const name of [...cs.keys()]) {
        if (active.get(uid)?.has(name)) continue;
        this.#d.log.info('RemoveStaleState removing state', { podUID: uid, containerName: name });
        this.#d.policy.removeContainer(this.#state, uid, name);
        changed = true;
      }
    if (changed) this.#save();
  }

  #save(): void {
    try {
      writeState(this.#d.rootDir, this.#d.policy.name, this.#state);
    } catch (e) {
      this.#d.log.error('Failed to store state to checkpoint', { err: e });
    }
  }
}

/**
 * Quantities added as resource.Quantity.Add does from a zero DecimalSI quantity: the first
 * non-zero term's format (binary for "Mi", "Gi"...) is the sum's.
 */
export function sumQuantities(texts: string[]): { bytes: number; text: string } {
  let bytes = 0;
  let format: 'DecimalSI' | 'BinarySI' = 'DecimalSI';
  for (const t of texts) {
    const v = parseQuantity(t) ?? 0;
    if (bytes === 0 && v !== 0) format = quantityFormat(t);
    bytes += v;
  }
  return { bytes, text: formatQuantity(bytes, format) };
}

/** A cpuset list's text: "0", "0-1", "0,2-3". */
function compactList(ids: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < ids.length; ) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j]! + 1) j++;
    parts.push(i === j ? String(ids[i]) : `${ids[i]}-${ids[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}
