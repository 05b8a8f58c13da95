// The QoS cgroups under kubepods, as upstream's qosContainerManager keeps them
// (qos_container_manager_linux.go): kubepods/besteffort with the least CPU weight there is,
// so that BestEffort pods get CPU only when nobody else wants it, and kubepods/burstable with
// the weight of its pods' CPU requests together (Guaranteed pods sit in kubepods itself, each
// with its own). With qosReserved (memory: a percentage, QOSReserved gate) the two are also
// held to a memory limit that keeps that share of the higher classes' memory requests for
// them. Made at start, brought up to date before a pod's cgroup is made and every minute
// (upstream's UpdateCgroups, periodicQOSCgroupUpdateInterval).
import type { Pod } from 'kubernetes-types/core/v1.js';
import { jittered } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import { type CgroupLayout, qosCgroup } from './cgroup-layout.ts';
import type { CgroupManager } from './cgroup-manager.ts';
import { MIN_SHARES, sharesFromMilli } from './linux-resources.ts';
import { podRequests } from './pod-resources.ts';
import { qosClass } from './qos.ts';

type QosTier = 'burstable' | 'besteffort';
const TIERS: readonly QosTier[] = ['burstable', 'besteffort'];

/** Pure: upstream's setCPUCgroupConfig: the QoS cgroups' cpu.shares for these active pods. */
export function qosCgroupShares(pods: Iterable<Pod>): { burstable: number; besteffort: number } {
  let burstableMilli = 0;
  for (const pod of pods) if (qosClass(pod) === 'Burstable') burstableMilli += podRequests(pod).cpu ?? 0;
  return { burstable: sharesFromMilli(burstableMilli), besteffort: MIN_SHARES };
}

/** qosReserved parsed: the percentage of each resource's requests kept for the classes above (only memory there is). */
export interface QosReserved {
  memory?: number;
}

/** Upstream's parsePercentage: "50%" is 50; 0 to 100, a Go int64 before the range check. */
function parsePercentage(v: string): number {
  if (!v.endsWith('%')) throw new Error(`percentage expected, got '${v}'`);
  // strconv.ParseInt(strings.TrimRight(v, "%"), 10, 0): a sign and decimal digits, within int64.
  const digits = v.replace(/%+$/, '');
  if (!/^[+-]?[0-9]+$/.test(digits) || BigInt(digits) > 2n ** 63n - 1n || BigInt(digits) < -(2n ** 63n))
    throw new Error(`invalid number in percentage '${v}'`);
  const percentage = Number(digits) + 0; // -0 is 0
  if (percentage < 0 || percentage > 100) throw new Error('percentage must be between 0 and 100');
  return percentage;
}

/** Pure: upstream's ParseQOSReserved (cm/container_manager.go), its errors word for word. */
export function parseQOSReserved(m: Readonly<Record<string, string>>): QosReserved {
  const out: QosReserved = {};
  for (const [k, v] of Object.entries(m)) {
    if (k !== 'memory') throw new Error(`cannot reserve ${JSON.stringify(k)} resource`);
    try {
      out.memory = parsePercentage(v);
    } catch (e) {
      throw new Error(`failed to parse percentage ${JSON.stringify(v)} for ${JSON.stringify(k)} resource: ${(e as Error).message}`);
    }
  }
  return out;
}

/** The QoS cgroups' memory limits in bytes. */
export type QosMemoryLimits = Record<QosTier, number>;

/**
 * Pure: upstream's setMemoryReserve: burstable is held to node allocatable (capacity less
 * kube and system reserved) less percent of the Guaranteed pods' memory requests, besteffort
 * to that less percent of the Burstable pods' requests too (Go's integer arithmetic,
 * truncating). Undefined when allocatable is unknown or 0 (upstream: standalone mode): no
 * limits then.
 */
export function qosMemoryLimits(pods: Iterable<Pod>, allocatableBytes: number | undefined, percent: number): QosMemoryLimits | undefined {
  if (!allocatableBytes) return undefined;
  // getQoSMemoryRequests: PodRequests (pod-level resources and overhead included), BestEffort left out.
  const requests = { Guaranteed: 0, Burstable: 0 };
  for (const pod of pods) {
    const qos = qosClass(pod);
    if (qos !== 'BestEffort') requests[qos] += podRequests(pod).memory ?? 0;
  }
  const reserve = (bytes: number) => Math.trunc((bytes * percent) / 100);
  const burstable = allocatableBytes - reserve(requests.Guaranteed);
  return { burstable, besteffort: burstable - reserve(requests.Burstable) };
}

/**
 * Pure: upstream's retrySetMemoryReserve, once a write of the limits failed: a QoS cgroup whose
 * usage is above its limit (the kernel refused a limit below it) is held at its usage instead,
 * which stops it from growing. An unreadable usage ends the adjustment there, as upstream's.
 */
export function memoryLimitsAtUsage(limits: QosMemoryLimits, usage: (tier: QosTier) => number | undefined): QosMemoryLimits {
  const out = { ...limits };
  for (const tier of TIERS) {
    const used = usage(tier);
    if (used === undefined) break;
    if (used > out[tier]) out[tier] = used;
  }
  return out;
}

/**
 * What qosReserved asks of the QoS cgroups, when the QOSReserved gate is on: the node's
 * allocatable memory and the reservation (no memory key: the CPU weights alone, written the
 * way upstream writes them with the gate on).
 */
export interface QosReservation {
  allocatableMemoryBytes: number | undefined;
  reserved: QosReserved;
}

/**
 * Writes the QoS cgroups' CPU weights for these active pods, making the cgroups where missing
 * (upstream's UpdateCgroups). With a reservation, their memory limits too: if a write fails,
 * the limits are lowered to the usage where it is above (memoryLimitsAtUsage) and written again;
 * a second failure is thrown.
 */
export async function updateQosCgroups(
  layout: CgroupLayout,
  pods: Iterable<Pod>,
  cgroups: Pick<CgroupManager, 'ensureQos' | 'memoryUsage'>,
  reservation?: QosReservation,
): Promise<void> {
  const active = [...pods];
  const shares = qosCgroupShares(active);
  const path = (tier: QosTier) => qosCgroup(layout, tier);
  let memory =
    reservation?.reserved.memory === undefined
      ? undefined
      : qosMemoryLimits(active, reservation.allocatableMemoryBytes, reservation.reserved.memory);
  const write = (tier: QosTier) =>
    cgroups.ensureQos(path(tier), { cpuShares: shares[tier], ...(memory ? { memoryLimitBytes: memory[tier] } : {}) });
  if (reservation) {
    let failed = false;
    for (const tier of TIERS) await write(tier).catch(() => (failed = true));
    if (!failed) return;
    if (memory) memory = memoryLimitsAtUsage(memory, (tier) => cgroups.memoryUsage(path(tier)));
  }
  for (const tier of TIERS) await write(tier);
}

/**
 * upstream's wait.Until(UpdateCgroups, periodicQOSCgroupUpdateInterval): now, then every minute
 * (jittered, so that a fleet of nodes does not write in step); a failure is logged and the
 * next round tries again.
 */
export function keepQosCgroups(update: () => Promise<void>, log: Logger, periodMs = 60_000): { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const round = async () => {
    try {
      await update();
    } catch (e) {
      log.error('Failed to reserve QoS requests', { err: e });
    }
    if (stopped) return;
    timer = setTimeout(round, jittered(periodMs));
    timer.unref();
  };
  void round();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
