// The pod-level cgroup under kubepods, as upstream's pod container manager makes it
// before the sandbox (ResourceConfigForPod): cpu.shares from the pod's requests, a CFS
// quota and a memory limit when the pod sets them at the pod level (spec.resources) or
// every container declares one, so that the pod as a whole cannot use more than that.
// The cgroupfs driver, on cgroup v1 or v2 (the files of each: cgroup-files.ts); containerd
// places the sandbox and the containers below it.
import { type Dirent, existsSync, mkdirSync, opendirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { qosClass } from './qos.ts';
import {
  type CgroupFile,
  type CgroupHierarchy,
  cgroupFiles,
  cgroupHierarchies,
  cpuMemoryFiles,
  parseV2Limits,
  period,
  reservedCgroupFiles,
  subtreeControl,
} from './cgroup-files.ts';
import type { CgroupName } from './cgroup-layout.ts';
import { DEFAULT_CFS, MIN_SHARES, quotaFromMilli, sharesFromMilli } from './linux-resources.ts';
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
import type { PodCgroupLimits, ReservedCgroupLimits } from './cgroup-limits.ts';

export type { PodCgroupLimits };

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

/** Upstream's HugePageLimits: hugepages-<size> amounts (a pod's requests, the node's allocatable) summed by page size. */
export function hugePageLimits(reqs: Amounts): Record<string, number> {
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
 * Upstream's GetHugepageLimitsFromResources: a limit for every huge page size of the host (its
 * cgroup names, hugePageSizes), 0 unless the container's limits name that size, else the pod's
 * when it sets pod-level resources: a container cannot take pages it did not ask for.
 */
export function containerHugepageLimits(pod: Pod, containerLimits: Record<string, string | number> | undefined, pageSizes: string[]) {
  const wanted = {
    ...(isPodLevelResourcesSet(pod) ? hugePageLimits(toAmounts(podSpecResources(pod)?.limits)) : {}),
    ...hugePageLimits(toAmounts(containerLimits)),
  };
  return pageSizes.map((pageSize) => ({ pageSize, limit: wanted[pageSize] ?? 0 }));
}

/**
 * Pure: upstream's ResourceConfigForPod for cgroup v1 (PodRequests and PodLimits, pod-level
 * resources and overhead included), and the node's podPidsLimit when above 0, as
 * podContainerManager.EnsureExists adds it. With the node's CFS quota off (enforceCPULimits
 * false) the quota is unlimited.
 */
export function podCgroupLimits(pod: Pod, podPidsLimit = -1, cfs = DEFAULT_CFS): PodCgroupLimits {
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
    cpuQuota = cfs.quota ? quotaFromMilli(limits.cpu ?? 0, cfs.periodUs) : 0,
    memory = limits.memory ?? 0;
  // libcontainer leaves a zero quota or memory limit unset.
  const guaranteed = qos === 'Guaranteed';
  return {
    cpuShares,
    ...((guaranteed || cpuDeclared) && cpuQuota ? { cpuQuotaUs: cpuQuota, ...period(cfs.periodUs) } : {}),
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
    ...(quota !== undefined ? { cpuQuotaUs: quota, ...period(b.cpuPeriodUs) } : {}),
    ...(memory !== undefined ? { memoryLimitBytes: memory } : {}),
  };
}

export const sameLimits = (a: PodCgroupLimits, b: PodCgroupLimits) =>
  a.cpuShares === b.cpuShares &&
  a.cpuQuotaUs === b.cpuQuotaUs &&
  a.cpuPeriodUs === b.cpuPeriodUs &&
  a.memoryLimitBytes === b.memoryLimitBytes;

// memory.limit_in_bytes reads back as this (page-rounded LONG_MAX) when unlimited.
const UNLIMITED_MEMORY = 2 ** 62;

/** The host's cgroup filesystem under root: its version, controllers and huge page sizes. */
export function cgroupHierarchy(root = '/sys/fs/cgroup', pageSizes = hugePageSizes): CgroupHierarchy {
  const unified = readText(`${root}/cgroup.controllers`);
  if (unified !== undefined) return { version: 2, controllers: new Set(unified.split(/\s+/).filter(Boolean)), pageSizes: pageSizes() };
  let mounted: string[] = [];
  try {
    // Hierarchies that are mounted: a node container may list a controller the host never
    // mounted (hugetlb on this project's VMs) as an empty directory or a dangling link.
    mounted = readdirSync(root).filter((c) => existsSync(`${root}/${c}/cgroup.procs`));
  } catch {
    /* no cgroup filesystem */
  }
  return { version: 1, controllers: new Set(mounted), pageSizes: pageSizes() };
}

const readText = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

/** A cgroup's directory in a hierarchy ('' on v2). */
const dirOf = (root: string, hierarchy: string, path: string) => `${root}${hierarchy ? `/${hierarchy}` : ''}${path}`;

function writeFiles(root: string, path: string, files: CgroupFile[]): void {
  for (const f of files) {
    try {
      writeFileSync(`${dirOf(root, f.hierarchy, path)}/${f.file}`, f.value);
    } catch (e) {
      if (!(f.optional && (e as NodeJS.ErrnoException).code === 'ENOENT')) throw e;
    }
  }
}

/** The pod cgroup's current cpu and memory limits; undefined when it is not there. */
export function readPodCgroup(path: string, root = '/sys/fs/cgroup', h = cgroupHierarchy(root)): PodCgroupLimits | undefined {
  try {
    const read = (hierarchy: string, f: string) => readFileSync(`${dirOf(root, hierarchy, path)}/${f}`, 'utf8');
    const readOptional = (hierarchy: string, f: string) => {
      try {
        return read(hierarchy, f);
      } catch {
        return undefined;
      }
    };
    if (h.version === 2) return parseV2Limits(read('', 'cpu.weight'), read('', 'cpu.max'), read('', 'memory.max'));
    const shares = Number(read('cpu', 'cpu.shares')),
      quota = Number(read('cpu', 'cpu.cfs_quota_us')),
      memory = Number(read('memory', 'memory.limit_in_bytes'));
    return {
      cpuShares: shares,
      ...(quota > 0 ? { cpuQuotaUs: quota, ...period(Number(readOptional('cpu', 'cpu.cfs_period_us'))) } : {}),
      ...(memory > 0 && memory < UNLIMITED_MEMORY ? { memoryLimitBytes: memory } : {}),
    };
  } catch {
    return undefined;
  }
}

/** Sets an existing pod cgroup's cpu and memory limits, an absent limit as unlimited (in-place resize). */
export function writePodCgroup(path: string, l: PodCgroupLimits, root = '/sys/fs/cgroup', h = cgroupHierarchy(root)): void {
  writeFiles(root, path, cpuMemoryFiles(l, h.version, true));
}

/** v1: the hierarchies upstream's Validate looks in (its allowlist, hugetlb when mounted); v2: the controllers it needs. */
const V1_VALIDATED = ['cpu', 'cpuacct', 'cpuset', 'hugetlb', 'memory', 'pids', 'systemd'];
const V2_NEEDED = ['cpu', 'cpuset', 'hugetlb', 'memory', 'pids'];

/**
 * Upstream's cgroupManager.Validate, worded as it is: on v1 the cgroup's directory in each
 * mounted hierarchy of its allowlist, on v2 each controller the root offers and the kubelet
 * uses enabled in the cgroup's cgroup.controllers. Throws what is missing.
 */
export function validateCgroup(path: string, name: CgroupName, root: string, h: CgroupHierarchy): void {
  const quoted = `[${name.map((c) => JSON.stringify(c)).join(' ')}]`;
  if (h.version === 2) {
    const file = `${root}${path}/cgroup.controllers`;
    const enabled = readText(file)?.split(/\s+/);
    if (!enabled) throw new Error(`could not read controllers for cgroup ${quoted}: open ${file}: no such file or directory`);
    const missing = V2_NEEDED.filter((c) => h.controllers.has(c) && !enabled.includes(c));
    if (missing.length) throw new Error(`cgroup ${quoted} has some missing controllers: ${missing.join(', ')}`);
    return;
  }
  const missing = V1_VALIDATED.filter((c) => h.controllers.has(c))
    .map((c) => dirOf(root, c, path))
    .filter((dir) => !existsSync(dir));
  if (missing.length) throw new Error(`cgroup ${quoted} has some missing paths: ${missing.join(', ')}`);
}

/** A reserved cgroup's limits written (upstream's cgroupManager.Update of enforceExistingCgroup). */
export function writeReservedCgroup(path: string, l: ReservedCgroupLimits, root: string, h: CgroupHierarchy): void {
  writeFiles(root, path, reservedCgroupFiles(l, h));
}

/**
 * Creates a pod's (or kubepods') cgroup with its limits (idempotent), as upstream's
 * cgroupManager.Create. Without a cgroup filesystem there is nothing to make.
 */
export function ensurePodCgroup(path: string, l: PodCgroupLimits, root = '/sys/fs/cgroup', h = cgroupHierarchy(root)): void {
  ensureCgroup(path, cgroupFiles(l, h), root, h);
}

/**
 * Makes a cgroup and writes its files (idempotent): on v2 its controllers are enabled in the
 * parents' subtree_control first (libcontainer's fs2 CreateCgroupPath). Nothing without a
 * cgroup filesystem (neither v1's cpu and memory controllers nor v2).
 */
export function ensureCgroup(path: string, files: CgroupFile[], root: string, h: CgroupHierarchy): void {
  if (h.version === 1 && !(h.controllers.has('cpu') && h.controllers.has('memory'))) return;
  if (h.version === 2) {
    const { parents, value } = subtreeControl(path, h.controllers);
    for (const parent of parents) {
      mkdirSync(`${root}${parent}`, { recursive: true });
      enableControllers(`${root}${parent}/cgroup.subtree_control`, value);
    }
  }
  for (const hierarchy of cgroupHierarchies(files, h.version)) mkdirSync(dirOf(root, hierarchy, path), { recursive: true });
  writeFiles(root, path, files);
}

/**
 * libcontainer's way: all at once, else one by one, each failure left to the writes that need
 * the controller (a controller the kernel will not delegate there fails them with its reason).
 */
function enableControllers(file: string, value: string): void {
  try {
    writeFileSync(file, value);
  } catch {
    for (const c of value.split(' ')) {
      try {
        writeFileSync(file, c);
      } catch {
        /* see above */
      }
    }
  }
}

/** The host's huge page sizes as the cgroup names them (libcontainer's HugePageSizes: hugepages-2048kB is "2MB"). */
export function hugePageSizes(sysfs = '/sys/kernel/mm/hugepages'): string[] {
  // In the directory's own order, as runc's HugePageSizes reads it (Readdirnames): the CRI
  // hugepage_limits list the sizes in it. (readdirSync sorts the names.)
  const entries: string[] = [];
  try {
    const dir = opendirSync(sysfs);
    try {
      for (let e = dir.readSync(); e; e = dir.readSync()) entries.push(e.name);
    } finally {
      dir.closeSync();
    }
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const kB = /^hugepages-(\d+)kB$/.exec(e)?.[1];
    const name = kB === undefined ? undefined : hugePageSizeName(Number(kB) * 1024);
    return name ? [name] : [];
  });
}

