// A container's restart count read back from its log files (CONTAINER/N.log, rotated as
// N.log.TIMESTAMP): upstream's calcRestartCountByLogDir, for a container the runtime holds no
// instance of any more (all removed by RestartAllContainers, or the runtime's state lost), so
// that its next instance neither writes over an old log nor starts counting at 0 again.
import { type Dirent, readdirSync } from 'node:fs';

/** Pure: one more than the highest N of the N.log files named; 0 when there are none. */
export function restartCountFromLogNames(names: string[]): number {
  let count = 0;
  for (const n of names) {
    // Unanchored at the end, as upstream's ^(\d+)\.log(\..*)?
    const m = /^(\d+)\.log/.exec(n);
    if (m) count = Math.max(count, Number(m[1]) + 1);
  }
  return count;
}

/** The directory's files (not subdirectories); a directory that is not there counts 0. */
export function calcRestartCountByLogDir(dir: string): number {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw e;
  }
  return restartCountFromLogNames(entries.filter((e) => !e.isDirectory()).map((e) => e.name));
}
