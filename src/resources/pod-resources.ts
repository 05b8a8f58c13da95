// A pod's requests and limits as a whole (k8s.io/component-helpers resource.PodRequests and
// PodLimits), with pod-level resources (PodLevelResources, beta and on since 1.34):
// spec.resources sets cpu, memory and hugepages-* for the pod, and a value set there wins
// over the containers' aggregate. Admission, eviction ranking, QoS, the pod cgroup and the
// containers' own limits all read it from here. Pure.
import type { Container, Pod, ResourceRequirements } from 'kubernetes-types/core/v1.js';
import { bytes, milliCPU } from './linux-resources.ts';
import { isSidecar } from '../podutil/podutil.ts';

/** spec.resources (pod-level resources): not in kubernetes-types yet. */
export type PodSpecWithResources = NonNullable<Pod['spec']> & { resources?: ResourceRequirements };

/** Amounts by resource name: cpu in millicores, the rest in whole units, rounded up as Quantity's MilliValue and Value. */
export type Amounts = Record<string, number>;

export const HUGEPAGES_PREFIX = 'hugepages-';
const isHugePages = (name: string) => name.startsWith(HUGEPAGES_PREFIX);

/** Upstream's IsSupportedPodLevelResource: cpu, memory and hugepages-*. */
export const isSupportedPodLevelResource = (name: string) => name === 'cpu' || name === 'memory' || isHugePages(name);

/** spec.resources as written; undefined when the pod has none. */
export const podSpecResources = (pod: Pod): ResourceRequirements | undefined => (pod.spec as PodSpecWithResources | undefined)?.resources;

export const amountOf = (name: string, q: string | number): number => (name === 'cpu' ? milliCPU(q) : bytes(q));

export function toAmounts(list: Record<string, string | number> | undefined): Amounts {
  const out: Amounts = {};
  for (const [k, v] of Object.entries(list ?? {})) out[k] = amountOf(k, v);
  return out;
}

function addInto(to: Amounts, from: Amounts): Amounts {
  for (const [k, v] of Object.entries(from)) to[k] = (to[k] ?? 0) + v;
  return to;
}

function maxInto(to: Amounts, from: Amounts): Amounts {
  for (const [k, v] of Object.entries(from)) if (to[k] === undefined || v > to[k]) to[k] = v;
  return to;
}

/** A container's requests as the apiserver defaults them (SetDefaults_Pod): a limit stands in for a missing request. */
export const containerRequests = (c: Container): Amounts => toAmounts({ ...c.resources?.limits, ...c.resources?.requests });
export const containerLimits = (c: Container): Amounts => toAmounts(c.resources?.limits);

/** Called with each container's share, as upstream's ContainerFn: an init container's includes the sidecars before it. */
export type ContainerFn = (amounts: Amounts, type: 'container' | 'init') => void;

/**
 * Upstream's AggregateContainerRequests and AggregateContainerLimits (the sidecar KEP's
 * formula): app containers and sidecars add up; an init container runs beside the sidecars
 * started before it, and the pod needs the larger of that peak and the sum.
 */
function aggregate(pod: Pod, of: (c: Container) => Amounts, fn?: ContainerFn): Amounts {
  const total: Amounts = {};
  for (const c of pod.spec?.containers ?? []) {
    const a = of(c);
    fn?.(a, 'container');
    addInto(total, a);
  }
  const sidecars: Amounts = {},
    initPeak: Amounts = {};
  for (const c of pod.spec?.initContainers ?? []) {
    let a = of(c);
    if (isSidecar(c)) {
      addInto(total, a);
      addInto(sidecars, a);
      a = { ...sidecars };
    } else {
      a = addInto({ ...a }, sidecars);
    }
    fn?.(a, 'init');
    maxInto(initPeak, a);
  }
  return maxInto(total, initPeak);
}

export const aggregateContainerRequests = (pod: Pod, fn?: ContainerFn) => aggregate(pod, containerRequests, fn);
export const aggregateContainerLimits = (pod: Pod, fn?: ContainerFn) => aggregate(pod, containerLimits, fn);

export interface PodLevel {
  requests: Amounts;
  limits: Amounts;
}

/**
 * spec.resources as the apiserver defaults it (SetDefaults_Pod: defaultHugePagePodLimits,
 * then defaultPodRequests), so that a static pod, which no apiserver defaulted, reads as it
 * would upstream; a no-op on pods from the apiserver. Undefined when spec.resources is absent.
 */
