// The files a cgroup's limits are written to, on either cgroup version, as upstream's cgroup
// managers (pkg/kubelet/cm cgroup_v1_manager_linux.go and cgroup_v2_manager_linux.go) have
// libcontainer write them: on v1 each controller has its own hierarchy (cpu/, memory/, ...);
// on v2 one unified hierarchy holds every controller's files, and a cgroup's controllers must
// first be enabled in its parents' cgroup.subtree_control. Pure: which files, which values.
import { CFS_PERIOD_US } from './linux-resources.ts';
import type { PodCgroupLimits, ReservedCgroupLimits } from './cgroup-limits.ts';

/** What the host's cgroup filesystem offers (read at the edge: src/resources/pod-cgroup.ts). */
export interface CgroupHierarchy {
  version: 1 | 2;
  /** v1: the controllers mounted under the root; v2: the root's cgroup.controllers. */
  controllers: ReadonlySet<string>;
  /** The host's huge page sizes as the cgroup names them ("2MB"). */
  pageSizes: string[];
}

/** One file of a cgroup: in a controller's hierarchy on v1, in the unified one ('') on v2. */
export interface CgroupFile {
  hierarchy: string;
  file: string;
  value: string;
  /** Written only where the kernel has it (v2's hugetlb.<size>.rsvd.max, as libcontainer's setHugeTlb). */
  optional?: boolean;
}

/** upstream's getCPUWeight: cpu.shares [2, 262144] onto cpu.weight [1, 10000], linearly. */
export const cpuWeight = (shares: number) => (shares >= 262_144 ? 10_000 : 1 + Math.floor(((Math.max(shares, 2) - 2) * 9999) / 262_142));

/** upstream's cpuWeightToCPUShares: the way back (not exact: the weight's steps are coarser). */
export const cpuSharesFromWeight = (weight: number) => Math.floor(((weight - 1) * 262_142) / 9999) + 2;

/** A cgroup's CPU weight alone (the QoS cgroups': upstream's qosContainerManager sets no other limit). */
export const cpuSharesFile = (shares: number, version: 1 | 2): CgroupFile =>
  version === 1
    ? { hierarchy: 'cpu', file: 'cpu.shares', value: String(shares) }
    : { hierarchy: '', file: 'cpu.weight', value: String(cpuWeight(shares)) };

/**
 * A QoS cgroup's files (upstream's qosContainerManager.UpdateCgroups through libcontainer's
 * Set): its CPU weight, and its memory limit when qosReserved sets one. A zero limit is left
 * unset, as libcontainer leaves it; a negative one is written as it is, and the kernel refuses it.
 */
export function qosCgroupFiles(l: Pick<PodCgroupLimits, 'cpuShares' | 'memoryLimitBytes'>, version: 1 | 2): CgroupFile[] {
  const memory = l.memoryLimitBytes ? String(l.memoryLimitBytes) : undefined;
  if (memory === undefined) return [cpuSharesFile(l.cpuShares, version)];
  return [
    cpuSharesFile(l.cpuShares, version),
    version === 1
      ? { hierarchy: 'memory', file: 'memory.limit_in_bytes', value: memory }
      : { hierarchy: '', file: 'memory.max', value: memory },
  ];
}

/**
 * The cpu and memory files of a cgroup with these limits (libcontainer's fs setCpu/setMemory,
 * fs2 setCPU/setMemory). An absent memory limit is written as unlimited only when
 * unlimitedMemory: a new cgroup starts unlimited, and lowering an existing limit below the
 * usage fails, so creating leaves it alone; an in-place resize to no limit writes it.
 */
export function cpuMemoryFiles(l: PodCgroupLimits, version: 1 | 2, unlimitedMemory = false): CgroupFile[] {
  const memory = l.memoryLimitBytes ?? (unlimitedMemory ? -1 : undefined);
  if (version === 1)
    return [
      cpuSharesFile(l.cpuShares, 1),
      { hierarchy: 'cpu', file: 'cpu.cfs_period_us', value: String(l.cpuPeriodUs ?? CFS_PERIOD_US) },
      { hierarchy: 'cpu', file: 'cpu.cfs_quota_us', value: String(l.cpuQuotaUs ?? -1) },
      ...(memory === undefined ? [] : [{ hierarchy: 'memory', file: 'memory.limit_in_bytes', value: String(memory) }]),
    ];
  return [
    cpuSharesFile(l.cpuShares, 2),
    { hierarchy: '', file: 'cpu.max', value: `${l.cpuQuotaUs ?? 'max'} ${l.cpuPeriodUs ?? CFS_PERIOD_US}` },
    ...(memory === undefined ? [] : [{ hierarchy: '', file: 'memory.max', value: memory < 0 ? 'max' : String(memory) }]),
  ];
}

