// In-place pod resize decisions (InPlacePodVerticalScaling, and InPlacePodLevelResourcesVerticalScaling
// for spec.resources), pure: whether the kubelet can accept a pod's new resources (upstream's
// allocation manager), and what a running container needs to get them (upstream's
// computePodResizeAction): nothing, an in-place update of its cgroup (CRI
// UpdateContainerResources), or a restart when its resizePolicy says so.
import type { Container, Pod, PodCondition, ResourceRequirements } from 'kubernetes-types/core/v1.js';
import { formatBinary, formatCPU, parseQuantity } from '../resources/quantity.ts';
import { bytes, CFS_PERIOD_US, changedResources, cpuAndMemory, milliCPU, sameResources } from '../resources/linux-resources.ts';
import type { PodCgroupLimits } from '../resources/pod-cgroup.ts';
import { isSidecar, initAndAppContainers } from '../podutil/podutil.ts';
import { qosClass } from '../resources/qos.ts';
import {
  isSupportedPodLevelResource,
  podCPUAndMemoryRequests,
  podLimits,
  podRequests,
  podSpecResources,
  type Amounts,
  type PodSpecWithResources,
} from '../resources/pod-resources.ts';

/**
 * What the kubelet allocated to a pod (upstream's state.PodResourceInfo): the cpu and memory of
 * each container by name (app and init containers), and the pod-level ones (spec.resources),
 * present when the pod sets spec.resources.
 */
export interface Allocation {
  containers: Record<string, ResourceRequirements>;
  pod?: ResourceRequirements;
}

/** The cpu and memory each container, and the pod as a whole, ask for in the spec (upstream's allocationFromPod). */
export function specAllocation(pod: Pod): Allocation {
  const level = podSpecResources(pod);
  return {
    containers: Object.fromEntries(initAndAppContainers(pod).map((c) => [c.name, cpuAndMemory(c.resources)])),
    ...(level ? { pod: cpuAndMemory(level) } : {}),
  };
}

/** The spec asks for other resources than the kubelet allocated, for a known container or at the pod level (a resize waits). */
export function resizeRequested(pod: Pod, allocated: Allocation): boolean {
  const containers = initAndAppContainers(pod).some(
    (c) => allocated.containers[c.name] && !sameResources(cpuAndMemory(c.resources), allocated.containers[c.name]),
  );
  return containers || !sameResources(cpuAndMemory(podSpecResources(pod)), allocated.pod);
}

/** A resource list with its cpu and memory replaced by the allocated ones (other resources as the spec); undefined when empty. */
function withCPUAndMemory(l: Record<string, string> | undefined, r: Record<string, string> | undefined) {
  const rest = Object.fromEntries(Object.entries(l ?? {}).filter(([k]) => k !== 'cpu' && k !== 'memory'));
  const out = { ...rest, ...r };
  return Object.keys(out).length ? out : undefined;
}

/**
 * The pod as the kubelet runs it (upstream's updatePodFromAllocation): each container, and
 * spec.resources, with their allocated cpu and memory (other resources as the spec).
 */
export function withAllocation(pod: Pod, allocated: Allocation): Pod {
  const swap = (c: Container): Container => {
    const a = allocated.containers[c.name];
    if (!a) return c;
    const requests = withCPUAndMemory(c.resources?.requests, a.requests),
      limits = withCPUAndMemory(c.resources?.limits, a.limits);
    return { ...c, resources: { ...c.resources, requests, limits } };
  };
  if (!pod.spec) return pod;
  const spec: PodSpecWithResources = {
    ...pod.spec,
    containers: pod.spec.containers.map(swap),
    ...(pod.spec.initContainers ? { initContainers: pod.spec.initContainers.map(swap) } : {}),
  };
  const level = podSpecResources(pod);
  if (level || allocated.pod) {
    // A pod-level resize that adds spec.resources runs without them until it is allocated.
    const requests = withCPUAndMemory(level?.requests, allocated.pod?.requests),
      limits = withCPUAndMemory(level?.limits, allocated.pod?.limits);
    const { requests: _r, limits: _l, ...rest } = level ?? {};
    const next: ResourceRequirements = { ...rest, ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) };
    if (Object.keys(next).length) spec.resources = next;
    else delete spec.resources;
  }
  return { ...pod, spec };
}

/**
 * Upstream's GetLimits (containerResourcesFromRequirements): a container's cpu and memory as its
 * cgroup gets them, the pod-level limits standing in for the limits it does not set. What a
 * container is created or updated with, and so what its resize is measured against.
 */
export function effectiveResources(r: ResourceRequirements | undefined, podLevel: ResourceRequirements | undefined): ResourceRequirements {
  const own = cpuAndMemory(r);
  const pod = cpuAndMemory(podLevel).limits;
  if (!pod) return own;
  const limits: Record<string, string> = { ...own.limits };
  if (!milliCPU(limits.cpu) && milliCPU(pod.cpu)) limits.cpu = pod.cpu!;
  if (!bytes(limits.memory) && bytes(pod.memory)) limits.memory = pod.memory!;
  return { ...(own.requests ? { requests: own.requests } : {}), ...(Object.keys(limits).length ? { limits } : {}) };
}

