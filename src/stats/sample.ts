// One sample of everything the stats endpoints report, as plain data: what the collector
// reads (cgroups, /proc, statfs, CRI) and what the pure builders (Summary, cadvisor and
// resource metrics) turn into answers. Times are milliseconds since the epoch.

export interface CpuSample {
  /** Cumulative CPU time, all cores, in nanoseconds. */
  usageNs: number;
  userNs?: number;
  systemNs?: number;
  shares?: number;
  /** CFS quota and period in microseconds; no quota: undefined. */
  quotaUs?: number;
  periodUs?: number;
}

export interface MemorySample {
  usageBytes: number;
  /** Usage minus inactive file pages, as cadvisor computes it. */
  workingSetBytes: number;
  rssBytes: number;
  cacheBytes: number;
  mappedFileBytes: number;
  swapBytes: number;
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
}

export interface CgroupSample {
  cpu?: CpuSample;
  memory?: MemorySample;
}

export interface NetInterface {
  name: string;
  rxBytes: number; rxPackets: number; rxErrors: number; rxDropped: number;
  txBytes: number; txPackets: number; txErrors: number; txDropped: number;
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
}

export interface RawPod {
  uid: string;
  name: string;
  namespace: string;
  sandboxId: string;
  createdAtMs: number;
  cgroupPath?: string;
  cgroup?: CgroupSample;
  /** The sandbox (pause) container's own cgroup. */
  sandboxCgroup?: CgroupSample;
  processCount?: number;
  /** The interfaces of the pod's network namespace. */
  network?: NetInterface[];
}

export interface SystemContainer {
  /** Upstream's system container names: "pods", "kubelet", "runtime", "misc". */
  name: string;
  cgroupPath: string;
  startTimeMs: number;
  cgroup: CgroupSample;
}

export interface RawSample {
  timeMs: number;
  bootTimeMs: number;
  machine: { cpuCores: number; memoryBytes: number };
  root: CgroupSample;
  network: NetInterface[];
  system: SystemContainer[];
  rootFs?: FsUsage;
  imageFs?: { timeMs: number; usedBytes: number; inodesUsed?: number; mountpoint: string; fs?: FsUsage };
  rlimit: { maxPid?: number; curProc?: number };
  pods: RawPod[];
  containers: RawContainer[];
  /** Set when the runtime could not be asked: pods and containers are then missing. */
  runtimeError?: string;
}
