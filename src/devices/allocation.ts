// Which devices a container gets, and what the node offers: pure functions over the device
// manager's state, as upstream's devicemanager (GetCapacity, devicesToAllocate, Allocate with
// its init-container reuse, deviceRunContainerOptions). The manager (manager.ts) holds the state
// and makes the calls; these decide.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { isSidecar, initAndAppContainers } from '../podutil/podutil.ts';
import { parseQuantity } from '../resources/quantity.ts';
import type { NUMAMask } from '../topologymanager/bitmask.ts';
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
  /** The topology manager's affinity for the container (its store's GetAffinity); undefined: none. */
  affinity?: NUMAMask;
  /** The plugin's GetPreferredAllocation answer, when it was asked. */
  preferred?: string[];
}

/** What upstream's callGetPreferredAllocationIfAvailable sends the plugin at the point devicesToAllocate asks it. */
export interface PreferredRequest {
  available: string[];
  mustInclude: string[];
  size: number;
}

/**
 * The devices chosen, and (when the allocation got as far as asking the plugin) what the plugin
 * would be asked: the manager asks it when its options say GetPreferredAllocationAvailable and
 * runs this again with the answer in `preferred`.
 */
export type AllocationResult = { devices: string[]; ask?: PreferredRequest } | { error: string };

/**
 * upstream's filterByAffinity: the available devices split into those on a NUMA node of the
 * affinity, those on other nodes, and those without topology. A device on several nodes goes
 * with the first of its nodes in upstream's order: the affinity's nodes, then the others (each
 * group by fewer devices first, then node id for a stable order), then no topology. Without an
 * affinity, or when no device of the resource has topology, every device is "no affinity".
 */
export function filterByAffinity(
  available: readonly string[],
  state: ResourceState,
  affinity: NUMAMask | undefined,
): { aligned: string[]; unaligned: string[]; noAffinity: string[] } {
  if (!affinity || !hasTopology(state)) return { aligned: [], unaligned: [], noAffinity: [...available] };
  const nodesOf = new Map(state.devices.map((d) => [d.id, d.numaNodes.length ? d.numaNodes : [NO_TOPOLOGY]]));
  const perNode = new Map<number, number>();
  for (const id of available) for (const n of nodesOf.get(id) ?? [NO_TOPOLOGY]) perNode.set(n, (perNode.get(n) ?? 0) + 1);
  const inAffinity = (n: number) => n !== NO_TOPOLOGY && affinity.list().includes(n);
  const group = (n: number) => (inAffinity(n) ? 0 : n === NO_TOPOLOGY ? 2 : 1);
  const order = [...perNode.keys()].sort((a, b) => group(a) - group(b) || perNode.get(a)! - perNode.get(b)! || a - b);
  const out = { aligned: [] as string[], unaligned: [] as string[], noAffinity: [] as string[] };
  for (const id of available) {
    const nodes = nodesOf.get(id) ?? [NO_TOPOLOGY];
    const first = order.find((n) => nodes.includes(n))!;
    (first === NO_TOPOLOGY ? out.noAffinity : inAffinity(first) ? out.aligned : out.unaligned).push(id);
  }
  return out;
}

/** upstream's deviceHasTopologyAlignment: any device of the resource reports NUMA nodes. */
export const hasTopology = (state: ResourceState | undefined): boolean => !!state?.devices.some((d) => d.numaNodes.length > 0);