/**
 * Upstream's computePodLevelResourcesResizeAction: the pod-level cpu or memory allocated differ
 * from those the pod cgroup was last set to (actuated), so the pod cgroup must be resized.
 */
export function podLevelResizeNeeded(allocated: ResourceRequirements | undefined, actuated: ResourceRequirements | undefined): boolean {
  return !sameResources(cpuAndMemory(allocated), cpuAndMemory(actuated));
}

export type ResizeVerdict = { ok: true } | { ok: false; reason: 'Infeasible' | 'Deferred'; message: string };

/**
 * Upstream's podResizesAdmitHandler with InPlacePodVerticalScalingExclusiveCPUs off (alpha): a
 * Guaranteed pod cannot change a container's cpu under the CPU manager's static policy (its
 * exclusive CPUs would not follow). allocatedCPU: a container's allocated cpu request, by name.
 */
export function staticCPUResizeVerdict(pod: Pod, allocatedCPU: (name: string) => string | undefined): ResizeVerdict {
  if (qosClass(pod) !== 'Guaranteed') return { ok: true };
  const resizable = [...(pod.spec?.initContainers ?? []).filter(isSidecar), ...(pod.spec?.containers ?? [])];
  if (!resizable.some((c) => milliCPU(c.resources?.requests?.cpu) !== milliCPU(allocatedCPU(c.name)))) return { ok: true };
  return { ok: false, reason: 'Infeasible', message: 'Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"' };
}

/**
 * Whether a pod's new requests can be allocated: Infeasible when they exceed what the node can
 * ever give, Deferred when they do not fit next to the other pods' allocations (tried again
 * later), else accepted. allocatable: the node's (undefined: unknown, accept).
 */
export function admitResize(pod: Pod, others: Pod[], allocatable: Record<string, string> | undefined): ResizeVerdict {
  if (!allocatable) return { ok: true };
  const want = podCPUAndMemoryRequests(pod);
  const capacity = { cpu: parseQuantity(allocatable.cpu ?? '') ?? Infinity, memory: parseQuantity(allocatable.memory ?? '') ?? Infinity };
  // Upstream prints cpu in millicores and memory in bytes.
  const f = (r: 'cpu' | 'memory', x: number) => String(r === 'cpu' ? Math.round(x * 1000) : Math.round(x));
  const over = (['memory', 'cpu'] as const).find((r) => want[r] > capacity[r]);
  if (over)
    return {
      ok: false,
      reason: 'Infeasible',
      message: `Node didn't have enough capacity: ${over}, requested: ${f(over, want[over])}, capacity: ${f(over, capacity[over])}`,
    };
  for (const r of ['cpu', 'memory'] as const) {
    const used = others.reduce((n, p) => n + podCPUAndMemoryRequests(p)[r], 0);
    if (want[r] > 0 && used + want[r] > capacity[r]) {
      return {
        ok: false,
        reason: 'Deferred',
        message: `Node didn't have enough resource: ${r}, requested: ${f(r, want[r])}, used: ${f(r, used)}, capacity: ${f(r, capacity[r])}`,
      };
    }
  }
  return { ok: true };
}

export type ContainerResize = { action: 'none' } | { action: 'update' | 'restart'; changed: ('cpu' | 'memory')[] };

/**
 * What a running container needs to run with its allocated resources, given those it runs
 * with (its effective ones, pod-level limits included): a restart when a changed resource's
 * resizePolicy is RestartContainer, else an update. podLevel: the pod's allocated
 * spec.resources, whose limits a container without its own gets, so that a pod-level resize
 * reaches it too.
 */
export function containerResize(c: Container, actual: ResourceRequirements, podLevel?: ResourceRequirements): ContainerResize {
  const changed = changedResources(effectiveResources(c.resources, podLevel), actual);
  if (!changed.length) return { action: 'none' };
  const policy = (r: string) => c.resizePolicy?.find((p) => p.resourceName === r)?.restartPolicy ?? 'NotRequired';
  return { action: changed.some((r) => policy(r) === 'RestartContainer') ? 'restart' : 'update', changed };
}

/** A resize condition of the pod (PodResizePending, PodResizeInProgress): always True while present. */
export interface ResizeCondition {
  reason?: string;
  message?: string;
  generation?: number;
}

/** The two conditions, carrying lastTransitionTime over while their reason stays (as upstream). */
export function resizeConditions(
  s: { pending?: ResizeCondition; inProgress?: ResizeCondition },
  prev: PodCondition[] | undefined,
  now: string,
): PodCondition[] {
  const make = (type: string, c: ResizeCondition | undefined): PodCondition[] => {
    if (!c) return [];
    const old = prev?.find((x) => x.type === type);
    return [
      {
        type,
        status: 'True',
        ...(c.generation !== undefined ? { observedGeneration: c.generation } : {}),
        lastTransitionTime: old?.lastTransitionTime && (old.reason ?? '') === (c.reason ?? '') ? old.lastTransitionTime : now,
        ...(c.reason ? { reason: c.reason } : {}),
        ...(c.message ? { message: c.message } : {}),
      },
    ];
  };
  return [...make('PodResizePending', s.pending), ...make('PodResizeInProgress', s.inProgress)];
}

