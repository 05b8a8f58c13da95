// containerStatuses[].allocatedResourcesStatus (feature ResourceHealthStatus): the health of the
// devices a container was given, one entry per resource, filled by the device manager (device
// plugins, src/devices) and then the DRA manager (claims, src/dra), as upstream's
// containerManagerImpl.UpdateAllocatedResourcesStatus calls both. Newer than kubernetes-types.
import type { ContainerStatus, PodStatus } from 'kubernetes-types/core/v1.js';

export type ResourceHealthStatus = 'Healthy' | 'Unhealthy' | 'Unknown';

export interface ResourceHealth {
  resourceID: string;
  health: ResourceHealthStatus;
  message?: string;
}

export interface ResourceStatus {
  name: string;
  resources: ResourceHealth[];
}

export type WithResourcesStatus = ContainerStatus & { allocatedResourcesStatus?: ResourceStatus[] };

/**
 * Each container's entries from `entries(name)` replace those of the same name (both upstream
 * managers look entries up by name), the others stay; an entry without devices is dropped. The
 * status is returned as it was when no container got an entry.
 */
export function withResourceStatuses(status: PodStatus, entries: (container: string) => ResourceStatus[]): PodStatus {
  let changed = false;
  const containerStatuses = (status.containerStatuses as WithResourcesStatus[] | undefined)?.map((cs): WithResourcesStatus => {
    const updates = entries(cs.name);
    if (!updates.length) return cs;
    changed = true;
    const byName = new Map((cs.allocatedResourcesStatus ?? []).map((r) => [r.name, r]));
    for (const u of updates) byName.set(u.name, u);
    const list = [...byName.values()].filter((r) => r.resources.length);
    const { allocatedResourcesStatus: _, ...rest } = cs;
    return list.length ? { ...rest, allocatedResourcesStatus: list } : rest;
  });
  return changed ? { ...status, containerStatuses } : status;
}
