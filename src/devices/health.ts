// The health of the devices a pod's containers got from device plugins (feature
// ResourceHealthStatus): which pods a plugin's new list concerns (upstream's
// genericDeviceUpdateCallback) and the containers' allocatedResourcesStatus entries (upstream's
// devicemanager UpdateAllocatedResourcesStatus). Pure: the manager holds the state.
import type { ResourceHealth, ResourceStatus } from '../status/allocated-resources.ts';
import { type ContainerDevices, type DeviceInfo, deviceIds, type PodDevices } from './allocation.ts';

/** Device id -> healthy, as the plugin's last list said. */
export type ReportedHealth = ReadonlyMap<string, boolean>;

export const reportedHealth = (devices: DeviceInfo[]): ReportedHealth => new Map(devices.map((d) => [d.id, d.healthy]));

/**
 * The devices of a new list whose health changed, and the new ones: one that came back may
 * still be assigned to a pod (upstream's comparison with oldDevices).
 */
export function changedDevices(before: ReportedHealth | undefined, after: ReportedHealth): string[] {
  return [...after].filter(([id, healthy]) => before?.get(id) !== healthy).map(([id]) => id);
}

/** The pods that hold any of the resource's devices (upstream's getPodAndContainerForDevice, for each). */
export function podsWithDevices(pods: PodDevices, resource: string, ids: string[]): string[] {
  const wanted = new Set(ids);
  const out: string[] = [];
  for (const [uid, containers] of pods)
    if ([...containers.values()].some((r) => deviceIds(r.get(resource) ?? { byNuma: {} }).some((id) => wanted.has(id)))) out.push(uid);
  return out;
}

/**
 * One entry per device resource of a container, each device with its health; a device its
 * plugin does not list (gone, or not listed again yet after a restart) counts as healthy, as
 * upstream's default.
 */
export function deviceResourcesStatus(
  assigned: ReadonlyMap<string, ContainerDevices> | undefined,
  reported: (resource: string) => ReportedHealth | undefined,
): ResourceStatus[] {
  return [...(assigned ?? [])]
    .map(([name, d]) => ({
      name,
      resources: deviceIds(d).map(
        (resourceID): ResourceHealth => ({ resourceID, health: reported(name)?.get(resourceID) === false ? 'Unhealthy' : 'Healthy' }),
      ),
    }))
    .filter((r) => r.resources.length);
}
