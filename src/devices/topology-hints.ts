// The device manager as a topology manager hint provider (upstream's devicemanager
// topology_hints.go): for each device plugin resource a container (scope container) or a pod
// (scope pod) asks for, the NUMA node sets whose devices can satisfy it, the narrowest of them
// preferred. Pure over the device manager's state; the manager (manager.ts) passes it in.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { podLimits } from '../resources/pod-resources.ts';
import { everyMask, type NUMAMask, type ProviderHints, type TopologyHint } from '../topologymanager/bitmask.ts';
import { deviceIds, deviceRequests, devicesInUse, hasTopology, type PodDevices, type ResourceState } from './allocation.ts';

export interface HintsInput {
  resources: ReadonlyMap<string, ResourceState>;
  pods: PodDevices;
  isDeviceResource: (name: string) => boolean;
  /** The machine's NUMA node ids (cadvisor's, upstream's m.numaNodes). */
  numaNodes: number[];
}

/**
 * upstream's deviceNUMANodes: the known NUMA nodes hosting a device of the resource (nodes the
 * plugin names and the machine lacks are ignored); none: every node of the machine.
 */
function deviceNUMANodes(state: ResourceState, numaNodes: number[]): number[] {
  const known = new Set(numaNodes);
  const nodes = new Set(state.devices.flatMap((d) => d.numaNodes).filter((n) => known.has(n)));
  return nodes.size ? [...nodes].sort((a, b) => a - b) : numaNodes;
}

const anySet = (mask: NUMAMask, nodes: number[]) => nodes.some((n) => mask.list().includes(n));

/**
 * upstream's generateDeviceTopologyHints: every set of the NUMA nodes hosting the resource's
 * devices that holds the reusable devices with topology and enough of them and the available
 * ones; preferred are those of the fewest nodes whose devices (all of them, in use or not)
 * could satisfy the request.
 */
export function generateDeviceTopologyHints(
  state: ResourceState,
  numaNodes: number[],
  available: ReadonlySet<string>,
  reusable: ReadonlySet<string>,
  request: number,
): TopologyHint[] {
  const nodes = deviceNUMANodes(state, numaNodes);
  const byId = new Map(state.devices.map((d) => [d.id, d]));
  let minAffinitySize = nodes.length;
  const hints: TopologyHint[] = [];
  everyMask(nodes, (mask) => {
    const inMask = state.devices.filter((d) => anySet(mask, d.numaNodes)).length;
    if (inMask >= request && mask.count() < minAffinitySize) minAffinitySize = mask.count();
    let matching = 0;
    for (const id of reusable) {
      const d = byId.get(id);
      // A reused device without topology does not bind the hint.
      if (!d || d.numaNodes.length === 0) continue;
      if (!anySet(mask, d.numaNodes)) return;
      matching++;
    }
    for (const id of available) if (anySet(mask, byId.get(id)?.numaNodes ?? [])) matching++;
    if (matching < request) return;
    hints.push({ affinity: mask, preferred: false });
  });
  return hints.map((h) => ({ ...h, preferred: h.affinity!.count() === minAffinitySize }));
}

/** upstream's getAvailableDevices: healthy and not allocated to any pod. */
function availableDevices(state: ResourceState, inUse: ReadonlySet<string> | undefined): Set<string> {
  return new Set(state.devices.filter((d) => d.healthy && !inUse?.has(d.id)).map((d) => d.id));
}

/**
 * The hints of one resource: none (undefined, no preference) when its devices have no
 * topology; regenerated from the devices already allocated (a restart), or [] (no possible
 * affinity) when their count differs from the request; else from the available and reusable
 * devices, [] when they are too few.
 */
function resourceHints(
  input: HintsInput,
  resource: string,
  requested: number,
  allocated: string[],
  reusable: ReadonlySet<string>,
  inUse: ReadonlySet<string> | undefined,
): TopologyHint[] | undefined {
  const state = input.resources.get(resource);
  if (!state || !hasTopology(state)) return undefined;
  if (allocated.length > 0) {
    if (allocated.length !== requested) return [];
    return generateDeviceTopologyHints(state, input.numaNodes, new Set(allocated), new Set(), requested);
  }
  const available = availableDevices(state, inUse);
  if (new Set([...available, ...reusable]).size < requested) return [];
  return generateDeviceTopologyHints(state, input.numaNodes, available, reusable, requested);
}

/**
 * upstream's GetTopologyHints (scope container). reusable: the devices the pod's init
 * containers before this one leave (upstream's devicesToReuse).
 */
export function containerTopologyHints(
  input: HintsInput,
  pod: Pod,
  c: Container,
  reusable: ReadonlyMap<string, ReadonlySet<string>>,
): ProviderHints {
  const uid = pod.metadata!.uid!;
  const inUse = devicesInUse(input.pods);
  const out: Record<string, TopologyHint[] | undefined> = {};
  for (const [resource, requested] of deviceRequests(c, input.isDeviceResource)) {
    const had = input.pods.get(uid)?.get(c.name)?.get(resource);
    const allocated = had ? deviceIds(had) : [];
    out[resource] = resourceHints(input, resource, requested, allocated, reusable.get(resource) ?? new Set(), inUse.get(resource));
  }
  return out;
}

/** upstream's GetPodTopologyHints (scope pod): the pod's effective limits (PodLimits) of each resource, no reuse. */
export function podTopologyHints(input: HintsInput, pod: Pod): ProviderHints {
  const uid = pod.metadata!.uid!;
  const inUse = devicesInUse(input.pods);
  const out: Record<string, TopologyHint[] | undefined> = {};
  const limits = podLimits(pod, { excludeOverhead: true });
  for (const [resource, requested] of Object.entries(limits)) {
    if (!input.isDeviceResource(resource) || !requested) continue;
    const allocated = [
      ...new Set([...(input.pods.get(uid)?.values() ?? [])].flatMap((r) => (r.get(resource) ? deviceIds(r.get(resource)!) : []))),
    ];
    out[resource] = resourceHints(input, resource, requested, allocated, new Set(), inUse.get(resource));
  }
  return out;
}
