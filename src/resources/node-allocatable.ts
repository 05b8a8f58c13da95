// Node allocatable, enforced (upstream's enforceNodeAllocatable: ["pods"]): the kubepods
// cgroup, parent of every pod's, is limited to the node's capacity less kubeReserved and
// systemReserved, so pods together can never take what was promised to the system's
// daemons. (The hard eviction threshold is not subtracted here, as upstream: eviction
// keeps that margin, the cgroup only the reservations.)
import type { ReservedCgroupLimits } from './cgroup-limits.ts';
import { sharesFromMilli } from './linux-resources.ts';
import { hugePageLimits, type PodCgroupLimits } from './pod-cgroup.ts';
import { HUGEPAGES_PREFIX } from './pod-resources.ts';
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

/**
 * Pure: upstream's GetNodeAllocatableAbsolute for memory: the capacity less systemReserved and
 * kubeReserved (not the eviction threshold), never below 0. What qosReserved's limits start from,
 * whether or not enforceNodeAllocatable holds kubepods to it.
 */
export function allocatableMemoryBytes(memoryBytes: number, reserved: Record<string, string>[]): number {
  const sum = reserved.reduce((n, m) => n + (parseQuantity(m.memory ?? '0') ?? 0), 0);
  return Math.max(0, Math.ceil(memoryBytes - sum));
}

/** Upstream's maxPods with podsPerCore: the smaller of the two when podsPerCore is set. */
export const effectiveMaxPods = (maxPods: number, podsPerCore: number, cpuCores: number) =>
  podsPerCore > 0 ? Math.min(maxPods, podsPerCore * cpuCores) : maxPods;

/**
 * Whether the kubepods cgroup is held to node allocatable: enforceNodeAllocatable lists "pods"
 * (upstream's kubetypes.NodeAllocatableEnforcementKey; "none" or an empty list: not held).
 */
export const enforcesPods = (enforceNodeAllocatable: string[]): boolean => enforceNodeAllocatable.includes('pods');

/** The values of enforceNodeAllocatable (upstream's kubetypes *EnforcementKey and NodeAllocatableNoneKey). */
const ENFORCEMENTS = ['pods', 'system-reserved', 'system-reserved-compressible', 'kube-reserved', 'kube-reserved-compressible', 'none'];

/**
 * Pure: upstream's ValidateKubeletConfiguration on enforceNodeAllocatable (known values, no
 * duplicate, cgroupsPerQOS for any enforcement, "none" alone, a reserved cgroup named for its
 * enforcement, a key and its -compressible form not together).
 */
export function invalidEnforcement(
  values: string[],
  cgroups: { systemReservedCgroup?: unknown; kubeReservedCgroup?: unknown; cgroupsPerQOS?: boolean },
): string | undefined {
  const field = 'invalid configuration: enforceNodeAllocatable (--enforce-node-allocatable)';
  for (const [i, v] of values.entries()) {
    if (!ENFORCEMENTS.includes(v))
      return `invalid configuration: option "${v}" specified for enforceNodeAllocatable (--enforce-node-allocatable). Valid options are ${ENFORCEMENTS.map((e) => `"${e}"`).join(', ')}`;
    if (values.indexOf(v) !== i)
      return `invalid configuration: duplicated enforcements "${v}" in enforceNodeAllocatable (--enforce-node-allocatable)`;
    // Every enforcement needs the cgroups cgroupsPerQOS makes: kubepods for "pods", and the reserved cgroups' parent.
    if (v !== 'none' && cgroups.cgroupsPerQOS === false)
      return `invalid configuration: cgroupsPerQOS (--cgroups-per-qos) must be set to true when "${v}" contained in enforceNodeAllocatable (--enforce-node-allocatable)`;
  }
  if (values.includes('none') && values.length > 1) return `${field} may not contain additional enforcements when "none" is specified`;
  for (const who of ['system', 'kube'] as const) {
    const keys = [`${who}-reserved`, `${who}-reserved-compressible`];
    const named = keys.filter((k) => values.includes(k));
    if (named.length === 2)
      return `invalid configuration: both "${keys[0]}" and "${keys[1]}" cannot be specified together in enforceNodeAllocatable (--enforce-node-allocatable)`;
    if (named.length && !cgroups[`${who}ReservedCgroup`])
      return `invalid configuration: ${who}ReservedCgroup (--${who}-reserved-cgroup) must be specified when "${keys[0]}" or "${keys[1]}" included in enforceNodeAllocatable (--enforce-node-allocatable)`;
  }
  return undefined;
}

/** One reserved cgroup to hold to its reservation at start (upstream's enforceNodeAllocatableCgroups). */
export interface ReservedEnforcement {
  /** The enforceNodeAllocatable value. */
  key: string;
  /** systemReservedCgroup or kubeReservedCgroup, as configured. */
  cgroup: string;
  limits: ReservedCgroupLimits;
  /** What a failure says before its reason, and what a success says (upstream's words). */
  failure: string;
  success: string;
}

/**
 * Pure: upstream's getCgroupConfigInternal: the cpu reservation as shares; unless only the
 * compressible resources are held, the memory, the pids ("pid") and the huge pages too.
 */
export function reservedCgroupLimits(reserved: Record<string, string>, compressibleOnly: boolean): ReservedCgroupLimits {
  const value = (r: string) => (reserved[r] === undefined ? undefined : Math.ceil(parseQuantity(reserved[r]) ?? 0));
  const cpu = reserved.cpu === undefined ? undefined : Math.ceil((parseQuantity(reserved.cpu) ?? 0) * 1000);
  const shares = cpu === undefined ? {} : { cpuShares: sharesFromMilli(cpu) };
  if (compressibleOnly) return shares;
  const memory = value('memory'),
    pids = value('pid');
  const hugePages = hugePageLimits(
    Object.fromEntries(Object.keys(reserved).flatMap((r) => (r.startsWith(HUGEPAGES_PREFIX) ? [[r, value(r) ?? 0]] : []))),
  );
  return {
    ...(memory !== undefined ? { memoryLimitBytes: memory } : {}),
    ...shares,
    ...(pids !== undefined ? { pidsLimit: pids } : {}),
    ...(Object.keys(hugePages).length ? { hugePageLimits: hugePages } : {}),
  };
}

/**
 * Pure: the reserved cgroups enforceNodeAllocatable holds, in upstream's order (system-reserved,
 * kube-reserved, then their -compressible forms), each with its limits and upstream's words.
 */
export function reservedEnforcements(
  values: string[],
  c: {
    systemReservedCgroup: string;
    kubeReservedCgroup: string;
    systemReserved: Record<string, string>;
    kubeReserved: Record<string, string>;
  },
): ReservedEnforcement[] {
  const out: ReservedEnforcement[] = [];
  for (const compressibleOnly of [false, true])
    for (const [who, Who] of [
      ['system', 'System'],
      ['kube', 'Kube'],
    ] as const) {
      const key = `${who}-reserved${compressibleOnly ? '-compressible' : ''}`;
      if (!values.includes(key)) continue;
      const cgroup = c[`${who}ReservedCgroup`];
      out.push({
        key,
        cgroup,
        limits: reservedCgroupLimits(c[`${who}Reserved`], compressibleOnly),
        failure: `Failed to enforce ${Who} Reserved ${compressibleOnly ? 'Compressible ' : ''}Cgroup Limits on ${JSON.stringify(cgroup)}`,
        success: `Updated limits on ${who} reserved cgroup ${cgroup}`,
      });
    }
  return out;
}
