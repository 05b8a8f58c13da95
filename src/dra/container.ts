// What a container gets from the pod's prepared ResourceClaims (upstream's Manager.GetResources
// and ClaimInfo.cdiDevicesAsList): the CDI devices of the claims, and requests of them, that the
// container names in resources.claims, and of its extended resources backed by DRA.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { DeviceRunOptions } from '../devices/allocation.ts';
import { isExtendedResourceName } from '../devices/registration.ts';
import { parseQuantity } from '../resources/quantity.ts';
import { type ClaimInfo, claimName, containerClaims, extendedResourceClaimStatus, specClaims } from './claims.ts';

// upstream's resourceapi.ResourceDeviceClassPrefix: the implicit extended resource of a DeviceClass.
const DEVICE_CLASS_PREFIX = 'deviceclass.resource.kubernetes.io/';

/** upstream's schedutil.IsDRAExtendedResourceName. */
export const isDRAExtendedResourceName = (name: string) => isExtendedResourceName(name) || name.startsWith(DEVICE_CLASS_PREFIX);

/** ResourceClaim name -> the request names the container uses of it ('' for all), in the container's order. */
export function containerClaimRequests(pod: Pod, c: Container): Map<string, string[]> {
  const byPodClaim = new Map<string, string[]>();
  for (const claim of containerClaims(c)) byPodClaim.set(claim.name, [...(byPodClaim.get(claim.name) ?? []), claim.request ?? '']);
  const out = new Map<string, string[]>();
  for (const [podClaimName, requests] of byPodClaim) {
    const podClaim = specClaims(pod).find((x) => x.name === podClaimName);
    if (!podClaim) continue;
    // No name: no claim was generated for it, which is valid.
    const { name } = claimName(pod, podClaim);
    if (name !== undefined) out.set(name, [...(out.get(name) ?? []), ...requests]);
  }
  const extended = extendedResourceClaimStatus(pod);
  if (extended) {
    const requested = Object.entries(c.resources?.requests ?? {})
      .filter(([name, q]) => parseQuantity(q) !== 0 && isDRAExtendedResourceName(name))
      .map(([name]) => name);
    const names = (extended.requestMappings ?? [])
      .filter((m) => m.containerName === c.name && requested.includes(m.resourceName))
      .map((m) => m.requestName);
    if (names.length) out.set(extended.resourceClaimName, [...(out.get(extended.resourceClaimName) ?? []), ...names]);
  }
  return out;
}

/** upstream's cdiDevicesAsList: the CDI device IDs of the claim's devices serving request ('' for all). */
export function cdiDevicesOf(info: ClaimInfo, request: string): string[] {
  const out: string[] = [];
  for (const devices of info.drivers.values())
    for (const d of devices)
      if (request === '' || d.requestNames.length === 0 || d.requestNames.includes(request)) out.push(...d.cdiDeviceIds);
  return out;
}

/** The claims' CDI devices ahead of the device plugins' in the container's options, as upstream's containerManager.GetResources. */
export function withClaimDevices(cdiDevices: string[], fromPlugins: DeviceRunOptions | undefined): DeviceRunOptions | undefined {
  if (!cdiDevices.length) return fromPlugins;
  return {
    envs: [],
    mounts: [],
    devices: [],
    annotations: {},
    ...fromPlugins,
    cdiDevices: [...cdiDevices, ...(fromPlugins?.cdiDevices ?? [])],
  };
}
