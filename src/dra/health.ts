// The health of allocated DRA devices (upstream's cm/dra healthInfoCache and
// UpdateAllocatedResourcesStatus, feature ResourceHealthStatus): what each driver's
// NodeWatchResources stream last said of its devices, trusted for the report's timeout, and the
// containers' allocatedResourcesStatus built from it. Pure: the stream and the pods are the
// manager's.
import type { Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import {
  type ResourceHealth,
  type ResourceHealthStatus,
  type ResourceStatus,
  withResourceStatuses,
} from '../status/allocated-resources.ts';
import { type ClaimInfo, claimName, containerClaims, specClaims } from './claims.ts';

export type Health = ResourceHealthStatus;

export interface DeviceHealth {
  health: Health;
  message: string;
  /** When the kubelet got the report (ms since the epoch). */
  at: number;
  timeoutMs: number;
}

/** Driver -> "pool/device" -> what its stream last said. */
export type HealthInfo = Map<string, Map<string, DeviceHealth>>;

/** upstream's DefaultHealthTimeout. */
export const DEFAULT_HEALTH_TIMEOUT_MS = 30_000;
/** v1.ResourceHealthMessageMaxLength. */
const MAX_MESSAGE = 1024;

/** One device of a NodeWatchResources response, as the stream decodes it. */
export interface ReportedHealth {
  device: { poolName: string; deviceName: string } | null;
  health: string;
  healthCheckTimeoutSeconds: string;
  message: string;
}

const deviceKey = (pool: string, device: string) => `${pool}/${device}`;

/** upstream's toDeviceHealthStatus and buildDeviceHealth (a timeout of 0 or less: the default). */
export function deviceHealth(r: ReportedHealth, now: number): DeviceHealth {
  const health: Health = r.health === 'HEALTHY' ? 'Healthy' : r.health === 'UNHEALTHY' ? 'Unhealthy' : 'Unknown';
  const seconds = Number(r.healthCheckTimeoutSeconds);
  const message =
    Buffer.byteLength(r.message) <= MAX_MESSAGE
      ? r.message
      : `${Buffer.from(r.message)
          .subarray(0, MAX_MESSAGE - 3)
          .toString()}...`;
  return { health, message, at: now, timeoutMs: seconds > 0 ? seconds * 1000 : DEFAULT_HEALTH_TIMEOUT_MS };
}

/**
 * upstream's updateHealthInfo: the reported devices recorded, and those not reported whose last
 * report timed out marked Unknown. Returns the "pool/device" keys whose health or message changed.
 */
export function updateHealth(info: HealthInfo, driver: string, reported: ReportedHealth[], now: number): string[] {
  let devices = info.get(driver);
  if (!devices) info.set(driver, (devices = new Map()));
  const changed: string[] = [];
  const seen = new Set<string>();
  for (const r of reported) {
    if (!r.device) continue;
    const key = deviceKey(r.device.poolName, r.device.deviceName);
    const next = deviceHealth(r, now);
    const prev = devices.get(key);
    if (!prev || prev.health !== next.health || prev.message !== next.message || prev.timeoutMs !== next.timeoutMs) changed.push(key);
    devices.set(key, next);
    seen.add(key);
  }
  for (const [key, d] of devices)
    if (!seen.has(key) && d.health !== 'Unknown' && now - d.at > d.timeoutMs) {
      devices.set(key, { ...d, health: 'Unknown', message: '', at: now });
      changed.push(key);
    }
  return changed;
}

/** upstream's getHealthInfo: Unknown for a device never reported, or whose report timed out. */
export function healthOf(info: HealthInfo, driver: string, pool: string, device: string, now: number): { health: Health; message: string } {
  const d = info.get(driver)?.get(deviceKey(pool, device));
  return d && now - d.at <= d.timeoutMs ? { health: d.health, message: d.message } : { health: 'Unknown', message: '' };
}

/** The pods whose claims hold one of the driver's devices ("pool/device" keys): those whose status to update. */
export function podsUsing(claims: Iterable<ClaimInfo>, driver: string, keys: string[]): Set<string> {
  const wanted = new Set(keys);
  const pods = new Set<string>();
  for (const c of claims)
    if (c.drivers.get(driver)?.some((d) => wanted.has(deviceKey(d.poolName, d.deviceName)))) for (const uid of c.podUIDs) pods.add(uid);
  return pods;
}

/**
 * upstream's UpdateAllocatedResourcesStatus: for each container naming a claim (or a request of
 * one), an entry "claim:<name>" or "claim:<name>/<request>" listing each of the claim's devices
 * (those of the request) with its health; the resource ID is the device's first CDI ID, else
 * driver/pool/device. Entries without devices are dropped; the container's other entries (a
 * device plugin's) stay.
 */
export function withAllocatedResourcesStatus(
  pod: Pod,
  status: PodStatus,
  claim: (namespace: string, name: string) => ClaimInfo | undefined,
  health: (driver: string, pool: string, device: string) => { health: Health; message: string },
): PodStatus {
  const namespace = pod.metadata?.namespace ?? '';
  return withResourceStatuses(status, (container) => {
    const spec = pod.spec?.containers.find((c) => c.name === container);
    const entries: ResourceStatus[] = [];
    for (const c of spec ? containerClaims(spec) : []) {
      const podClaim = specClaims(pod).find((x) => x.name === c.name);
      const name = podClaim && claimName(pod, podClaim).name;
      const info = name !== undefined ? claim(namespace, name) : undefined;
      if (!info) continue;
      const resources: ResourceHealth[] = [];
      const seen = new Set<string>();
      for (const [driver, devices] of info.drivers)
        for (const d of devices) {
          // A subrequest's devices carry its request's name (upstream's BaseRequestRef).
          if (c.request && d.requestNames.length && !d.requestNames.includes(c.request.split('/')[0]!)) continue;
          const resourceID = d.cdiDeviceIds[0] ?? `${driver}/${d.poolName}/${d.deviceName}`;
          if (seen.has(resourceID)) continue;
          seen.add(resourceID);
          const h = health(driver, d.poolName, d.deviceName);
          resources.push({ resourceID, health: h.health, ...(h.message ? { message: h.message } : {}) });
        }
      entries.push({ name: c.request ? `claim:${c.name}/${c.request}` : `claim:${c.name}`, resources });
    }
    return entries;
  });
}
