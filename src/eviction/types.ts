// The eviction manager's vocabulary (upstream pkg/kubelet/eviction/api and the signal
// tables of helpers.go): the signals, a threshold on one, and which node condition and
// which resource each signal stands for. Types and constant tables only.

/** The signals upstream accepts in evictionHard/evictionSoft (swap.available is not one: upstream refuses it too). */
export const SIGNALS = [
  'memory.available',
  'allocatableMemory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'containerfs.available',
  'containerfs.inodesFree',
  'pid.available',
] as const;
export type Signal = (typeof SIGNALS)[number];

export const isSignal = (s: string): s is Signal => (SIGNALS as readonly string[]).includes(s);

/** How a quantity prints (resource.Quantity's Format): "100Mi" stays binary, "500M" decimal. */
export type QuantityFormat = 'BinarySI' | 'DecimalSI';

/** Either an absolute amount (bytes, inodes or pids) or a fraction (0..1) of the signal's capacity. */
export type ThresholdValue = { quantity: number; format: QuantityFormat } | { percentage: number };

export interface Threshold {
  signal: Signal;
  /** The only operator upstream has: the signal's available amount below the value. */
  operator: 'LessThan';
  value: ThresholdValue;
  /** 0 for a hard threshold; a soft one must hold this long before it drives evictions. */
  gracePeriodMs: number;
  /** evictionMinimumReclaim: once met, the threshold stays met until this much more is free. */
  minReclaim?: ThresholdValue;
}

export type PressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';
/** The order conditions are reported and printed in (upstream's map order is random). */
export const PRESSURE_CONDITIONS: readonly PressureCondition[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure'];

/** The resource a signal measures; "inodes" and "pids" are upstream's internal names. */
export type ReclaimResource = 'memory' | 'ephemeral-storage' | 'inodes' | 'pids';

export const SIGNAL_CONDITION: Record<Signal, PressureCondition> = {
  'memory.available': 'MemoryPressure',
  'allocatableMemory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'containerfs.available': 'DiskPressure',
  'containerfs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

export const SIGNAL_RESOURCE: Record<Signal, ReclaimResource> = {
  'memory.available': 'memory',
  'allocatableMemory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'imagefs.available': 'ephemeral-storage',
  'imagefs.inodesFree': 'inodes',
  'containerfs.available': 'ephemeral-storage',
  'containerfs.inodesFree': 'inodes',
  'pid.available': 'pids',
};

/**
 * How the runtime's filesystems sit: dedicatedImageFs when images live off the node's root
 * filesystem (cadvisor's HasDedicatedImageFs), splitContainerImageFs when writable layers
 * live on yet another one (KubeletSeparateDiskGC). Decides containerfs thresholds, ranking
 * and node-level reclaim.
 */
export interface FsLayout {
  dedicatedImageFs: boolean;
  splitContainerImageFs: boolean;
}
