// Where the kubelet's cgroups are, with the cgroupfs driver (upstream's
// pkg/kubelet/cm: qos_container_manager_linux.go and pod_container_manager_linux.go):
// CGROUP_ROOT/kubepods holds Guaranteed pods, kubepods/burstable and kubepods/besteffort
// the others, each pod in pod<UID>. cgroupRoot (KubeletConfiguration, default '/') lets
// several kubelets share one host's cgroup hierarchy, each under its own root. Pure.
import { posix } from 'node:path';
import type { QOSClass } from './qos.ts';

/** CGROUP_ROOT/kubepods: node allocatable's limit, and the parent of every pod cgroup. */
export const kubepodsCgroup = (cgroupRoot: string) => posix.join('/', cgroupRoot, 'kubepods');

/** A pod's cgroup for its QoS class (absolute, as runc's cgroup_parent must be). */
export function podCgroupPath(cgroupRoot: string, qos: QOSClass, uid: string): string {
  const parent = kubepodsCgroup(cgroupRoot);
  return qos === 'Guaranteed' ? `${parent}/pod${uid}` : `${parent}/${qos.toLowerCase()}/pod${uid}`;
}

/** Where a pod's cgroup may be when only its UID is known (stats, cleanup of orphans). */
export const podCgroupCandidates = (cgroupRoot: string, uid: string): string[] =>
  (['Guaranteed', 'Burstable', 'BestEffort'] as const).map((qos) => podCgroupPath(cgroupRoot, qos, uid));