/**
 * A running container's status.resources (upstream's convertContainerStatusResources): shaped
 * as its allocated resources, whose cpu and memory are replaced by those it runs with (actual:
 * its effective ones, so a limit it gets from the pod shows only where it declares limits).
 */
export function containerStatusResources(allocated: ResourceRequirements, actual: ResourceRequirements): ResourceRequirements {
  const merge = (a: Record<string, string> | undefined, b: Record<string, string> | undefined) => {
    if (!a) return undefined;
    const out = { ...a };
    for (const r of ['cpu', 'memory']) if (b?.[r] !== undefined) out[r] = b[r]!;
    return out;
  };
  const requests = merge(allocated.requests, actual.requests),
    limits = merge(allocated.limits, actual.limits);
  return { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) };
}

/** Amounts as API quantities: cpu in cores or millicores, the rest in bytes or units (binary suffixes when exact). */
function quantities(a: Amounts): Record<string, string> {
  return Object.fromEntries(Object.entries(a).map(([k, v]) => [k, k === 'cpu' ? formatCPU(v / 1000) : formatBinary(v)]));
}
const nonEmpty = (k: 'requests' | 'limits', l: Record<string, string>) => (Object.keys(l).length ? { [k]: l } : {});

/**
 * PodRequests or PodLimits as quantities, a value set at the pod level as written: upstream
 * copies the Quantity, and a memory of "10m" (a hundredth of a byte) is not 1 byte to a reader.
 */
function podQuantities(pod: Pod, totals: Amounts, kind: 'requests' | 'limits'): Record<string, string> {
  const out = quantities(totals);
  for (const [k, v] of Object.entries(podSpecResources(pod)?.[kind] ?? {}))
    if (k in out && isSupportedPodLevelResource(k) && pod.spec?.overhead?.[k] === undefined) out[k] = String(v);
  return out;
}

/** Upstream's PodRequests of the allocated pod: pod status allocatedResources (with InPlacePodLevelResourcesVerticalScaling). */
export function podAllocatedResources(allocatedPod: Pod): Record<string, string> {
  return podQuantities(allocatedPod, podRequests(allocatedPod), 'requests');
}

// cm.MinShares and cm.MinMilliCPULimit: at or below these the cgroup cannot tell values apart.
const MIN_SHARES_MILLI = 2,
  MIN_MILLI_CPU_LIMIT = 10;
/** Upstream's SharesToMilliCPU. */
const sharesToMilli = (shares: number) => (shares >= 2 ? Math.ceil((shares * 1000) / 1024) : 0);

/**
 * Pod status resources (upstream's convertToAPIPodLevelResourcesStatus): for a pod not yet
 * running, its allocated spec.resources with the pod's requests and limits as a whole
 * (getEffectiveAllocatedResources); for a running one, what its pod cgroup enforces: the cpu
 * request from cpu.shares, the cpu limit from the CFS quota, the memory limit; the memory
 * request, which no cgroup holds, as allocated. running: the pod's phase (as the apiserver has
 * it) is Running; cgroup: the pod cgroup's limits, undefined when unreadable (then as allocated).
 * Unlike upstream on cgroup v1, an unlimited memory cgroup does not show as a limit.
 */
export function podStatusResources(allocatedPod: Pod, running: boolean, cgroup: PodCgroupLimits | undefined): ResourceRequirements {
  const level = podSpecResources(allocatedPod);
  const { requests: _r, limits: _l, ...rest } = level ?? {};
  if (!running || !cgroup) {
    return {
      ...rest,
      ...nonEmpty('requests', podQuantities(allocatedPod, podRequests(allocatedPod), 'requests')),
      ...nonEmpty('limits', podQuantities(allocatedPod, podLimits(allocatedPod), 'limits')),
    };
  }
  const requests: Record<string, string> = { ...level?.requests },
    limits: Record<string, string> = { ...level?.limits };
  const cpuRequest = sharesToMilli(cgroup.cpuShares);
  if (cpuRequest > 0 && (cpuRequest > MIN_SHARES_MILLI || milliCPU(requests.cpu) > MIN_SHARES_MILLI))
    requests.cpu = formatCPU(cpuRequest / 1000);
  if (requests.memory === undefined) {
    const memory = podRequests(allocatedPod).memory;
    if (memory !== undefined) requests.memory = formatBinary(memory);
  }
  const cpuLimit = cgroup.cpuQuotaUs ? Math.floor((cgroup.cpuQuotaUs * 1000) / (cgroup.cpuPeriodUs ?? CFS_PERIOD_US)) : 0;
  if (cpuLimit > 0 && (cpuLimit > MIN_MILLI_CPU_LIMIT || milliCPU(limits.cpu) > MIN_MILLI_CPU_LIMIT))
    limits.cpu = formatCPU(cpuLimit / 1000);
  if (cgroup.memoryLimitBytes) limits.memory = formatBinary(cgroup.memoryLimitBytes);
  return { ...rest, ...nonEmpty('requests', requests), ...nonEmpty('limits', limits) };
}
