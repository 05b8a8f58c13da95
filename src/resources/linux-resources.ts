// A container's cpu and memory in the three forms in-place resize juggles: the API's
// ResourceRequirements (spec, allocated, actuated), the CRI's LinuxContainerResources
// (what runc writes to the cgroup), and back again for status.resources. Pure.
import type { ResourceRequirements } from 'kubernetes-types/core/v1.js';
import { formatBinary, formatCPU, parseQuantity } from './quantity.ts';

/** The CRI fields kubelet-ts sets (cgroup v1 semantics); 0 means "not set". */
export interface LinuxResources {
  cpuShares: number;
  cpuPeriod: number;
  cpuQuota: number;
  memoryLimitInBytes: number;
}

export const CFS_PERIOD_US = 100_000;
export const MIN_SHARES = 2;
export const MIN_QUOTA_US = 1000;

/**
 * The node's CFS settings (KubeletConfiguration cpuCFSQuota, cpuCFSQuotaPeriod): with quota
 * off no cpu limit is enforced, in containers (calculateLinuxResources sets neither quota nor
 * period) or pod cgroups (ResourceConfigForPod's enforceCPULimits: quota -1).
 */
export interface CFS {
  quota: boolean;
  periodUs: number;
}
export const DEFAULT_CFS: CFS = { quota: true, periodUs: CFS_PERIOD_US };
/** The configuration's period (a duration in ms) in whole µs, as upstream's Duration / time.Microsecond. */
export const cfsOf = (quota: boolean, periodMs: number): CFS => ({ quota, periodUs: Math.floor(Math.round(periodMs * 1e6) / 1000) });

/** Millicores of a quantity, rounded as upstream's MilliValue (up). */
export const milliCPU = (q: string | number | undefined): number =>
  q === undefined ? 0 : Math.ceil(Math.round((parseQuantity(q) ?? 0) * 1e6) / 1000);
/** Bytes of a quantity (rounded up, as Value()). */
export const bytes = (q: string | number | undefined): number => (q === undefined ? 0 : Math.ceil(parseQuantity(q) ?? 0));

/** Upstream's MilliCPUToShares. */
export const sharesFromMilli = (m: number) => (m === 0 ? MIN_SHARES : Math.max(MIN_SHARES, Math.floor((m * 1024) / 1000)));
/** Upstream's MilliCPUToQuota. */
export const quotaFromMilli = (m: number, periodUs = CFS_PERIOD_US) =>
  m === 0 ? 0 : Math.max(MIN_QUOTA_US, Math.floor((m * periodUs) / 1000));

/**
 * CPU and memory for the runtime, with upstream's conversions (calculateLinuxResources: shares
 * from requests, else limits; quota from limits). podLimits (millicores, bytes): the pod-level
 * limits when the pod sets pod-level resources; they stand in for a container limit that is
 * unset or zero (getCPULimit, getMemoryLimit), shares included when the container requests no cpu.
 */
export function linuxResources(
  r: ResourceRequirements | undefined,
  podLimits?: { cpu?: number; memory?: number },
  cfs = DEFAULT_CFS,
): LinuxResources {
  const req = r?.requests ?? {},
    lim = r?.limits ?? {};
  const cpuLim = milliCPU(lim.cpu) || (podLimits?.cpu ?? 0),
    memLim = bytes(lim.memory) || (podLimits?.memory ?? 0);
  // A container limit is a request too, as the apiserver defaults it; only with neither does the pod's limit give the shares.
  const cpuReqText = req.cpu ?? lim.cpu;
  return fromAmounts(cpuReqText !== undefined ? milliCPU(cpuReqText) : undefined, cpuLim, memLim, cfs);
}

/**
 * Upstream's calculateLinuxResources over millicores and bytes (0: unset): shares from the cpu
 * request, or the limit when there is no request; with CFS quota on, the node's period whatever
 * the limit and the quota from the limit (0, none, without one); with it off, neither.
 */
export function fromAmounts(cpuRequest: number | undefined, cpuLimit: number, memoryLimit: number, cfs = DEFAULT_CFS): LinuxResources {
  return {
    cpuShares: sharesFromMilli(cpuRequest ?? cpuLimit),
    cpuPeriod: cfs.quota ? cfs.periodUs : 0,
    cpuQuota: cfs.quota ? quotaFromMilli(cpuLimit, cfs.periodUs) : 0,
    memoryLimitInBytes: memoryLimit,
  };
}

/** cgroup v2's switch that has the kernel kill every process of the cgroup when it OOM-kills one. */
export const OOM_GROUP = 'memory.oom.group';

/**
 * Upstream's validateKubeletOSConfiguration: with failCgroupV1 (true by default since 1.35) the
 * kubelet does not start on a cgroup v1 host; the error, or undefined.
 */
export const cgroupV1Refused = (failCgroupV1: boolean, cgroupV2: boolean): string | undefined =>
  failCgroupV1 && !cgroupV2
    ? 'kubelet is configured to not run on a host using cgroup v1. cgroup v1 support is unsupported and will be removed in a future release'
    : undefined;

/** Upstream's CgroupV1DeprecatedWarning: the CgroupV1 event a cgroup v1 host gets at each start. */
export const CGROUP_V1_DEPRECATED =
  'cgroup v1 detected. cgroup v1 support is deprecated and will be removed in a future release. Please migrate to cgroup v2. More information at https://git.k8s.io/enhancements/keps/sig-node/5573-remove-cgroup-v1';

