// The order pods go in under pressure (upstream's rank functions): first those using more
// than they asked for, then the lowest priority, then the largest use above the request.
// A pod with no stats goes first: nothing says it is innocent, and it may be what is
// starving the node unseen.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { FsStats, PodStats } from '../stats/summary-types.ts';
import { podPriority, podRequest } from './pods.ts';
import type { FsLayout, Signal } from './types.ts';

export interface Candidate {
  pod: Pod;
  /** The pod's Summary stats; undefined when the Summary has none for it. */
  stats?: PodStats;
}

/** Which of a pod's disk use counts against a filesystem (upstream's fsStatsType). */
export type FsStatsType = 'root' | 'logs' | 'localVolumeSource' | 'images';
export type DiskResource = 'ephemeral-storage' | 'inodes';

type Cmp = (a: Candidate, b: Candidate) => number;

/** true before false: a negative result puts a first. */
const cmpBool = (a: boolean, b: boolean) => (a === b ? 0 : a ? -1 : 1);

/** Wraps a comparison so pods without stats sort first, as upstream's every stats comparison does. */
const withStats =
  (cmp: (a: Candidate & { stats: PodStats }, b: Candidate & { stats: PodStats }) => number): Cmp =>
  (a, b) =>
    !a.stats || !b.stats ? cmpBool(!a.stats, !b.stats) : cmp(a as Candidate & { stats: PodStats }, b as Candidate & { stats: PodStats });

const priority: Cmp = (a, b) => Math.sign(podPriority(a.pod) - podPriority(b.pod));

const memoryUsage = (s: PodStats) => s.memory?.workingSetBytes ?? 0;

const exceedMemoryRequests = withStats((a, b) =>
  cmpBool(memoryUsage(a.stats) > podRequest(a.pod, 'memory'), memoryUsage(b.stats) > podRequest(b.pod, 'memory')),
);

const memory = withStats((a, b) =>
  Math.sign(memoryUsage(b.stats) - podRequest(b.pod, 'memory') - (memoryUsage(a.stats) - podRequest(a.pod, 'memory'))),
);

const processCount = (s: PodStats) => s.process_stats?.process_count ?? 0;
const processes = withStats((a, b) => Math.sign(processCount(b.stats) - processCount(a.stats)));

const used = (fs: FsStats | undefined) => ({ bytes: fs?.usedBytes ?? 0, inodes: fs?.inodesUsed ?? 0 });

/** Volumes on the node's disk that die with the pod (hostPath, and upstream's IsLocalEphemeralVolume). */
function localVolumeNames(pod: Pod): string[] {
  return (pod.spec?.volumes ?? [])
    .filter((v) => v.hostPath || v.gitRepo || v.configMap || (v.emptyDir && !v.emptyDir.medium))
    .map((v) => v.name);
}

/** Pure: a pod's disk use, in bytes and inodes, over the kinds of stats measured. */
export function podDiskUsage(stats: PodStats, pod: Pod, measure: FsStatsType[]): { bytes: number; inodes: number } {
  const parts: FsStats[] = [];
  for (const c of stats.containers) {
    if (measure.includes('root') && c.rootfs) parts.push(c.rootfs);
    if (measure.includes('logs') && c.logs) parts.push(c.logs);
  }
  if (measure.includes('localVolumeSource')) {
    for (const name of localVolumeNames(pod)) {
      const v = stats.volume?.find((x) => x.name === name);
      if (v) parts.push(v);
    }
  }
  // 'images' counts nothing per pod: image layers are shared.
  return parts.map(used).reduce((t, u) => ({ bytes: t.bytes + u.bytes, inodes: t.inodes + u.inodes }), { bytes: 0, inodes: 0 });
}

const diskOf = (c: Candidate & { stats: PodStats }, measure: FsStatsType[], resource: DiskResource) => {
  const u = podDiskUsage(c.stats, c.pod, measure);
  return resource === 'inodes' ? u.inodes : u.bytes;
};

const exceedDiskRequests = (measure: FsStatsType[], resource: DiskResource) =>
  withStats((a, b) =>
    // Nothing requests inodes, so any inode use "exceeds" its request, as upstream.
    cmpBool(diskOf(a, measure, resource) > podRequest(a.pod, resource), diskOf(b, measure, resource) > podRequest(b.pod, resource)),
  );

// Upstream subtracts the ephemeral-storage request even when ranking by inodes; kept.
const disk = (measure: FsStatsType[], resource: DiskResource) =>
  withStats((a, b) =>
    Math.sign(
      diskOf(b, measure, resource) -
        podRequest(b.pod, 'ephemeral-storage') -
        (diskOf(a, measure, resource) - podRequest(a.pod, 'ephemeral-storage')),
    ),
  );

function orderedBy(candidates: Candidate[], ...cmps: Cmp[]): Candidate[] {
  return [...candidates].sort((a, b) => {
    for (const cmp of cmps) {
      const r = cmp(a, b);
      if (r !== 0) return r;
    }
    return 0;
  });
}

/** Pure: memory pressure: above its memory request, then priority, then working set above the request. */
export const rankMemoryPressure = (c: Candidate[]) => orderedBy(c, exceedMemoryRequests, priority, memory);

/** Pure: PID pressure: priority, then the most processes. */
export const rankPIDPressure = (c: Candidate[]) => orderedBy(c, priority, processes);

/** Pure: disk pressure on one filesystem: above its request, priority, then use above the request. */
export const rankDiskPressure = (c: Candidate[], measure: FsStatsType[], resource: DiskResource) =>
  orderedBy(c, exceedDiskRequests(measure, resource), priority, disk(measure, resource));

/**
 * Which pod stats count toward a filesystem signal (upstream's buildSignalToRankFunc):
 * whatever lives on that filesystem in this layout.
 */
export function diskMeasure(signal: Signal, layout: FsLayout): { measure: FsStatsType[]; resource: DiskResource } | undefined {
  const [fs, kind] = signal.split('.') as [string, string];
  if (fs !== 'nodefs' && fs !== 'imagefs' && fs !== 'containerfs') return undefined;
  const resource: DiskResource = kind === 'inodesFree' ? 'inodes' : 'ephemeral-storage';
  const { dedicatedImageFs: image, splitContainerImageFs: split } = layout;
  let measure: FsStatsType[];
  if (image && !split) {
    // Writable layers with the images; logs and volumes on the node's filesystem.
    measure = fs === 'nodefs' ? ['logs', 'localVolumeSource'] : ['root', 'images'];
  } else if (image && split) {
    measure = fs === 'imagefs' ? ['images'] : ['logs', 'localVolumeSource', 'root'];
  } else {
    measure = ['images', 'root', 'logs', 'localVolumeSource'];
  }
  return { measure, resource };
}

/** Pure: the candidates in eviction order for a signal (all of them; the caller skips critical pods). */
export function rankForEviction(candidates: Candidate[], signal: Signal, layout: FsLayout): Candidate[] {
  if (signal === 'memory.available' || signal === 'allocatableMemory.available') return rankMemoryPressure(candidates);
  if (signal === 'pid.available') return rankPIDPressure(candidates);
  const d = diskMeasure(signal, layout)!;
  return rankDiskPressure(candidates, d.measure, d.resource);
}
