// The pod-level cgroup under kubepods, as upstream's pod container manager makes it
// before the sandbox (ResourceConfigForPod): cpu.shares from the pod's requests, a CFS
// quota and a memory limit only when every container declares one, so that the pod as a
// whole cannot use more than its containers together. cgroup v1 with the cgroupfs driver
// (this host); containerd places the sandbox and the containers below it.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { parseQuantity } from './quantity.ts';
import { qosClass } from './qos.ts';

export interface PodCgroupLimits {
  cpuShares: number;
  /** CFS quota in µs per 100 ms period; undefined: unlimited. */
  cpuQuotaUs?: number;
  memoryLimitBytes?: number;
}

const CFS_PERIOD_US = 100_000;
const MIN_SHARES = 2;
const MIN_QUOTA_US = 1000;

/** Pure: upstream's ResourceConfigForPod for cgroup v1 (init containers: the larger of their max and the app sum). */
export function podCgroupLimits(pod: Pod): PodCgroupLimits {
  const apps = pod.spec?.containers ?? [], inits = pod.spec?.initContainers ?? [];
  const all = [...apps, ...inits];
  const get = (c: Container, kind: 'requests' | 'limits', r: 'cpu' | 'memory') => {
    const v = c.resources?.[kind]?.[r] ?? (kind === 'requests' ? c.resources?.limits?.[r] : undefined);
    return v === undefined ? undefined : parseQuantity(v) ?? 0;
  };
  const effective = (kind: 'requests' | 'limits', r: 'cpu' | 'memory') =>
    Math.max(apps.reduce((n, c) => n + (get(c, kind, r) ?? 0), 0), ...inits.map((c) => get(c, kind, r) ?? 0));
  const declared = (r: 'cpu' | 'memory') => all.length > 0 && all.every((c) => get(c, 'limits', r) !== undefined);
  if (qosClass(pod) === 'BestEffort') return { cpuShares: MIN_SHARES };
  const cpuShares = Math.max(MIN_SHARES, Math.floor(effective('requests', 'cpu') * 1024));
  return {
    cpuShares,
    ...(declared('cpu') ? { cpuQuotaUs: Math.max(MIN_QUOTA_US, Math.floor(effective('limits', 'cpu') * CFS_PERIOD_US)) } : {}),
    ...(declared('memory') ? { memoryLimitBytes: Math.floor(effective('limits', 'memory')) } : {}),
  };
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
