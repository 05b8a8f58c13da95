// One sample of everything the stats endpoints report, as plain data: what the collector
// reads (cgroups, /proc, statfs, CRI) and what the pure builders (Summary, cadvisor and
// resource metrics) turn into answers. Times are milliseconds since the epoch.
import type { Filesystem } from './filesystems.ts';
import type { CustomMetrics } from './app-metrics/collect.ts';

export interface CpuSample {
  /** Cumulative CPU time, all cores, in nanoseconds. */
  usageNs: number;
  userNs?: number;
  systemNs?: number;
  shares?: number;
  /** CFS quota and period in microseconds; no quota: undefined. */
  quotaUs?: number;
  periodUs?: number;
  /**
   * CFS throttling from cpu.stat (nr_periods, nr_throttled, throttled time) and bursting
   * (nr_bursts, burst time; 0 on a kernel without them): cadvisor's container_cpu_cfs_*.
   */
  cfs?: { periods: number; throttledPeriods: number; throttledNs: number; bursts: number; burstNs: number };
}

export interface MemorySample {
  usageBytes: number;
  /** Usage minus inactive file pages, as cadvisor computes it. */
  workingSetBytes: number;
  rssBytes: number;
  cacheBytes: number;
  mappedFileBytes: number;
  swapBytes: number;
  /** The file LRUs (cadvisor's TotalActiveFile, TotalInactiveFile): the subtree's on v1, the cgroup's on v2. */
  activeFileBytes: number;
  inactiveFileBytes: number;
  /** Kernel memory: v1's memory.kmem.usage_in_bytes, v2's memory.stat "kernel"; 0 where neither is. */
  kernelBytes: number;
  /** Over the whole subtree (what containerd's CRI stats and the Summary report). */
  pageFaults: number;
  majorPageFaults: number;
  /** Of the cgroup's own tasks only (cgroup v1's local counters; v2 has only the subtree's). */
  localPageFaults: number;
  localMajorPageFaults: number;
  maxUsageBytes?: number;
  failcnt?: number;
  /** undefined: unlimited. */
  limitBytes?: number;
  /**
   * cadvisor's swap limit: memory.swap.max on v2, memory.memsw.limit_in_bytes (memory and
   * swap together) on v1; 0 without swap accounting (no file); undefined: unlimited.
   */
  swapLimitBytes?: number;
  /**
   * cadvisor's spec reservation: memory.soft_limit_in_bytes on v1, memory.min on v2
   * (common.GetSpec); undefined: unlimited.
   */
  reservationBytes?: number;
  /** The kernel's oom_kill count of the cgroup and its descendants (memory.oom_control v1, memory.events v2). */
  oomKills?: number;
}

/** One block device's counters by operation (Read, Write, Sync, Async, Discard, Total), as cadvisor's PerDiskStats. */
export interface DiskStats {
  major: number;
  minor: number;
  stats: Record<string, number>;
}

/** What cadvisor's DiskIo takes from blkio (v1) or io.stat (v2): bytes and I/Os per device. */
export interface BlkioSample {
  serviceBytes: DiskStats[];
  serviced: DiskStats[];
}

/** The pids controller: tasks (threads) in the cgroup and below, and the limit; 0 is none, as runc reports it. */
export interface PidsSample {
  current: number;
  max: number;
}

/** cadvisor's ProcessStats (processStatsFromProcs): the cgroup's own processes, not its children's. */
export interface ProcessSample {
  processCount: number;
  fdCount: number;
  socketCount: number;
  /** Of the container's first process; none for a cgroup that is not a container's (cadvisor's pid 0). */
  ulimits: Ulimit[];
}

/** A soft and hard limit from /proc/<pid>/limits; -1 is unlimited. */
export interface Ulimit {
  name: string;
  soft: number;
  hard: number;
}

/** One line of a pressure file: the share of time stalled (avg*, percent) and its total (µs). */
export interface PsiData {
  total: number;
  avg10: number;
  avg60: number;
  avg300: number;
}

/** "some": at least one task stalled; "full": all non-idle tasks stalled at once. */
export interface Psi {
  some: PsiData;
  full: PsiData;
}

export interface CgroupSample {
  cpu?: CpuSample;
  memory?: MemorySample;
  /** Undefined without the controller's files or without any I/O counted. */
  blkio?: BlkioSample;
  pids?: PidsSample;
  /** Read from /proc by the collector, not from the cgroup's files. */
  processes?: ProcessSample;
  /**
   * Pressure stall information of cgroup v2's cpu/memory/io.pressure. Undefined on v1
   * (no per-cgroup pressure files) and for a file the kernel does not offer (PSI off).
   */
  psi?: { cpu?: Psi; memory?: Psi; io?: Psi };
}

export interface NetInterface {
  name: string;
  rxBytes: number;
  rxPackets: number;
  rxErrors: number;
  rxDropped: number;
  txBytes: number;
  txPackets: number;
  txErrors: number;
  txDropped: number;
}

/** statfs of a filesystem. usedBytes counts every used block, as cadvisor's "usage". */
export interface FsUsage {
  capacityBytes: number;
  availableBytes: number;
  usedBytes: number;
  inodes: number;
  inodesFree: number;
}

