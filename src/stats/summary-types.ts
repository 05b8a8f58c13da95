// The Summary API (k8s.io/kubelet/pkg/apis/stats/v1alpha1) in its JSON wire form, as
// /stats/summary serves it and metrics-server, the eviction manager and dashboards read
// it. Optional fields are omitted, as upstream's omitempty pointers are.

/** metav1.Time: RFC 3339 in UTC, whole seconds. */
export type Time = string;

export interface Summary {
  node: NodeStats;
  pods: PodStats[];
}

export interface NodeStats {
  nodeName: string;
  systemContainers?: ContainerStats[];
  startTime: Time;
  cpu?: CPUStats;
  memory?: MemoryStats;
  io?: IOStats;
  network?: NetworkStats;
  fs?: FsStats;
  runtime?: { imageFs?: FsStats; containerFs?: FsStats };
  rlimit?: RlimitStats;
  swap?: SwapStats;
}

export interface RlimitStats {
  time: Time;
  maxpid?: number;
  curproc?: number;
}

export interface PodReference {
  name: string;
  namespace: string;
  uid: string;
}

export interface PodStats {
  podRef: PodReference;
  startTime: Time;
  containers: ContainerStats[];
  cpu?: CPUStats;
  memory?: MemoryStats;
  io?: IOStats;
  network?: NetworkStats;
  volume?: VolumeStats[];
  'ephemeral-storage'?: FsStats;
  process_stats?: { process_count?: number };
  swap?: SwapStats;
}

export interface ContainerStats {
  name: string;
  startTime: Time;
  cpu?: CPUStats;
  memory?: MemoryStats;
  io?: IOStats;
  rootfs?: FsStats;
  logs?: FsStats;
  userDefinedMetrics?: UserDefinedMetric[];
  swap?: SwapStats;
}

/** An application metric of the container (cAdvisor's custom metrics): its descriptor inline, the latest value. */
export interface UserDefinedMetric {
  name: string;
  /** "gauge", "cumulative", or the Prometheus type's name cAdvisor passes on. */
  type: string;
  units: string;
  /** metav1.Time; null when no value came yet (a zero time). */
  time: Time | null;
  value: number;
}

export interface CPUStats {
  time: Time;
  usageNanoCores?: number;
  usageCoreNanoSeconds?: number;
  psi?: PSIStats;
}

export interface MemoryStats {
  time: Time;
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes?: number;
  rssBytes?: number;
  pageFaults?: number;
  majorPageFaults?: number;
  psi?: PSIStats;
}

/** Only pressure so far (KubeletPSI). */
export interface IOStats {
  time: Time;
  psi?: PSIStats;
}

/** Pressure stall information: total in microseconds, avg* in percent of the window. */
export interface PSIStats {
  full: PSIData;
  some: PSIData;
}

export interface PSIData {
  total: number;
  avg10: number;
  avg60: number;
  avg300: number;
}

export interface SwapStats {
  time: Time;
  swapAvailableBytes?: number;
  swapUsageBytes?: number;
}

export interface InterfaceStats {
  name: string;
  rxBytes?: number;
  rxErrors?: number;
  txBytes?: number;
  txErrors?: number;
}

/** The default interface's figures inline (name "" when there is none), then every interface. */
export interface NetworkStats extends InterfaceStats {
  time: Time;
  interfaces?: InterfaceStats[];
}

export interface FsStats {
  time: Time;
  availableBytes?: number;
  capacityBytes?: number;
  usedBytes?: number;
  inodesFree?: number;
  inodes?: number;
  inodesUsed?: number;
}

export interface VolumeStats extends FsStats {
  name?: string;
  pvcRef?: { name: string; namespace: string };
  volumeHealthStats?: { abnormal: boolean };
}
