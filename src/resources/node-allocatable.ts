// Node allocatable, enforced (upstream's enforceNodeAllocatable: ["pods"]): the kubepods
// cgroup, parent of every pod's, is limited to the node's capacity less kubeReserved and
// systemReserved, so pods together can never take what was promised to the system's
// daemons. (The hard eviction threshold is not subtracted here, as upstream: eviction
// keeps that margin, the cgroup only the reservations.)
import type { PodCgroupLimits } from './pod-cgroup.ts';
import { parseQuantity } from './quantity.ts';

/** Pure: the kubepods cgroup's limits for a node of this size with these reservations. */
export function kubepodsLimits(capacity: { cpuCores: number; memoryBytes: number }, reserved: Record<string, string>[]): PodCgroupLimits {
  const sum = (r: string) => reserved.reduce((n, m) => n + (parseQuantity(m[r] ?? '0') ?? 0), 0);
  const milli = Math.max(0, Math.round((capacity.cpuCores - sum('cpu')) * 1000));
  return {
    cpuShares: Math.max(2, Math.floor((milli * 1024) / 1000)),
    memoryLimitBytes: Math.max(0, Math.floor(capacity.memoryBytes - sum('memory'))),
  };
}

/** Upstream's maxPods with podsPerCore: the smaller of the two when podsPerCore is set. */
export const effectiveMaxPods = (maxPods: number, podsPerCore: number, cpuCores: number) =>
  podsPerCore > 0 ? Math.min(maxPods, podsPerCore * cpuCores) : maxPods;
