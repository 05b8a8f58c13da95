// Node allocatable, enforced (upstream's enforceNodeAllocatable: ["pods"]): the kubepods
// cgroup, parent of every pod's, is limited to the node's capacity less kubeReserved and
// systemReserved, so pods together can never take what was promised to the system's
// daemons. (The hard eviction threshold is not subtracted here, as upstream: eviction
// keeps that margin, the cgroup only the reservations.)
import { hugePageLimits, type PodCgroupLimits } from './pod-cgroup.ts';
import { parseQuantity } from './quantity.ts';

/**
 * Pure: the kubepods cgroup's limits for a node of this size with these reservations
 * (upstream's getCgroupConfig of the node allocatable): cpu as shares, memory, and each huge
 * page size the node has (capacity as hugepages-<size> bytes), so that pods can use them: a
 * size left out is limited to 0 (src/resources/cgroup-files.ts).
 */
export function kubepodsLimits(
  capacity: { cpuCores: number; memoryBytes: number; hugepages?: Record<string, number> },
  reserved: Record<string, string>[],
): PodCgroupLimits {
  const sum = (r: string) => reserved.reduce((n, m) => n + (parseQuantity(m[r] ?? '0') ?? 0), 0);
  const milli = Math.max(0, Math.round((capacity.cpuCores - sum('cpu')) * 1000));
  const hugePages = hugePageLimits(
    Object.fromEntries(Object.entries(capacity.hugepages ?? {}).map(([r, bytes]) => [r, Math.max(0, bytes - sum(r))])),
  );
  return {
    cpuShares: Math.max(2, Math.floor((milli * 1024) / 1000)),
    memoryLimitBytes: Math.max(0, Math.floor(capacity.memoryBytes - sum('memory'))),
    ...(Object.keys(hugePages).length ? { hugePageLimits: hugePages } : {}),
  };
}

/** Upstream's maxPods with podsPerCore: the smaller of the two when podsPerCore is set. */
export const effectiveMaxPods = (maxPods: number, podsPerCore: number, cpuCores: number) =>
  podsPerCore > 0 ? Math.min(maxPods, podsPerCore * cpuCores) : maxPods;

/**
 * Whether the kubepods cgroup is held to node allocatable: enforceNodeAllocatable lists "pods"
 * (upstream's kubetypes.NodeAllocatableEnforcementKey; "none" or an empty list: not held).
 */
export const enforcesPods = (enforceNodeAllocatable: string[]): boolean => enforceNodeAllocatable.includes('pods');
