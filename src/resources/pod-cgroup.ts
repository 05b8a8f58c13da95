// The pod-level cgroup under kubepods, as upstream's pod container manager makes it
// before the sandbox (ResourceConfigForPod): cpu.shares from the pod's requests, a CFS
// quota and a memory limit only when every container declares one, so that the pod as a
// whole cannot use more than its containers together. cgroup v1 with the cgroupfs driver
// (this host); containerd places the sandbox and the containers below it.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { qosClass } from './qos.ts';
import { bytes, CFS_PERIOD_US, milliCPU, MIN_QUOTA_US, MIN_SHARES, quotaFromMilli, sharesFromMilli } from './linux-resources.ts';

export interface PodCgroupLimits {
  cpuShares: number;
  /** CFS quota in µs per 100 ms period; undefined: unlimited. */
  cpuQuotaUs?: number;
  memoryLimitBytes?: number;
}

/** Pure: upstream's ResourceConfigForPod for cgroup v1 (init containers: the larger of their max and the app sum). */
export function podCgroupLimits(pod: Pod): PodCgroupLimits {
  const apps = pod.spec?.containers ?? [],
    inits = pod.spec?.initContainers ?? [];
  const all = [...apps, ...inits];
  // Millicores for cpu, bytes for memory: integers, so that 570m gives 57000 µs and not 56999.
  const get = (c: Container, kind: 'requests' | 'limits', r: 'cpu' | 'memory') => {
    const v = c.resources?.[kind]?.[r] ?? (kind === 'requests' ? c.resources?.limits?.[r] : undefined);
    return v === undefined ? undefined : r === 'cpu' ? milliCPU(v) : bytes(v);
  };
  const effective = (kind: 'requests' | 'limits', r: 'cpu' | 'memory') =>
    Math.max(
      apps.reduce((n, c) => n + (get(c, kind, r) ?? 0), 0),
      ...inits.map((c) => get(c, kind, r) ?? 0),
    );
  const declared = (r: 'cpu' | 'memory') => all.length > 0 && all.every((c) => get(c, 'limits', r) !== undefined);
  if (qosClass(pod) === 'BestEffort') return { cpuShares: MIN_SHARES };
  const cpuShares = sharesFromMilli(effective('requests', 'cpu'));
  return {
    cpuShares,
    ...(declared('cpu') ? { cpuQuotaUs: Math.max(MIN_QUOTA_US, quotaFromMilli(effective('limits', 'cpu'))) } : {}),
    ...(declared('memory') ? { memoryLimitBytes: effective('limits', 'memory') } : {}),
  };
}

/** Pure: limits no lower than either (the pod cgroup while its containers resize: children may not exceed it). */
export function widenLimits(a: PodCgroupLimits, b: PodCgroupLimits): PodCgroupLimits {
  const max = (x?: number, y?: number) => (x === undefined || y === undefined ? undefined : Math.max(x, y));
  const quota = max(a.cpuQuotaUs, b.cpuQuotaUs),
    memory = max(a.memoryLimitBytes, b.memoryLimitBytes);
  return {
    cpuShares: Math.max(a.cpuShares, b.cpuShares),
    ...(quota !== undefined ? { cpuQuotaUs: quota } : {}),
    ...(memory !== undefined ? { memoryLimitBytes: memory } : {}),
  };
}

export const sameLimits = (a: PodCgroupLimits, b: PodCgroupLimits) =>
  a.cpuShares === b.cpuShares && a.cpuQuotaUs === b.cpuQuotaUs && a.memoryLimitBytes === b.memoryLimitBytes;

// memory.limit_in_bytes reads back as this (page-rounded LONG_MAX) when unlimited.
const UNLIMITED_MEMORY = 2 ** 62;

/** The pod cgroup's current limits (cgroup v1); undefined when it is not there. */
export function readPodCgroup(path: string, root = '/sys/fs/cgroup'): PodCgroupLimits | undefined {
  try {
    const read = (f: string) => Number(readFileSync(`${root}/${f}`, 'utf8').trim());
    const shares = read(`cpu${path}/cpu.shares`),
      quota = read(`cpu${path}/cpu.cfs_quota_us`),
      memory = read(`memory${path}/memory.limit_in_bytes`);
    return {
      cpuShares: shares,
      ...(quota > 0 ? { cpuQuotaUs: quota } : {}),
      ...(memory > 0 && memory < UNLIMITED_MEMORY ? { memoryLimitBytes: memory } : {}),
    };
  } catch {
    return undefined;
  }
}

/** Sets an existing pod cgroup's limits, an absent limit as unlimited (in-place resize; cgroup v1). */
export function writePodCgroup(path: string, l: PodCgroupLimits, root = '/sys/fs/cgroup'): void {
  writeFileSync(`${root}/cpu${path}/cpu.shares`, String(l.cpuShares));
  writeFileSync(`${root}/cpu${path}/cpu.cfs_quota_us`, String(l.cpuQuotaUs ?? -1));
  writeFileSync(`${root}/memory${path}/memory.limit_in_bytes`, String(l.memoryLimitBytes ?? -1));
}

/** Creates the pod's cgroup in the cpu and memory controllers with its limits (idempotent; cgroup v1 only). */
export function ensurePodCgroup(path: string, l: PodCgroupLimits, root = '/sys/fs/cgroup'): void {
  if (!existsSync(`${root}/cpu`) || !existsSync(`${root}/memory`)) return; // cgroup v2: not handled yet
  const set = (controller: string, file: string, value: string | number) => {
    mkdirSync(`${root}/${controller}${path}`, { recursive: true });
    writeFileSync(`${root}/${controller}${path}/${file}`, String(value));
  };
  set('cpu', 'cpu.shares', l.cpuShares);
  set('cpu', 'cpu.cfs_period_us', CFS_PERIOD_US);
  set('cpu', 'cpu.cfs_quota_us', l.cpuQuotaUs ?? -1);
  // -1 only when no limit was ever set: lowering an existing limit below usage fails, so leave those alone.
  if (l.memoryLimitBytes !== undefined) set('memory', 'memory.limit_in_bytes', l.memoryLimitBytes);
  else mkdirSync(`${root}/memory${path}`, { recursive: true });
}

/** memory.usage_in_bytes of a cgroup (cgroup v1), e.g. a pod's or a container's below it; undefined when unreadable. */
export function readMemoryUsage(path: string, root = '/sys/fs/cgroup'): number | undefined {
  try {
    return Number(readFileSync(`${root}/memory${path}/memory.usage_in_bytes`, 'utf8').trim());
  } catch {
    return undefined;
  }
}

/**
 * Removes a pod cgroup in every v1 controller: containerd leaves the directories behind.
 * rmdir takes only an empty cgroup, so one still in use is never harmed (housekeeping retries).
 */
export function removePodCgroup(path: string, root = '/sys/fs/cgroup'): void {
  let controllers: string[] = [];
  try {
    controllers = readdirSync(root);
  } catch {
    return;
  }
  for (const ctl of controllers) {
    try {
      rmdirSync(`${root}/${ctl}${path}`);
    } catch {
      /* absent or busy */
    }
  }
}
