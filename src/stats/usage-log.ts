// cAdvisor's --log_cadvisor_usage (manager/container.go housekeeping): with the flag, the
// container cAdvisor itself runs in has its CPU and memory logged after every housekeeping, once
// 60 samples are kept. That container (manager.New's selfContainer) is the kubelet's own cpu
// cgroup on cgroup v1 and the root, "/", on v2, where cAdvisor does not look.
import type { CgroupReader } from './cgroup.ts';
import type { CgroupSample, RawSample } from './sample.ts';

export interface UsagePoint {
  timeMs: number;
  cpuNs: number;
  memoryBytes: number;
}

// cAdvisor's numSamples.
export const USAGE_SAMPLES = 60;

/** go-units' HumanSize: decimal units, 4 significant digits (fmt's %.4g), e.g. "95.32MB". */
export function humanSize(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];
  let size = bytes;
  let i = 0;
  while (size >= 1000 && i < units.length - 1) {
    size /= 1000;
    i++;
  }
  return `${Number(size.toPrecision(4))}${units[i]}`;
}

/**
 * Pure: cAdvisor's usage line over the last 60 points (oldest first), or undefined with fewer:
 * "[name] 0.012 cores (average: 0.010 cores), 95.32MB of memory", the instant figure between the
 * last two points, the average over all of them, the memory of the last.
 */
export function usageLine(name: string, points: readonly UsagePoint[]): string | undefined {
  if (points.length < USAGE_SAMPLES) return undefined;
  const last = points.at(-1)!;
  const before = points.at(-2)!;
  const first = points.at(-USAGE_SAMPLES)!;
  const cores = (cpuNs: number, ms: number) => (ms > 0 ? cpuNs / (ms * 1e6) : 0);
  const instant = cores(last.cpuNs - before.cpuNs, last.timeMs - before.timeMs);
  const average = cores(last.cpuNs - first.cpuNs, last.timeMs - first.timeMs);
  return `[${name}] ${instant.toFixed(3)} cores (average: ${average.toFixed(3)} cores), ${humanSize(last.memoryBytes)} of memory`;
}

/** cAdvisor's selfContainer: the kubelet's own cgroup on v1, the root on v2 (or when unknown). */
export const selfContainer = (cgroups: Pick<CgroupReader, 'version' | 'ofProcess'>): string =>
  (cgroups.version === 1 && cgroups.ofProcess('self')) || '/';

/**
 * Keeps the self container's last 60 points from each sample (the root's, or the "kubelet"
 * system container's, which is the kubelet's own cgroup) and returns the line to log, if any.
 */
export function usageLog(self: string): (s: RawSample) => string | undefined {
  const points: UsagePoint[] = [];
  return (s) => {
    const own: CgroupSample | undefined = self === '/' ? s.root : s.system.find((c) => c.cgroupPath === self)?.cgroup;
    if (!own?.cpu || !own.memory) return undefined;
    points.push({ timeMs: s.timeMs, cpuNs: own.cpu.usageNs, memoryBytes: own.memory.usageBytes });
    if (points.length > USAGE_SAMPLES) points.shift();
    return usageLine(self, points);
  };
}
