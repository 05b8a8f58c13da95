// usageNanoCores: CPU counters are cumulative, so a rate needs two samples. Upstream
// keeps the previous CRI sample per container for this; here each sample keeps its
// predecessor.

export interface CpuReading {
  usageNs: number;
  timeMs: number;
}

/**
 * Pure: the average CPU use between two readings in nanocores (1e9 = one core busy);
 * undefined without a previous reading, when time did not advance, or when the counter
 * went backwards (a new cgroup under an old name).
 */
export function usageNanoCores(prev: CpuReading | undefined, cur: CpuReading | undefined): number | undefined {
  if (!prev || !cur) return undefined;
  const dtMs = cur.timeMs - prev.timeMs;
  const dNs = cur.usageNs - prev.usageNs;
  if (!(dtMs > 0) || dNs < 0) return undefined;
  return Math.round((dNs * 1000) / dtMs);
}
