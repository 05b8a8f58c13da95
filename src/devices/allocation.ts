// Which devices a container gets, and what the node offers: pure functions over the device
// manager's state, as upstream's devicemanager (GetCapacity, devicesToAllocate, Allocate with
// its init-container reuse, deviceRunContainerOptions). The manager (manager.ts) holds the state
// and makes the calls; these decide.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { isSidecar } from '../podutil/podutil.ts';
import { parseQuantity } from '../resources/quantity.ts';
import type { ContainerAllocateResponse__Output } from './generated/v1beta1/ContainerAllocateResponse.ts';

/** upstream's endpointStopGracePeriod: a plugin gone this long loses its resource from the node. */
export const ENDPOINT_STOP_GRACE_MS = 5 * 60_000;
const NO_TOPOLOGY = -1;

export interface DeviceInfo {
  id: string;
  healthy: boolean;
  /** NUMA nodes of its topology; empty: none (upstream's nodeWithoutTopology). */
  numaNodes: number[];
}

/** One registered (or checkpointed) resource: its devices in the order the plugin lists them. */
export interface ResourceState {
  devices: DeviceInfo[];
  /** When its plugin went away (ms); undefined while connected. */
  stoppedAtMs?: number;
}

/** The devices of one container for one resource, and the plugin's Allocate answer once it was asked. */
export interface ContainerDevices {
  /** Device ids by NUMA node, as checkpointed (DevicesPerNUMA). */
  byNuma: Record<string, string[]>;
  response?: ContainerAllocateResponse__Output;
}

/** podUID -> container name -> resource -> devices (upstream's podDevices). */
export type PodDevices = Map<string, Map<string, Map<string, ContainerDevices>>>;

export const deviceIds = (d: ContainerDevices): string[] => [...new Set(Object.values(d.byNuma).flat())];

/**
 * upstream's GetCapacity: capacity counts every device, allocatable the healthy ones; a
 * resource whose plugin is gone longer than the grace is deleted (its capacity then 0 on the Node).
 */
export function capacity(resources: ReadonlyMap<string, ResourceState>, nowMs: number) {
  const cap: Record<string, number> = {};
  const alloc: Record<string, number> = {};
  const deleted: string[] = [];
  for (const [name, r] of resources) {
    if (r.stoppedAtMs !== undefined && nowMs - r.stoppedAtMs > ENDPOINT_STOP_GRACE_MS) {
      deleted.push(name);
      continue;
    }
    cap[name] = r.devices.length;
    alloc[name] = r.devices.filter((d) => d.healthy).length;
  }
  return { capacity: cap, allocatable: alloc, deleted };
}

/** upstream's podDevices.devices(): the devices in use per resource (only those the plugin allocated, and reservations). */
export function devicesInUse(pods: PodDevices): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const containers of pods.values())
    for (const resources of containers.values())
      for (const [resource, d] of resources) {
        const set = out.get(resource) ?? new Set<string>();
        for (const id of deviceIds(d)) set.add(id);
        out.set(resource, set);
      }
  return out;
}

/** The device plugin resources a container asks for: its limits (extended resources are not overcommitted, so requests equal limits). */
export function deviceRequests(c: Container, isDeviceResource: (name: string) => boolean): [string, number][] {
  return Object.entries(c.resources?.limits ?? {})
    .filter(([name]) => isDeviceResource(name))
    .map(([name, q]) => [name, parseQuantity(q) ?? 0] as [string, number])
    .filter(([, n]) => n > 0);
}

export interface AllocationInput {
  resource: string;
  required: number;
  /** What this container already has of it (a restart), or undefined. */
  existing?: string[];
  /** Devices freed by the pod's init containers, to take first. */
  reusable: ReadonlySet<string>;
  /** Undefined: no plugin ever registered the resource. */
  state?: ResourceState;
  inUse: ReadonlySet<string>;
  /** The plugin's GetPreferredAllocation answer, when it was asked. */
  preferred?: string[];
}

export type AllocationResult = { devices: string[] } | { error: string };

/** upstream's devicesToAllocate without NUMA alignment (the none topology policy): reused, then preferred, then healthy available in order. */
export function devicesToAllocate(i: AllocationInput): AllocationResult {
  let needed = i.required;
  if (i.existing) {
    needed -= i.existing.length;
    if (needed !== 0) return { error: `container changed request for resource "${i.resource}" from ${i.existing.length} to ${i.required}` };
  }
  if (!i.state) return { error: `cannot allocate unregistered device ${i.resource}` };
  const healthy = i.state.devices.filter((d) => d.healthy).map((d) => d.id);
  if (healthy.length === 0) return { error: `no healthy devices present; cannot allocate unhealthy devices ${i.resource}` };
  if (i.existing?.some((id) => !healthy.includes(id)))
    return { error: `previously allocated devices are no longer healthy; cannot allocate unhealthy devices ${i.resource}` };
  if (needed === 0) return { devices: [] };
  const allocated: string[] = [];
  const take = (from: Iterable<string>) => {
    for (const id of from) {
      if (needed === 0) break;
      if (allocated.includes(id)) continue;
      allocated.push(id);
      needed--;
    }
    return needed === 0;
  };
  if (take(i.reusable)) return { devices: allocated };
  const available = healthy.filter((id) => !i.inUse.has(id) && !allocated.includes(id));
  if (available.length < needed)
    return { error: `requested number of devices unavailable for ${i.resource}. Requested: ${needed}, Available: ${available.length}` };
  if (take((i.preferred ?? []).filter((id) => available.includes(id)))) return { devices: allocated };
  if (take(available)) return { devices: allocated };
  return { error: `unexpectedly allocated less resources than required. Requested: ${i.required}, Got: ${i.required - needed}` };
}

