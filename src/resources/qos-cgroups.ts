// The QoS cgroups under kubepods, as upstream's qosContainerManager keeps them
// (qos_container_manager_linux.go): kubepods/besteffort with the least CPU weight there is,
// so that BestEffort pods get CPU only when nobody else wants it, and kubepods/burstable with
// the weight of its pods' CPU requests together (Guaranteed pods sit in kubepods itself, each
// with its own). Made at start, brought up to date before a pod's cgroup is made and every
// minute (upstream's UpdateCgroups, periodicQOSCgroupUpdateInterval).
import type { Pod } from 'kubernetes-types/core/v1.js';
import { jittered } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import { type CgroupLayout, qosCgroup } from './cgroup-layout.ts';
import type { CgroupManager } from './cgroup-manager.ts';
import { MIN_SHARES, sharesFromMilli } from './linux-resources.ts';
import { podRequests } from './pod-resources.ts';
import { qosClass } from './qos.ts';

/** Pure: upstream's setCPUCgroupConfig: the QoS cgroups' cpu.shares for these active pods. */
export function qosCgroupShares(pods: Iterable<Pod>): { burstable: number; besteffort: number } {
  let burstableMilli = 0;
  for (const pod of pods) if (qosClass(pod) === 'Burstable') burstableMilli += podRequests(pod).cpu ?? 0;
  return { burstable: sharesFromMilli(burstableMilli), besteffort: MIN_SHARES };
}

/** Writes the QoS cgroups' CPU weights for these active pods, making the cgroups where missing. */
export async function updateQosCgroups(
  layout: CgroupLayout,
  pods: Iterable<Pod>,
  cgroups: Pick<CgroupManager, 'ensureShares'>,
): Promise<void> {
  const shares = qosCgroupShares(pods);
  for (const qos of ['burstable', 'besteffort'] as const) await cgroups.ensureShares(qosCgroup(layout, qos), shares[qos]);
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