/** What CRI ListContainerStats said about one container. */
export interface CriContainerStats {
  timeMs: number;
  cpuNs?: number;
  workingSetBytes?: number;
  usageBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
  /** The runtime's limit minus working set; containerd says 0 for a container without a limit. */
  availableBytes?: number;
  cpuPsi?: Psi;
  memoryPsi?: Psi;
  io?: { timeMs: number; psi?: Psi };
  swap?: { timeMs: number; usageBytes?: number; availableBytes?: number };
  writableLayer?: { timeMs: number; usedBytes?: number; inodesUsed?: number; mountpoint?: string };
}

export interface RawContainer {
  id: string;
  name: string;
  podUid: string;
  sandboxId: string;
  image: string;
  createdAtMs: number;
  cgroupPath?: string;
  cgroup?: CgroupSample;
  cri?: CriContainerStats;
  /** Bytes and inodes of the container's log directory. */
  logs?: { usedBytes: number; inodesUsed: number };
  /** The block device (major:minor) of the filesystem holding the writable layer. */
  writableLayerDevice?: string;
  /** cAdvisor's application metrics, when the container has collectors. */
  customMetrics?: CustomMetrics;
}

/** Bytes (allocated blocks, as du counts them) and inodes under a path, itself included. */
export interface DirUsage {
  usedBytes: number;
  inodesUsed: number;
}

/**
 * upstream's volume.Metrics of a claim volume, as its plugin's metrics provider measures it:
 * statfs of the mount (local), or the driver's NodeGetVolumeStats (CSI).
 */
export interface VolumeMetrics extends FsUsage {
  inodesUsed: number;
  /** The CSI volume condition; undefined unless CSIVolumeHealth is on and the driver has VOLUME_CONDITION. */
  abnormal?: boolean;
}

/**
 * One of the pod's volumes, ROOT/pods/UID/volumes/PLUGIN/NAME: a directory the kubelet fills
 * (measured by du and statfs: usage and fs) or a claim's mount (measured by its plugin: metrics).
 */
export interface RawVolume {
  /** The pod's name for the volume (its directory's name for the directories the kubelet fills). */
  name: string;
  /** Upstream's plugin directory name: kubernetes.io~empty-dir, kubernetes.io~configmap, kubernetes.io~csi, ... */
  plugin: string;
  /** A filesystem of its own, mounted on the directory: a tmpfs (emptyDir medium Memory, secret, projected, downwardAPI), a claim's mount. */
  ownFs: boolean;
  /** The last walk of the directory (du), when it began; walks are cached, so older than the sample. Undefined before the first one ends. */
  usage?: DirUsage & { timeMs: number };
  /** statfs of the volume's filesystem, this sample. */
  fs?: FsUsage;
  /** A claim volume's last figures, when their measuring began (cached too); undefined before the first measure ends or when it failed. */
  metrics?: VolumeMetrics & { timeMs: number };
  /** The claim, for a volume backed by a PersistentVolumeClaim (persistentVolumeClaim or generic ephemeral). */
  pvc?: { name: string; namespace: string };
}

export interface RawPod {
  uid: string;
  name: string;
  namespace: string;
  sandboxId: string;
  createdAtMs: number;
  cgroupPath?: string;
  /** The sandbox (pause) container's cgroup below the pod's, in the driver's form. */
  sandboxCgroupPath?: string;
  cgroup?: CgroupSample;
  /** The sandbox (pause) container's own cgroup. */
  sandboxCgroup?: CgroupSample;
  processCount?: number;
  /** The interfaces of the pod's network namespace. */
  network?: NetInterface[];
  /** The pod's volume directories, by name. */
  volumes?: RawVolume[];
  /** The filesystems the pod cgroup's container hint names (src/stats/filesystems.ts). */
  filesystems?: Filesystem[];
  /** The pod's managed hosts file (ROOT/pods/UID/etc-hosts), which upstream counts in its ephemeral storage. */
  etcHosts?: DirUsage;
}

export interface SystemContainer {
  /** Upstream's system container names: "pods", "kubelet", "runtime", "misc". */
  name: string;
  cgroupPath: string;
  startTimeMs: number;
  cgroup: CgroupSample;
  /** The filesystems its container hint names (src/stats/filesystems.ts). */
  filesystems?: Filesystem[];
}

/** What of cadvisor's MachineInfo does not change while the kubelet runs (the Node's identity, the CPU topology). */
export interface MachineIdentity {
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osVersion: string;
  physicalCores: number;
  sockets: number;
}

/** cadvisor's MachineInfo, as its machine_* series and cadvisor_version_info show it. */
export interface MachineInfo extends MachineIdentity {
  cpuCores: number;
  memoryBytes: number;
  /** SwapTotal, the root cgroup's swap limit as cadvisor sets it. */
  swapBytes: number;
}

export interface RawSample {
  timeMs: number;
  bootTimeMs: number;
  machine: MachineInfo;
  root: CgroupSample;
  network: NetInterface[];
  system: SystemContainer[];
  rootFs?: FsUsage;
  /** Every filesystem of the node, as the root container's in cAdvisor (src/stats/filesystems.ts). */
  filesystems?: Filesystem[];
  imageFs?: { timeMs: number; usedBytes: number; inodesUsed?: number; mountpoint: string; fs?: FsUsage };
  rlimit: { maxPid?: number; curProc?: number };
  /** Block device names by major:minor ("254:0" -> "vda"), from /proc/diskstats. */
  blockDevices?: Record<string, string>;
  pods: RawPod[];
  containers: RawContainer[];
  /** Set when the runtime could not be asked: pods and containers are then missing. */
  runtimeError?: string;
}