/** The message of a refused admission, as upstream's unexpectedAdmissionError. */
export const admissionMessage = (err: string) => `Allocate failed due to ${err}, which is unexpected`;

export interface PodPlanInput {
  resources: ReadonlyMap<string, ResourceState>;
  pods: PodDevices;
  /** Resources allocated before even if not registered now (upstream's isDevicePluginResource). */
  isDeviceResource: (name: string) => boolean;
  /** A container found running by the runtime at start while the sources are not ready: nothing to do (a kubelet restart). */
  runningAtStart?: (podUID: string, container: string) => boolean;
}

/**
 * upstream's Allocate over a pod's containers, init containers first (admitPolicyNone): the
 * devices each gets, with an init container's devices reused by later containers unless it is
 * a sidecar (restartable). Returns the new assignments, or why the pod cannot have them.
 */
export function planPodDevices(
  pod: Pod,
  input: PodPlanInput,
): { assign: [container: string, resource: string, ids: string[]][] } | { error: string } {
  const uid = pod.metadata!.uid!;
  const existing = input.pods.get(uid);
  const inUse = devicesInUse(input.pods);
  const reusable = new Map<string, Set<string>>();
  const assign: [string, string, string[]][] = [];
  const initNames = new Set((pod.spec?.initContainers ?? []).map((c) => c.name));
  const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  for (const c of containers) {
    const mine = new Map<string, string[]>();
    for (const [resource, required] of deviceRequests(c, input.isDeviceResource)) {
      const had = existing?.get(c.name)?.get(resource);
      // upstream's devicesToAllocate, scenario 2 (a kubelet restart): a container the runtime
      // runs, seen before the sources are ready, already has what it needs, whether the checkpoint
      // remembers its devices or not; the plugin may not have registered again yet, so its
      // devices' health is not asked.
      if (input.runningAtStart?.(uid, c.name)) {
        if (had) mine.set(resource, deviceIds(had));
        continue;
      }
      const r = devicesToAllocate({
        resource,
        required,
        existing: had ? deviceIds(had) : undefined,
        reusable: reusable.get(resource) ?? new Set(),
        state: input.resources.get(resource),
        inUse: inUse.get(resource) ?? new Set(),
      });
      if ('error' in r) return { error: r.error };
      const ids = had ? deviceIds(had) : r.devices;
      mine.set(resource, ids);
      if (!had && ids.length) {
        assign.push([c.name, resource, ids]);
        const set = inUse.get(resource) ?? new Set<string>();
        for (const id of ids) set.add(id);
        inUse.set(resource, set);
      }
    }
    // An init container's devices are free again once it ended: later containers take them
    // first. A sidecar keeps its own; an app container takes them out of the pool.
    for (const [resource, ids] of mine) {
      const pool = reusable.get(resource) ?? new Set<string>();
      if (initNames.has(c.name) && !isSidecar(c)) for (const id of ids) pool.add(id);
      else for (const id of ids) pool.delete(id);
      reusable.set(resource, pool);
    }
  }
  return { assign };
}

/** Assigns ids to NUMA nodes as upstream records them: each device under each of its nodes, or -1. */
export function byNuma(ids: string[], state: ResourceState | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const id of ids) {
    const nodes = state?.devices.find((d) => d.id === id)?.numaNodes ?? [];
    for (const n of nodes.length ? nodes : [NO_TOPOLOGY]) (out[String(n)] ??= []).push(id);
  }
  return out;
}

/** What a container gets from its devices' Allocate answers, merged as upstream's deviceRunContainerOptions: the first of a name or path wins. */
export interface DeviceRunOptions {
  envs: { name: string; value: string }[];
  mounts: { containerPath: string; hostPath: string; readOnly: boolean }[];
  devices: { containerPath: string; hostPath: string; permissions: string }[];
  annotations: Record<string, string>;
  cdiDevices: string[];
}

export function deviceRunOptions(responses: ContainerAllocateResponse__Output[]): DeviceRunOptions {
  const o: DeviceRunOptions = { envs: [], mounts: [], devices: [], annotations: {}, cdiDevices: [] };
  for (const r of responses) {
    for (const [name, value] of Object.entries(r.envs ?? {})) if (!o.envs.some((e) => e.name === name)) o.envs.push({ name, value });
    for (const d of r.devices ?? [])
      if (!o.devices.some((x) => x.containerPath === d.containerPath))
        o.devices.push({ containerPath: d.containerPath, hostPath: d.hostPath, permissions: d.permissions });
    for (const m of r.mounts ?? [])
      if (!o.mounts.some((x) => x.containerPath === m.containerPath))
        o.mounts.push({ containerPath: m.containerPath, hostPath: m.hostPath, readOnly: m.readOnly });
    for (const [k, v] of Object.entries(r.annotations ?? {})) if (!(k in o.annotations)) o.annotations[k] = v;
    for (const c of r.cdiDevices ?? []) if (!o.cdiDevices.includes(c.name)) o.cdiDevices.push(c.name);
  }
  return o;
}