/**
 * Whether an OOM kill takes one process or the whole container, as upstream's NewMainKubelet
 * settles singleProcessOOMKill at start: always one on cgroup v1 (where false is refused, as
 * validation_linux.go does), the whole container on v2 unless the configuration says true.
 * false: containers get OOM_GROUP (calculateLinuxResources' Unified).
 */
export function singleProcessOOMKill(configured: boolean | undefined, cgroupV2: boolean): boolean {
  if (cgroupV2) return configured ?? false;
  if (configured === false)
    throw new Error('invalid configuration: singleProcessOOMKill must not be explicitly set to false when using cgroup v1');
  return true;
}

export const sameLinux = (a: LinuxResources, b: LinuxResources) =>
  a.cpuShares === b.cpuShares &&
  a.cpuQuota === b.cpuQuota &&
  a.memoryLimitInBytes === b.memoryLimitInBytes &&
  (a.cpuQuota === 0 || a.cpuPeriod === b.cpuPeriod);

/** The CRI's resources.linux (strings or numbers) as numbers; undefined when absent. */
export function parseLinux(
  l: { cpuShares?: unknown; cpuPeriod?: unknown; cpuQuota?: unknown; memoryLimitInBytes?: unknown } | null | undefined,
): LinuxResources | undefined {
  if (!l) return undefined;
  const n = (v: unknown) => Number(v ?? 0) || 0;
  return { cpuShares: n(l.cpuShares), cpuPeriod: n(l.cpuPeriod), cpuQuota: n(l.cpuQuota), memoryLimitInBytes: n(l.memoryLimitInBytes) };
}

type Res = 'cpu' | 'memory';
type Kind = 'requests' | 'limits';
const amount = (r: Res, q: string | number | undefined) => (r === 'cpu' ? milliCPU(q) : bytes(q));

/** Which of cpu and memory differ between two resource requirements (requests or limits), compared as values. */
export function changedResources(a: ResourceRequirements | undefined, b: ResourceRequirements | undefined): Res[] {
  const out: Res[] = [];
  for (const r of ['cpu', 'memory'] as const) {
    const differs = (['requests', 'limits'] as Kind[]).some((k) => {
      const x = a?.[k]?.[r],
        y = b?.[k]?.[r];
      return (x === undefined) !== (y === undefined) || amount(r, x) !== amount(r, y);
    });
    if (differs) out.push(r);
  }
  return out;
}

export const sameResources = (a: ResourceRequirements | undefined, b: ResourceRequirements | undefined) =>
  changedResources(a, b).length === 0;

/** The cpu and memory of a container's resources (what resize is about), without other resources. */
export function cpuAndMemory(r: ResourceRequirements | undefined): ResourceRequirements {
  const pick = (l?: Record<string, string>) => {
    if (!l) return undefined;
    const o: Record<string, string> = {};
    for (const k of ['cpu', 'memory']) if (l[k] !== undefined) o[k] = String(l[k]);
    return Object.keys(o).length ? o : undefined;
  };
  const requests = pick(r?.requests),
    limits = pick(r?.limits);
  return { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) };
}

/**
 * cpu and memory (as allocated or as running) with the spec's other resources (ephemeral-storage,
 * hugepages, extended ones): upstream allocates a container's whole ResourceRequirements and
 * reports them in allocatedResources and resources; only cpu and memory can differ from the spec.
 */
export function withOtherResources(cm: ResourceRequirements, spec: ResourceRequirements | undefined): ResourceRequirements {
  const merge = (own?: Record<string, string>, all?: Record<string, unknown>) => {
    const others = Object.entries(all ?? {}).filter(([k]) => k !== 'cpu' && k !== 'memory');
    return own || others.length ? { ...Object.fromEntries(others.map(([k, v]) => [k, String(v)])), ...own } : undefined;
  };
  const requests = merge(cm.requests, spec?.requests),
    limits = merge(cm.limits, spec?.limits);
  return { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) };
}

/**
 * What the runtime applied, as API resources shaped like the allocated ones (upstream's
 * convertContainerStatusResources): each value the allocated one when the cgroup cannot tell
 * them apart (2m and 1m both make 2 shares), else converted back from the cgroup values.
 * Memory requests are not in the cgroup: always the allocated one; nor is a cpu limit with CFS
 * quota off (upstream's CPULimit is then nil and the allocated one is shown).
 */
export function fromLinux(l: LinuxResources, allocated: ResourceRequirements, cfs = DEFAULT_CFS): ResourceRequirements {
  // The quota the allocation makes at the period the runtime reports.
  const want = linuxResources(allocated, undefined, { quota: true, periodUs: l.cpuPeriod || cfs.periodUs });
  const requests: Record<string, string> = {},
    limits: Record<string, string> = {};
  const req = allocated.requests ?? {},
    lim = allocated.limits ?? {};
  if (req.cpu !== undefined) requests.cpu = l.cpuShares === want.cpuShares ? req.cpu : formatCPU((l.cpuShares * 1000) / 1024 / 1000);
  if (req.memory !== undefined) requests.memory = req.memory;
  if (lim.cpu !== undefined && !cfs.quota) limits.cpu = lim.cpu;
  else if (lim.cpu !== undefined && l.cpuQuota > 0) {
    limits.cpu = l.cpuQuota === want.cpuQuota ? lim.cpu : formatCPU(l.cpuQuota / (l.cpuPeriod || cfs.periodUs));
  }
  if (lim.memory !== undefined && l.memoryLimitInBytes > 0) {
    limits.memory = l.memoryLimitInBytes === want.memoryLimitInBytes ? lim.memory : formatBinary(l.memoryLimitInBytes);
  }
  return { ...(allocated.requests ? { requests } : {}), ...(allocated.limits ? { limits } : {}) };
}
