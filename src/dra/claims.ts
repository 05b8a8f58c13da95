// A pod's ResourceClaims as the kubelet sees them (upstream's k8s.io/dynamic-resource-allocation
// resourceclaim helpers and newClaimInfoFromClaim in cm/dra/claiminfo.go): which claims a pod
// uses, whether a claim may be used by it, and what the kubelet keeps of one it prepares.
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';

// kubernetes-types (1.30) still has these in their alpha shape.
/** A core/v1 PodResourceClaim: a claim by name, or one generated from a template. */
export interface PodResourceClaim {
  name: string;
  resourceClaimName?: string;
  resourceClaimTemplateName?: string;
}
/** An entry of a container's resources.claims: a pod claim, and one of its requests or all. */
export interface ContainerClaim {
  name: string;
  request?: string;
}
export const specClaims = (pod: Pod) => (pod.spec?.resourceClaims ?? []) as unknown as PodResourceClaim[];
export const containerClaims = (c: Container) => (c.resources?.claims ?? []) as ContainerClaim[];

/** The fields of a resource.k8s.io/v1 ResourceClaim the kubelet reads (kubernetes-types has no v1). */
export interface ResourceClaim {
  metadata?: { name?: string; namespace?: string; uid?: string; ownerReferences?: OwnerReference[] };
  status?: {
    allocation?: { devices?: { results?: { request: string; driver: string; pool: string; device: string }[] } };
    reservedFor?: { apiGroup?: string; resource: string; name: string; uid: string }[];
  };
}

/** pod.status.extendedResourceClaimStatus (DRAExtendedResource, on by default since 1.36; not in kubernetes-types). */
export interface ExtendedResourceClaimStatus {
  resourceClaimName: string;
  requestMappings?: { containerName: string; resourceName: string; requestName: string }[];
}

export const extendedResourceClaimStatus = (pod: Pod): ExtendedResourceClaimStatus | undefined =>
  (pod.status as { extendedResourceClaimStatus?: ExtendedResourceClaimStatus } | undefined)?.extendedResourceClaimStatus;

/** A device as its driver's NodePrepareResources described it (upstream's state.Device). */
export interface PreparedDevice {
  poolName: string;
  deviceName: string;
  shareId?: string;
  /** The claim's requests it serves; empty: all. */
  requestNames: string[];
  cdiDeviceIds: string[];
}

/** What the kubelet keeps of a claim it prepares (upstream's ClaimInfo), by namespace/name. */
export interface ClaimInfo {
  claimUID: string;
  claimName: string;
  namespace: string;
  /** The pods on this node using it: it is unprepared when the last one is gone. */
  podUIDs: Set<string>;
  /** Every driver with results in the allocation, with the devices its NodePrepareResources returned. */
  drivers: Map<string, PreparedDevice[]>;
  /** NodePrepareResources succeeded in this kubelet's life (not checkpointed: a restarted kubelet asks again). */
  prepared: boolean;
}

export const claimKey = (namespace: string, name: string) => `${namespace}/${name}`;

/** upstream's DRAResourceClaimsInUseAnyDriver: the label value of the count across every driver. */
export const ANY_DRIVER = '<any>';

/**
 * Pure: upstream's claimsInUse: the prepared claims by driver, and all of them under ANY_DRIVER
 * (a claim with devices of two drivers counts once there, once for each driver).
 */
export function claimsInUse(claims: Iterable<Pick<ClaimInfo, 'prepared' | 'drivers'>>): Record<string, number> {
  const counts: Record<string, number> = {};
  let total = 0;
  for (const c of claims) {
    if (!c.prepared) continue;
    total++;
    for (const driver of c.drivers.keys()) counts[driver] = (counts[driver] ?? 0) + 1;
  }
  counts[ANY_DRIVER] = total;
  return counts;
}

/**
 * upstream's resourceclaim.Name: the claim's name (undefined: none was generated, nothing to do)
 * and whether the pod must own it (a claim made from a template).
 */
export function claimName(pod: Pod, podClaim: PodResourceClaim): { name?: string; mustCheckOwner: boolean } {
  if (podClaim.resourceClaimName) return { name: podClaim.resourceClaimName, mustCheckOwner: false };
  const podName = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
  if (podClaim.resourceClaimTemplateName) {
    const s = pod.status?.resourceClaimStatuses?.find((x) => x.name === podClaim.name);
    if (!s) throw new Error(`pod "${podName}": ResourceClaim not created yet`);
    return { name: s.resourceClaimName, mustCheckOwner: true };
  }
  throw new Error(`pod "${podName}", spec.resourceClaim "${podClaim.name}": none of the supported fields are set`);
}

/** The pod's claims, and the one the scheduler made for its extended resources backed by DRA (upstream's prepareResources). */
export function podResourceClaims(pod: Pod): PodResourceClaim[] {
  const extended = extendedResourceClaimStatus(pod);
  const claims = specClaims(pod);
  return extended ? [...claims, { name: '', resourceClaimName: extended.resourceClaimName }] : claims;
}

/** The names of the pod's ResourceClaims (upstream's unprepareResourcesForPod). */
export function podClaimNames(pod: Pod): string[] {
  return podResourceClaims(pod).flatMap((c) => claimName(pod, c).name ?? []);
}

/**
 * The claim checked for the pod as upstream's prepareResources does (IsForPod, IsReservedForPod,
 * newClaimInfoFromClaim), as a new ClaimInfo; throws upstream's errors.
 */
export function claimInfoFor(pod: Pod, claim: ResourceClaim, mustCheckOwner: boolean): ClaimInfo {
  const { name = '', namespace = '', uid = '' } = claim.metadata ?? {};
  const podNs = pod.metadata?.namespace ?? '';
  const podName = pod.metadata?.name ?? '';
  const podUID = pod.metadata?.uid ?? '';
  if (mustCheckOwner) {
    if (namespace !== podNs) throw new Error(`ResourceClaim ${namespace}/${name} is not in the same namespace as Pod ${podNs}/${podName}`);
    if (!claim.metadata?.ownerReferences?.some((o) => o.controller && o.uid === podUID))
      throw new Error(`ResourceClaim ${namespace}/${name} was not created for Pod ${podNs}/${podName} (Pod is not owner)`);
  }
  if (!claim.status?.reservedFor?.some((r) => r.uid === podUID))
    throw new Error(`pod ${podName} (${podUID}) is not allowed to use ResourceClaim ${name} (${uid})`);
  if (!claim.status.allocation) throw new Error(`ResourceClaim ${name}: not allocated`);
  const drivers = new Map<string, PreparedDevice[]>();
  for (const r of claim.status.allocation.devices?.results ?? []) drivers.set(r.driver, []);
  return { claimUID: uid, claimName: name, namespace, podUIDs: new Set(), drivers, prepared: false };
}
