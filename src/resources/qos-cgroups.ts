// The QoS cgroups under kubepods, as upstream's qosContainerManager keeps them
// (qos_container_manager_linux.go): kubepods/besteffort with the least CPU weight there is,
// so that BestEffort pods get CPU only when nobody else wants it, and kubepods/burstable with
// the weight of its pods' CPU requests together (Guaranteed pods sit in kubepods itself, each
// with its own). Made at start, brought up to date before a pod's cgroup is made and every
// minute (upstream's UpdateCgroups, periodicQOSCgroupUpdateInterval).
import type { Pod } from 'kubernetes-types/core/v1.js';
import { jittered } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import { cpuSharesFile } from './cgroup-files.ts';
import { kubepodsCgroup } from './cgroup-layout.ts';
import { MIN_SHARES, sharesFromMilli } from './linux-resources.ts';
import { cgroupHierarchy, ensureCgroup } from './pod-cgroup.ts';
import { podRequests } from './pod-resources.ts';
import { qosClass } from './qos.ts';

/** Pure: upstream's setCPUCgroupConfig: the QoS cgroups' cpu.shares for these active pods. */
export function qosCgroupShares(pods: Iterable<Pod>): { burstable: number; besteffort: number } {
  let burstableMilli = 0;
  for (const pod of pods) if (qosClass(pod) === 'Burstable') burstableMilli += podRequests(pod).cpu ?? 0;
  return { burstable: sharesFromMilli(burstableMilli), besteffort: MIN_SHARES };
}

/** Writes the QoS cgroups' CPU weights for these active pods, making the cgroups where missing. */
export function updateQosCgroups(
  cgroupRoot: string,
  pods: Iterable<Pod>,
  root = '/sys/fs/cgroup',
  h = cgroupHierarchy(root, () => []),
): void {
  const shares = qosCgroupShares(pods);
  for (const qos of ['burstable', 'besteffort'] as const)
    ensureCgroup(`${kubepodsCgroup(cgroupRoot)}/${qos}`, [cpuSharesFile(shares[qos], h.version)], root, h);
}

/**
 * upstream's wait.Until(UpdateCgroups, periodicQOSCgroupUpdateInterval): now, then every minute
 * (jittered, so that a fleet of nodes does not write in step); a failure is logged and the
 * next round tries again.
 */
export function keepQosCgroups(update: () => void, log: Logger, periodMs = 60_000): { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const round = () => {
    try {
      update();
    } catch (e) {
      log.error('Failed to reserve QoS requests', { err: e });
    }
    timer = setTimeout(round, jittered(periodMs));
    timer.unref();
  };
  round();
  return { stop: () => clearTimeout(timer) };
}