/**
 * Every file a new pod (or kubepods) cgroup is written with: cpu and memory, then the huge
 * pages and pids (hugetlbPidsFiles).
 */
export const cgroupFiles = (l: PodCgroupLimits, h: CgroupHierarchy): CgroupFile[] => [
  ...cpuMemoryFiles(l, h.version),
  ...hugetlbPidsFiles(l, h),
];

/**
 * Every huge page size limited (0 unless asked for: upstream's maybeSetHugetlb never
 * overcommits them) where the hugetlb controller is, and pids.max where the pids controller is
 * and a limit is set (libcontainer leaves 0 alone; a negative one is "max").
 */
function hugetlbPidsFiles(l: Pick<PodCgroupLimits, 'hugePageLimits' | 'pidsLimit'>, h: CgroupHierarchy): CgroupFile[] {
  const v1 = h.version === 1;
  const files: CgroupFile[] = [];
  if (h.controllers.has('hugetlb'))
    for (const size of h.pageSizes) {
      const value = String(l.hugePageLimits?.[size] ?? 0);
      if (v1) files.push({ hierarchy: 'hugetlb', file: `hugetlb.${size}.limit_in_bytes`, value });
      else
        files.push(
          { hierarchy: '', file: `hugetlb.${size}.max`, value },
          { hierarchy: '', file: `hugetlb.${size}.rsvd.max`, value, optional: true },
        );
    }
  if (l.pidsLimit && h.controllers.has('pids'))
    files.push({ hierarchy: v1 ? 'pids' : '', file: 'pids.max', value: l.pidsLimit > 0 ? String(l.pidsLimit) : 'max' });
  return files;
}

/**
 * A reserved cgroup's files (upstream's cgroupManager.Update of enforceExistingCgroup through
 * libcontainer's Set): the CPU weight and the memory limit where the reservation has them, no
 * quota, then the huge pages (every size the reservation leaves out held to 0, as upstream) and pids.
 */
export function reservedCgroupFiles(l: ReservedCgroupLimits, h: CgroupHierarchy): CgroupFile[] {
  // A zero limit is left unset, as libcontainer leaves it.
  const memory = !l.memoryLimitBytes
    ? []
    : [
        h.version === 1
          ? { hierarchy: 'memory', file: 'memory.limit_in_bytes', value: String(l.memoryLimitBytes) }
          : { hierarchy: '', file: 'memory.max', value: String(l.memoryLimitBytes) },
      ];
  return [...(l.cpuShares === undefined ? [] : [cpuSharesFile(l.cpuShares, h.version)]), ...memory, ...hugetlbPidsFiles(l, h)];
}

/** The hierarchies a cgroup is made in: v1's cpu and memory (and those written to), v2's one. */
export const cgroupHierarchies = (files: CgroupFile[], version: 1 | 2): string[] =>
  version === 2 ? [''] : [...new Set(['cpu', 'memory', ...files.map((f) => f.hierarchy)])];

/**
 * v2: the cgroups whose cgroup.subtree_control must enable the controllers before path can use
 * them, root first (libcontainer's fs2 CreateCgroupPath: the root and every ancestor, not path
 * itself), and what to write there: every controller the root offers.
 */
export function subtreeControl(path: string, controllers: ReadonlySet<string>): { parents: string[]; value: string } {
  const parts = path.split('/').filter(Boolean);
  const parents = parts.map((_, i) => (i === 0 ? '' : `/${parts.slice(0, i).join('/')}`));
  return { parents, value: [...controllers].map((c) => `+${c}`).join(' ') };
}

/** The period beside a quota in PodCgroupLimits: only a period other than the default 100 ms is named. */
export const period = (us: number | undefined): { cpuPeriodUs?: number } => (us && us !== CFS_PERIOD_US ? { cpuPeriodUs: us } : {});

/** Pure: a v2 cgroup's cpu and memory limits from its cpu.weight, cpu.max and memory.max. */
export function parseV2Limits(weight: string, cpuMax: string, memoryMax: string): PodCgroupLimits {
  const [quota, periodUs] = cpuMax.trim().split(/\s+/);
  const memory = memoryMax.trim();
  return {
    cpuShares: cpuSharesFromWeight(Number(weight.trim())),
    ...(quota && quota !== 'max' ? { cpuQuotaUs: Number(quota), ...period(Number(periodUs)) } : {}),
    ...(memory && memory !== 'max' ? { memoryLimitBytes: Number(memory) } : {}),
  };
}