export function podLevelResources(pod: Pod): PodLevel | undefined {
  const raw = podSpecResources(pod);
  if (!raw) return undefined;
  const rawRequests = raw.requests ?? {},
    rawLimits = raw.limits ?? {};
  const requests = toAmounts(rawRequests),
    limits = toAmounts(rawLimits);
  // Hugepages limited by the containers but not at the pod level default to their aggregate, unless requested there.
  if (Object.keys(rawRequests).length || Object.keys(rawLimits).length) {
    for (const [k, v] of Object.entries(aggregateContainerLimits(pod)))
      if (isHugePages(k) && rawRequests[k] === undefined && limits[k] === undefined) limits[k] = v;
  }
  // With pod-level limits, a missing pod-level request defaults to the containers' aggregate
  // (overcommittable resources: not hugepages), else to the pod-level limit.
  if (Object.keys(limits).length) {
    for (const [k, v] of Object.entries(aggregateContainerRequests(pod)))
      if (requests[k] === undefined && isSupportedPodLevelResource(k) && !isHugePages(k)) requests[k] = v;
    for (const [k, v] of Object.entries(limits)) if (requests[k] === undefined && isSupportedPodLevelResource(k)) requests[k] = v;
  }
  return { requests, limits };
}

const anySupported = (a: Amounts) => Object.keys(a).some(isSupportedPodLevelResource);

/** Upstream's IsPodLevelResourcesSet: pod-level requests or limits name a supported resource. */
export function isPodLevelResourcesSet(pod: Pod): boolean {
  const l = podLevelResources(pod);
  return !!l && (anySupported(l.requests) || anySupported(l.limits));
}

/** Upstream's IsPodLevelRequestsSet. */
export function isPodLevelRequestsSet(pod: Pod): boolean {
  const l = podLevelResources(pod);
  return !!l && anySupported(l.requests);
}

export interface PodResourcesOptions {
  /** Containers only (upstream's SkipPodLevelResources; PodLevelResources off). */
  skipPodLevelResources?: boolean;
  /** Pod-level values only (upstream's SkipContainerLevelResources). */
  skipContainerLevelResources?: boolean;
  excludeOverhead?: boolean;
  containerFn?: ContainerFn;
}

/** Upstream's PodRequests: the containers' aggregate, each resource set at the pod level replaced by it, plus the overhead. */
export function podRequests(pod: Pod, opts: PodResourcesOptions = {}): Amounts {
  const reqs = opts.skipContainerLevelResources ? {} : aggregateContainerRequests(pod, opts.containerFn);
  const level = opts.skipPodLevelResources ? undefined : podLevelResources(pod);
  if (level && anySupported(level.requests)) {
    for (const [k, v] of Object.entries(level.requests)) if (isSupportedPodLevelResource(k)) reqs[k] = v;
  }
  if (!opts.excludeOverhead) addInto(reqs, toAmounts(pod.spec?.overhead));
  return reqs;
}

/** Upstream's PodLimits: as PodRequests, the overhead added only to a non-zero limit. */
export function podLimits(pod: Pod, opts: PodResourcesOptions = {}): Amounts {
  const limits = aggregateContainerLimits(pod, opts.containerFn);
  const level = opts.skipPodLevelResources ? undefined : podLevelResources(pod);
  if (level && (anySupported(level.requests) || anySupported(level.limits))) {
    for (const [k, v] of Object.entries(level.limits)) if (isSupportedPodLevelResource(k)) limits[k] = v;
  }
  if (!opts.excludeOverhead) {
    for (const [k, v] of Object.entries(toAmounts(pod.spec?.overhead))) if (limits[k]) limits[k] += v;
  }
  return limits;
}

/**
 * Upstream's GetResourceRequestQuantity (eviction ranking, critical pod preemption): with
 * pod-level resources only the pod-level requests count, so a resource not set there is 0;
 * the overhead is added to a non-zero request.
 */
export function resourceRequest(pod: Pod, name: string): number {
  const total = podRequests(pod, { skipContainerLevelResources: isPodLevelResourcesSet(pod), excludeOverhead: true })[name] ?? 0;
  const overhead = pod.spec?.overhead?.[name];
  return total !== 0 && overhead !== undefined ? total + amountOf(name, overhead) : total;
}

/** The cpu (cores) and memory (bytes) PodRequests gives: what admission and resize fit against the node's allocatable. */
export function podCPUAndMemoryRequests(pod: Pod): { cpu: number; memory: number } {
  const r = podRequests(pod);
  return { cpu: (r.cpu ?? 0) / 1000, memory: r.memory ?? 0 };
}

/**
 * The pod-level limits a container without its own falls back to (upstream's getCPULimit and
 * getMemoryLimit in kuberuntime_container_linux.go); undefined when the pod sets no pod-level resources.
 */
export function podLimitsForContainers(pod: Pod): { cpu?: number; memory?: number } | undefined {
  if (!isPodLevelResourcesSet(pod)) return undefined;
  const limits = toAmounts(podSpecResources(pod)?.limits);
  return { cpu: limits.cpu, memory: limits.memory };
}
