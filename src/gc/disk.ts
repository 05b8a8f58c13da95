// The filesystem side of garbage collection: pod directories under the root dir (the
// mark of the pods this kubelet ran, see ownership.ts), pod log directories, container
// log files and pod cgroups. Reads are cheap (a few readdirs) and done every 2 s.
import { readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { podCgroupCandidates } from '../resources/cgroup-layout.ts';
import type { NodeCgroups } from '../resources/cgroup-manager.ts';
import { danglingLinksToRemove, listLegacyLinks, removeLogSymlink } from '../container-logs/symlink.ts';
import { mountPointsUnder } from '../mount/mountinfo.ts';

// A UID is one path segment: never '', '.', '..' or anything with a slash.
const SAFE_UID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const isSafeUID = (uid: string) => SAFE_UID.test(uid);

/** ROOT/pods/UID, upstream's layout. */
export const podDir = (rootDir: string, uid: string) => join(rootDir, 'pods', uid);

const subdirs = (dir: string): string[] => {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
};

/** UIDs with a pod directory under rootDir. */
export const listPodDirs = (rootDir: string): Set<string> => new Set(subdirs(join(rootDir, 'pods')).filter(isSafeUID));

/** Directory names under podLogsDir. */
export const listLogDirs = (podLogsDir: string): string[] => subdirs(podLogsDir);

/** Pure: the pod UIDs under podsDir that have a mount point below them, from /proc/self/mountinfo. */
export function podsWithMounts(mountinfo: string, podsDir: string): Set<string> {
  const prefix = podsDir.replace(/\/+$/, '') + '/';
  return new Set(
    mountPointsUnder(mountinfo, podsDir)
      .filter((point) => point.startsWith(prefix))
      .map((point) => point.slice(prefix.length).split('/')[0]!),
  );
}

/** The pods whose directory still has something mounted below it. */
export function mountedPods(rootDir: string): Set<string> {
  let podsDir: string;
  try {
    podsDir = realpathSync(resolve(rootDir, 'pods'));
  } catch {
    return new Set();
  }
  return podsWithMounts(readFileSync('/proc/self/mountinfo', 'utf8'), podsDir);
}

/** The volumes of a pod that is gone, unmounted (src/mount); returns how many were mounted. */
export { unmountPodVolumes } from '../mount/mountinfo.ts';

export function removePodDir(rootDir: string, uid: string): void {
  if (!isSafeUID(uid)) throw new Error(`refusing to remove the pod dir of UID ${JSON.stringify(uid)}`);
  rmSync(podDir(rootDir, uid), { recursive: true, force: true });
}

export function removeLogDir(podLogsDir: string, name: string): void {
  if (!name || name.includes('/') || name === '.' || name === '..') throw new Error(`refusing to remove log dir ${JSON.stringify(name)}`);
  rmSync(join(podLogsDir, name), { recursive: true, force: true });
}

/** A removed container's log file and its rotated siblings (LOG.TIMESTAMP), as upstream's removeContainerLog. */
export function removeContainerLogs(logPath: string): void {
  if (!logPath.startsWith('/')) return;
  const dir = dirname(logPath),
    file = basename(logPath);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) if (n === file || n.startsWith(`${file}.`)) rmSync(join(dir, n), { force: true });
}

/**
 * The cgroups containerd leaves behind for a pod, in every controller and QoS class (upstream's
 * cleanupOrphanedPodCgroups); true when none is left (see CgroupManager.remove).
 */
export async function removePodCgroups(cgroups: NodeCgroups, uid: string): Promise<boolean> {
  // Without cgroupsPerQOS there are none (no candidates): upstream's HandlePodCleanups cleans them only with cgroupsPerQOS.
  if (!isSafeUID(uid)) return true;
  let gone = true;
  for (const path of podCgroupCandidates(cgroups.layout, uid)) {
    // Only those there are destroyed (and timed, kubelet_cgroup_manager_duration_seconds), as upstream's Destroy.
    if (cgroups.manager.present(path)) gone = (await cgroups.manager.remove(path)) && gone;
  }
  return gone;
}

/** /var/log/containers links whose log is gone (see danglingLinksToRemove); how many were removed. */
export function removeDanglingLogSymlinks(notExited: ReadonlySet<string>): number {
  const gone = danglingLinksToRemove(listLegacyLinks(), notExited);
  for (const l of gone) removeLogSymlink(l);
  return gone.length;
}
