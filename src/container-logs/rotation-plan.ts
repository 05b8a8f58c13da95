// Which of a container log's files to remove, compress or rotate: pure, as upstream's
// containerLogManager.rotateLog (pkg/kubelet/logs/container_log_manager.go).
// Files are LOG (written by the runtime), LOG.TIMESTAMP (rotated, still plain so a
// shipper can finish reading it), LOG.TIMESTAMP.gz (compressed at the next rotation)
// and LOG.TIMESTAMP.tmp (a compression that was cut short).

export interface RotatePolicy {
  /** Bytes; negative turns rotation off. */
  maxSize: number;
  /** Files in all, the current one included; more than 1. */
  maxFiles: number;
}

export interface RotationPlan {
  /** Leftovers of a failed compression, and the oldest rotated files beyond the limit. */
  remove: string[];
  /** Rotated files still plain: gzip to NAME.gz. */
  compress: string[];
  /** The new name of the current log. */
  rotateTo: string;
}

const GZ = '.gz',
  TMP = '.tmp';

/** Pure: does a log of this size need rotating? */
export const needsRotation = (size: number, p: RotatePolicy) => p.maxSize >= 0 && size >= p.maxSize;

/** Pure: the rotated suffix, upstream's Go layout 20060102-150405 in local time. */
export function rotationTimestamp(d: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${two(d.getMonth() + 1)}${two(d.getDate())}-${two(d.getHours())}${two(d.getMinutes())}${two(d.getSeconds())}`;
}

/**
 * Pure: the plan for rotating `log` now. siblings are the paths matching LOG.* (any order).
 * Keeps maxFiles-2 older files, so that with the one rotated now and the fresh one the
 * runtime opens there are maxFiles in all; the oldest go first so a reader of the newer
 * ones is not cut off. Timestamps sort as strings, so names sort oldest first.
 */
export function planRotation(log: string, siblings: readonly string[], p: RotatePolicy, now: Date): RotationPlan {
  const mine = siblings.filter((s) => s.startsWith(`${log}.`));
  const all = new Set(mine);
  // A .tmp is an interrupted compression; a plain file whose .gz exists was compressed
  // but not yet removed: both are unused.
  const unused = mine.filter((s) => s.endsWith(TMP) || (!s.endsWith(GZ) && all.has(s + GZ)));
  const inUse = mine.filter((s) => !unused.includes(s)).sort();
  const keep = Math.max(0, p.maxFiles - 2);
  const excess = inUse.slice(0, Math.max(0, inUse.length - keep));
  const kept = inUse.slice(excess.length);
  return {
    remove: [...unused.sort(), ...excess],
    compress: kept.filter((s) => !s.endsWith(GZ)),
    rotateTo: `${log}.${rotationTimestamp(now)}`,
  };
}