/**
 * upstream's devicesToAllocate: reused devices first; then, when the rest fits in the devices
 * aligned to the topology manager's affinity, the plugin's preferred ones among those and then
 * the aligned ones; else all the aligned ones, the plugin's preferred among the available, the
 * unaligned, and last those without topology.
 */
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
  const { aligned, unaligned, noAffinity } = filterByAffinity(available, i.state, i.affinity);
  const short = () => ({
    error: `unexpectedly allocated less resources than required. Requested: ${i.required}, Got: ${i.required - needed}`,
  });
  // What the plugin is asked: the candidates with what is already taken, which it must keep.
  const ask = (from: string[]): PreferredRequest => ({
    available: [...new Set([...from, ...allocated])],
    mustInclude: [...allocated],
    size: i.required,
  });
  const preferredIn = (from: string[]) => (i.preferred ?? []).filter((id) => from.includes(id));
  if (needed < aligned.length) {
    const request = ask(aligned);
    if (take(preferredIn(aligned)) || take(aligned)) return { devices: allocated, ask: request };
    return short();
  }
  if (take(aligned)) return { devices: allocated };
  const request = ask(available);
  if (take(preferredIn(available)) || take(unaligned) || take(noAffinity)) return { devices: allocated, ask: request };
  return short();
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
  /** The topology manager's affinity for a container (its hint store); undefined: none. */
  affinity?: (podUID: string, container: string) => NUMAMask | undefined;
}

/** One container's new devices for one resource. */
export type Assignment = [container: string, resource: string, ids: string[]];

/**
 * upstream's allocateContainerResources for one container: per device resource it asks for,
 * the devices it gets (devicesToAllocate), given the devices the pod's earlier init containers
 * leave to reuse and those in use (both updated here with what it takes).
 */
export function planContainerDevices(
  pod: Pod,
  c: Container,
  input: PodPlanInput,
  reusable: Map<string, Set<string>>,
  inUse: Map<string, Set<string>>,
): { assign: Assignment[]; mine: Map<string, string[]> } | { error: string } {
  const uid = pod.metadata!.uid!;
  const existing = input.pods.get(uid);
  const assign: Assignment[] = [];
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
      affinity: input.affinity?.(uid, c.name),
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
  return { assign, mine };
}

/**
 * upstream's devicesToReuse after a container's Allocate: an init container's devices are free
 * again once it ended, so later containers take them first; a sidecar (restartable) keeps its
 * own, and an app container takes them out of the pool.
 */
function updateReusable(pod: Pod, c: Container, mine: Map<string, string[]>, reusable: Map<string, Set<string>>) {
  const init = (pod.spec?.initContainers ?? []).some((i) => i.name === c.name);
  for (const [resource, ids] of mine) {
    const pool = reusable.get(resource) ?? new Set<string>();
    if (init && !isSidecar(c)) for (const id of ids) pool.add(id);
    else for (const id of ids) pool.delete(id);
    reusable.set(resource, pool);
  }
}

/**
 * The devices the pod's containers before `name` leave to reuse (upstream's devicesToReuse when
 * `name` is allocated), from the devices the pod holds.
 */
export function reusableBefore(pod: Pod, name: string, pods: PodDevices): Map<string, Set<string>> {
  const reusable = new Map<string, Set<string>>();
  const held = pods.get(pod.metadata!.uid!);
  for (const c of initAndAppContainers(pod)) {
    if (c.name === name) break;
    const mine = new Map([...(held?.get(c.name) ?? [])].map(([r, d]) => [r, deviceIds(d)]));
    updateReusable(pod, c, mine, reusable);
  }
  return reusable;
}

/**
 * upstream's Allocate over a pod's containers, init containers first (admitPolicyNone): the
 * devices each gets, with an init container's devices reused by later containers unless it is
 * a sidecar (restartable). Returns the new assignments, or why the pod cannot have them.
 */
export function planPodDevices(pod: Pod, input: PodPlanInput): { assign: Assignment[] } | { error: string } {
  const inUse = devicesInUse(input.pods);
  const reusable = new Map<string, Set<string>>();
  const assign: Assignment[] = [];
  for (const c of initAndAppContainers(pod)) {
    const r = planContainerDevices(pod, c, input, reusable, inUse);
    if ('error' in r) return r;
    assign.push(...r.assign);
    updateReusable(pod, c, r.mine, reusable);
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