/** A cgroup's memory usage (v1 memory.usage_in_bytes, v2 memory.current), e.g. a pod's or a container's below it; undefined when unreadable. */
export function readMemoryUsage(path: string, root = '/sys/fs/cgroup', h = cgroupHierarchy(root)): number | undefined {
  const text = h.version === 2 ? readText(`${root}${path}/memory.current`) : readText(`${root}/memory${path}/memory.usage_in_bytes`);
  return text === undefined ? undefined : Number(text.trim());
}

/**
 * Removes a pod cgroup (in every v1 controller, or v2's one hierarchy), once its pod is stopped or gone; true when
 * nothing of it is left. containerd leaves the directories behind, and below them the cgroup of
 * a container whose task creation was cut short (its StartContainer cancelled by a kubelet
 * kill), with its `runc init` waiting for a start that never comes. As upstream's
 * podContainerManager.Destroy: every process left in the pod's cgroups is killed, then the
 * cgroups go, children first (libcontainer's RemovePath); a killed process takes a moment to
 * exit, so its cgroup goes at the next try (housekeeping).
 */
/** The cgroup is in one of its hierarchies at least (what a removal has to take). */
export function cgroupPresent(path: string, root = '/sys/fs/cgroup'): boolean {
  const h = cgroupHierarchy(root, () => []);
  return (h.version === 2 ? [''] : [...h.controllers]).some((ctl) => existsSync(dirOf(root, ctl, path)));
}

export function removePodCgroup(path: string, root = '/sys/fs/cgroup'): boolean {
  const h = cgroupHierarchy(root, () => []);
  const hierarchies = h.version === 2 ? [''] : [...h.controllers];
  const dirs = hierarchies.flatMap((ctl) => cgroupTree(dirOf(root, ctl, path)));
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
