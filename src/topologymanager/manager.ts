// The topology manager (upstream's topologymanager.Manager and its scopes): at admission it asks
// the hint providers (the CPU and memory managers) for their NUMA hints, per container (scope
// container) or for the whole pod (scope pod), merges them with the policy (policy.ts), refuses
// the pod with TopologyAffinityError when the policy does not admit the merged hint, and else has
// each provider allocate with it. With policy none it only has the providers allocate, in order.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { allocationRefusal, type Admission } from '../pods/verdict.ts';
import type { ProviderHints, TopologyHint } from './bitmask.ts';
import {
  merge,
  type NUMAInfo,
  POLICY_BEST_EFFORT,
  POLICY_NONE,
  POLICY_RESTRICTED,
  POLICY_SINGLE_NUMA_NODE,
  type PolicyOptions,
  policyOptions,
} from './policy.ts';
import { initAndAppContainers } from '../podutil/podutil.ts';

export const CONTAINER_SCOPE = 'container';
export const POD_SCOPE = 'pod';
export const TOPOLOGY_AFFINITY_ERROR = 'TopologyAffinityError';

/** upstream's HintProvider. allocate throws an Error with `reason` for a typed admission error (SMTAlignmentError). */
export interface HintProvider {
  hints(pod: Pod, c: Container): ProviderHints;
  podHints(pod: Pod): ProviderHints;
  allocate(pod: Pod, c: Container, affinity: TopologyHint): void;
}

/** What the manager reports (src/kubelet/observers.ts maps it to upstream's series): each admission, its duration and whether alignment failed. */
export interface TopologyManagerObserver {
  admission(ms: number, failed: boolean): void;
  /**
   * Under single-numa-node only (upstream's IsAlignmentGuaranteed): a container (container scope)
   * or a pod (pod scope) aligned to one NUMA node, or refused for want of one.
   */
  numaAligned(scope: 'container' | 'pod', ok: boolean): void;
}

export interface TopologyManagerSettings {
  policyName: string;
  scopeName: string;
  options: Record<string, string>;
  /** The machine's NUMA nodes and their distances (/sys/devices/system/node/nodeN/distance). */
  numa: NUMAInfo;
}

export interface TopologyConfig {
  policyName: string;
  scopeName: string;
  options: PolicyOptions;
  numa: NUMAInfo;
}

/** NewManager's checks, with upstream's texts (the start fails with them). */
export function topologyConfig(s: TopologyManagerSettings, warn?: (msg: string) => void): TopologyConfig {
  if (s.policyName === POLICY_NONE) return { policyName: POLICY_NONE, scopeName: 'none', options: policyOptions({}), numa: s.numa };
  const options = policyOptions(s.options, warn);
  if (options.preferClosestNUMA && s.numa.nodes.some((n) => !s.numa.distances.get(n)?.length))
    throw new Error('cannot discover NUMA topology: error getting NUMA distances from cadvisor');
  if (s.numa.nodes.length > options.maxAllowableNUMANodes)
    throw new Error(`unsupported on machines with more than ${options.maxAllowableNUMANodes} NUMA Nodes`);
  if (![POLICY_BEST_EFFORT, POLICY_RESTRICTED, POLICY_SINGLE_NUMA_NODE].includes(s.policyName))
    throw new Error(`unknown policy: "${s.policyName}"`);
  if (s.scopeName !== CONTAINER_SCOPE && s.scopeName !== POD_SCOPE) throw new Error(`unknown scope: "${s.scopeName}"`);
  return { policyName: s.policyName, scopeName: s.scopeName, options, numa: s.numa };
}

const affinityError = (): Admission => ({
  admit: false,
  reason: TOPOLOGY_AFFINITY_ERROR,
  message: 'Pod was rejected: Resources cannot be allocated with Topology locality',
});

export class TopologyManager {
  readonly #c: TopologyConfig;
  readonly #providers: HintProvider[] = [];
  /** pod UID -> container -> the hint chosen at admission (the Store providers read). */
  readonly #hints = new Map<string, Map<string, TopologyHint>>();

  readonly #activePods?: () => Pod[];
  readonly #observe?: TopologyManagerObserver;

  /** activePods: the hints of pods not among them are forgotten at each admission (upstream forgets them as containers go). */
  constructor(c: TopologyConfig, activePods?: () => Pod[], observe?: TopologyManagerObserver) {
    this.#c = c;
    this.#activePods = activePods;
    this.#observe = observe;
  }

  get policyName(): string {
    return this.#c.policyName;
  }

  get scopeName(): string {
    return this.#c.scopeName;
  }

  addHintProvider(p: HintProvider): void {
    this.#providers.push(p);
  }

  /** GetAffinity. */
  affinity(podUID: string, name: string): TopologyHint {
    return this.#hints.get(podUID)?.get(name) ?? { preferred: false };
  }

  /** The pod's hints go once it is gone (upstream forgets them as its containers are removed). */
  forget(podUID: string): void {
    this.#hints.delete(podUID);
  }

  /** Forget every pod not in this set. */
  keepOnly(podUIDs: Set<string>): void {
    for (const uid of this.#hints.keys()) if (!podUIDs.has(uid)) this.#hints.delete(uid);
  }

  /** Admit (scope none, container or pod); upstream counts the failures of the container and pod scopes only. */
  admit(pod: Pod): Admission {
    const started = performance.now();
    const verdict = this.#admit(pod);
    this.#observe?.admission(Math.trunc(performance.now() - started), !verdict.admit && this.#c.policyName !== POLICY_NONE);
    return verdict;
  }

  #admit(pod: Pod): Admission {
    if (this.#activePods) this.keepOnly(new Set(this.#activePods().map((p) => p.metadata!.uid!)));
    try {
      const { policyName, scopeName, numa, options } = this.#c;
      const uid = pod.metadata!.uid!;
      if (policyName === POLICY_NONE) {
        for (const c of initAndAppContainers(pod)) this.#allocate(pod, c, { preferred: false });
        return { admit: true };
      }
      const guaranteed = policyName === POLICY_SINGLE_NUMA_NODE;
      if (scopeName === POD_SCOPE) {
        const { hint, admit } = merge(
          policyName,
          numa,
          options,
          this.#providers.map((p) => p.podHints(pod)),
        );
        if (!admit) {
          if (guaranteed) this.#observe?.numaAligned('pod', false);
          return affinityError();
        }
        for (const c of initAndAppContainers(pod)) {
          this.#set(uid, c.name, hint);
          this.#allocate(pod, c, hint);
        }
        if (guaranteed) this.#observe?.numaAligned('pod', true);
        return { admit: true };
      }
      for (const c of initAndAppContainers(pod)) {
        const { hint, admit } = merge(
          policyName,
          numa,
          options,
          this.#providers.map((p) => p.hints(pod, c)),
        );
        if (!admit) {
          if (guaranteed) this.#observe?.numaAligned('container', false);
          return affinityError();
        }
        this.#set(uid, c.name, hint);
        this.#allocate(pod, c, hint);
        if (guaranteed) this.#observe?.numaAligned('container', true);
      }
      return { admit: true };
    } catch (e) {
      return allocationRefusal(e);
    }
  }

  #set(uid: string, name: string, h: TopologyHint): void {
    let m = this.#hints.get(uid);
    if (!m) this.#hints.set(uid, (m = new Map()));
    m.set(name, h);
  }

  #allocate(pod: Pod, c: Container, h: TopologyHint): void {
    for (const p of this.#providers) p.allocate(pod, c, h);
  }
}
