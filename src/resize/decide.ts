// In-place pod resize decisions (InPlacePodVerticalScaling), pure: whether the kubelet can
// accept a pod's new resources (upstream's allocation manager), and what a running container
// needs to get them (upstream's computePodResizeAction): nothing, an in-place update of its
// cgroup (CRI UpdateContainerResources), or a restart when its resizePolicy says so.
import type { Container, Pod, PodCondition, ResourceRequirements } from 'kubernetes-types/core/v1.js';
import { parseQuantity } from '../resources/quantity.ts';
import { changedResources, cpuAndMemory, sameResources } from '../resources/linux-resources.ts';
import { podCPUAndMemoryRequests } from '../resources/pod-resources.ts';

/** Allocated resources by container name (app and init containers). */
export type Allocation = Record<string, ResourceRequirements>;

const resizable = (pod: Pod): Container[] => [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];

/** The cpu and memory each container asks for in the spec. */
export function specAllocation(pod: Pod): Allocation {
  return Object.fromEntries(resizable(pod).map((c) => [c.name, cpuAndMemory(c.resources)]));
}

/** The spec asks for other resources than the kubelet allocated (a resize waits). */
export function resizeRequested(pod: Pod, allocated: Allocation): boolean {
  return resizable(pod).some((c) => allocated[c.name] && !sameResources(cpuAndMemory(c.resources), allocated[c.name]));
}

/** The pod as the kubelet runs it: each container with its allocated cpu and memory (other resources as the spec). */
export function withAllocation(pod: Pod, allocated: Allocation): Pod {
  const swap = (c: Container): Container => {
    const a = allocated[c.name];
    if (!a) return c;
    const keep = (l: Record<string, string> | undefined, r: Record<string, string> | undefined) => {
      const rest = Object.fromEntries(Object.entries(l ?? {}).filter(([k]) => k !== 'cpu' && k !== 'memory'));
      const out = { ...rest, ...r };
      return Object.keys(out).length ? out : undefined;
    };
    const requests = keep(c.resources?.requests, a.requests),
      limits = keep(c.resources?.limits, a.limits);
    return { ...c, resources: { ...c.resources, requests, limits } };
  };
  if (!pod.spec) return pod;
  return {
    ...pod,
    spec: {
      ...pod.spec,
      containers: pod.spec.containers.map(swap),
      ...(pod.spec.initContainers ? { initContainers: pod.spec.initContainers.map(swap) } : {}),
    },
  };
}

export type ResizeVerdict = { ok: true } | { ok: false; reason: 'Infeasible' | 'Deferred'; message: string };

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
 * with: a restart when a changed resource's resizePolicy is RestartContainer, else an update.
 */
export function containerResize(c: Container, actual: ResourceRequirements): ContainerResize {
  const changed = changedResources(cpuAndMemory(c.resources), actual);
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
