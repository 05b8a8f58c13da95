// What a pod cgroup (or the kubepods cgroup) is held to, as plain data: computed by
// pod-cgroup.ts, written by cgroup-files.ts for either cgroup version.
export interface PodCgroupLimits {
  cpuShares: number;
  /** CFS quota in µs per period; undefined: unlimited. */
  cpuQuotaUs?: number;
  /** The CFS period in µs when a quota is set and the node's period is not the default 100 ms (cpuCFSQuotaPeriod). */
  cpuPeriodUs?: number;
  memoryLimitBytes?: number;
  /** hugetlb limits in bytes by page size as the cgroup names it ("2MB"); absent when the pod asks for none. */
  hugePageLimits?: Record<string, number>;
  /** pids.max: the kubelet's podPidsLimit when above 0; absent: no limit. */
  pidsLimit?: number;
}

/**
 * What a reserved cgroup (systemReservedCgroup, kubeReservedCgroup) is held to (upstream's
 * ResourceConfig from getCgroupConfigInternal): each limit only where the reservation names it;
 * no CFS quota.
 */
export type ReservedCgroupLimits = Partial<Pick<PodCgroupLimits, 'cpuShares' | 'memoryLimitBytes' | 'hugePageLimits' | 'pidsLimit'>>;
