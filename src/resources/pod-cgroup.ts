// The pod-level cgroup under kubepods, as upstream's pod container manager makes it
// before the sandbox (ResourceConfigForPod): cpu.shares from the pod's requests, a CFS
// quota and a memory limit when the pod sets them at the pod level (spec.resources) or
// every container declares one, so that the pod as a whole cannot use more than that.
// cgroup v1 with the cgroupfs driver (this host); containerd places the sandbox and the
// containers below it.
import { type Dirent, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { qosClass } from './qos.ts';
import { CFS_PERIOD_US, MIN_SHARES, quotaFromMilli, sharesFromMilli } from './linux-resources.ts';
import {
  HUGEPAGES_PREFIX,
  isPodLevelResourcesSet,
  podLimits,
  podRequests,
  podSpecResources,
  toAmounts,
  type Amounts,
} from './pod-resources.ts';
import { parseQuantity } from './quantity.ts';

export interface PodCgroupLimits {
  cpuShares: number;
  /** CFS quota in µs per 100 ms period; undefined: unlimited. */
  cpuQuotaUs?: number;
  memoryLimitBytes?: number;
  /** hugetlb limits in bytes by page size as the cgroup names it ("2MB"); absent when the pod asks for none. */
  hugePageLimits?: Record<string, number>;
  /** pids.max: the kubelet's podPidsLimit when above 0; absent: no limit. */
  pidsLimit?: number;
}

/** libcontainer's page size names (upstream's HugePageUnitSizeFromByteSize): 2097152 is "2MB". */
export function hugePageSizeName(bytes: number): string | undefined {
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let i = 0;
  while (bytes % 1024 === 0 && bytes > 0 && i < units.length - 1) {
    bytes /= 1024;
    i++;
  }
  return bytes > 1024 && i < units.length - 1 ? undefined : `${bytes}${units[i]}`;
}

/** Upstream's HugePageLimits: hugepages-<size> requests summed by page size. */
function hugePageLimits(reqs: Amounts): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(reqs)) {
    if (!k.startsWith(HUGEPAGES_PREFIX)) continue;
    const size = parseQuantity(k.slice(HUGEPAGES_PREFIX.length));
    const name = size === undefined ? undefined : hugePageSizeName(size);
    if (name) out[name] = (out[name] ?? 0) + v;
  }
  return out;
}

/**
 * Pure: upstream's ResourceConfigForPod for cgroup v1 (PodRequests and PodLimits, pod-level
 * resources and overhead included), and the node's podPidsLimit when above 0, as
 * podContainerManager.EnsureExists adds it.
 */
export function podCgroupLimits(pod: Pod, podPidsLimit = -1): PodCgroupLimits {
  const pids = podPidsLimit > 0 ? { pidsLimit: podPidsLimit } : {};
  const reqs = podRequests(pod);
  let cpuDeclared = true,
    memoryDeclared = true;
  // A container (an init container with the sidecars before it) without a limit leaves the pod unlimited...
  const limits = podLimits(pod, {
    containerFn: (a) => {
      if (!a.cpu) cpuDeclared = false;
      if (!a.memory) memoryDeclared = false;
    },
  });
  // ...unless the pod sets that limit itself.
  if (isPodLevelResourcesSet(pod)) {
    const own = toAmounts(podSpecResources(pod)?.limits);
    if (own.cpu) cpuDeclared = true;
    if (own.memory) memoryDeclared = true;
  }
  const hugePages = hugePageLimits(reqs);
  const withHugePages = Object.keys(hugePages).length ? { hugePageLimits: hugePages } : {};
  const qos = qosClass(pod);
  if (qos === 'BestEffort') return { cpuShares: MIN_SHARES, ...withHugePages, ...pids };
  const cpuShares = sharesFromMilli(reqs.cpu ?? 0),
    cpuQuota = quotaFromMilli(limits.cpu ?? 0),
    memory = limits.memory ?? 0;
  // libcontainer leaves a zero quota or memory limit unset.
  const guaranteed = qos === 'Guaranteed';
  return {
    cpuShares,
    ...((guaranteed || cpuDeclared) && cpuQuota ? { cpuQuotaUs: cpuQuota } : {}),
    ...((guaranteed || memoryDeclared) && memory ? { memoryLimitBytes: memory } : {}),
    ...withHugePages,
    ...pids,
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
export function ensurePodCgroup(path: string, l: PodCgroupLimits, root = '/sys/fs/cgroup', pageSizes = () => hugePageSizes()): void {
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
  // Hugepages are never overcommitted: every page size the pod does not ask for is limited to 0 (upstream's toResources).
  if (existsSync(`${root}/hugetlb`)) {
    for (const size of pageSizes()) set('hugetlb', `hugetlb.${size}.limit_in_bytes`, l.hugePageLimits?.[size] ?? 0);
  }
  if (l.pidsLimit !== undefined && existsSync(`${root}/pids`)) set('pids', 'pids.max', l.pidsLimit);
}

/** The host's huge page sizes as the cgroup names them (libcontainer's HugePageSizes: hugepages-2048kB is "2MB"). */
export function hugePageSizes(sysfs = '/sys/kernel/mm/hugepages'): string[] {
  let entries: string[] = [];
  try {
    entries = readdirSync(sysfs);
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const kB = /^hugepages-(\d+)kB$/.exec(e)?.[1];
    const name = kB === undefined ? undefined : hugePageSizeName(Number(kB) * 1024);
    return name ? [name] : [];
  });
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
 * Removes a pod cgroup in every v1 controller, once its pod is stopped or gone; true when
 * nothing of it is left. containerd leaves the directories behind, and below them the cgroup of
 * a container whose task creation was cut short (its StartContainer cancelled by a kubelet
 * kill), with its `runc init` waiting for a start that never comes. As upstream's
 * podContainerManager.Destroy: every process left in the pod's cgroups is killed, then the
 * cgroups go, children first (libcontainer's RemovePath); a killed process takes a moment to
 * exit, so its cgroup goes at the next try (housekeeping).
 */
export function removePodCgroup(path: string, root = '/sys/fs/cgroup'): boolean {
  let controllers: string[] = [];
  try {
    controllers = readdirSync(root);
  } catch {
    return true;
  }
  const dirs = controllers.flatMap((ctl) => cgroupTree(`${root}/${ctl}${path}`));
  for (const pid of new Set(dirs.flatMap(cgroupProcs))) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  let left = 0;
  // Deepest first: rmdir takes only a cgroup without processes or children.
  for (const dir of dirs.reverse()) {
    try {
      rmdirSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') left++;
    }
  }
  return left === 0;
}

/** A cgroup directory and those below it, parents before children; none when absent. */
function cgroupTree(dir: string): string[] {
  let children: Dirent[];
  try {
    children = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return [dir, ...children.filter((c) => c.isDirectory()).flatMap((c) => cgroupTree(`${dir}/${c.name}`))];
}

function cgroupProcs(dir: string): number[] {
  try {
    return readFileSync(`${dir}/cgroup.procs`, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
