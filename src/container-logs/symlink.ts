// The legacy /var/log/containers/POD_NS_CONTAINER-ID.log symlinks that log shippers
// (fluentd, fluent-bit, promtail, ...) still read: created after a container starts and
// removed with the container, as upstream's kuberuntime does.
import { lstatSync, mkdirSync, readdirSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const LEGACY_CONTAINER_LOGS_DIR = '/var/log/containers';
// ext4 refuses longer file names: upstream cuts the name (not the suffix) to fit.
const MAX_FILE_NAME = 255;
const SUFFIX = '.log';

/** Pure: upstream's legacyLogSymlink (pod full name NAME_NAMESPACE, then _CONTAINER-ID.log). */
export function legacyLogSymlink(
  podName: string,
  podNamespace: string,
  containerName: string,
  containerID: string,
  dir = LEGACY_CONTAINER_LOGS_DIR,
): string {
  let name = `${podName}_${podNamespace}_${containerName}-${containerID}`;
  // Go's len counts bytes; Kubernetes names are ASCII, so this only matters for odd input.
  if (Buffer.byteLength(name) > MAX_FILE_NAME - SUFFIX.length)
    name = Buffer.from(name)
      .subarray(0, MAX_FILE_NAME - SUFFIX.length)
      .toString();
  return join(dir, name + SUFFIX);
}

/**
 * Links link -> logFile. As upstream, only when the log exists (a dangling link would only
 * wait for GC) and an existing link is kept: the container ID makes the name unique.
 */
export function createLogSymlink(logFile: string, link: string): void {
  try {
    statSync(logFile);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
  }
  mkdirSync(dirname(link), { recursive: true });
  try {
    symlinkSync(logFile, link);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}

/** Removes a legacy symlink; one already gone is fine. */
export function removeLogSymlink(link: string): void {
  try {
    unlinkSync(link);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/** Pure: the container ID at the end of a legacy link name (NAME_NS_CONTAINER-ID.log), as upstream's getContainerIDFromLegacyLogSymlink. */
export function containerIDOfLink(path: string): string | undefined {
  const last = path.split('-').pop() ?? '';
  if (!last.endsWith(SUFFIX)) return undefined;
  const id = last.slice(0, -SUFFIX.length);
  return id.length >= 6 && !id.includes('/') ? id : undefined;
}

/**
 * Pure: which dangling links to remove, as upstream's container GC: all of them but those
 * of a container that has not exited (a rotation leaves the target missing for a moment).
 */
export function danglingLinksToRemove(links: readonly { path: string; dangling: boolean }[], notExited: ReadonlySet<string>): string[] {
  return links
    .filter((l) => {
      if (!l.dangling) return false;
      const id = containerIDOfLink(l.path);
      return !id || !notExited.has(id);
    })
    .map((l) => l.path);
}

/** The *.log links in dir, and whether their target is gone. */
export function listLegacyLinks(dir = LEGACY_CONTAINER_LOGS_DIR): { path: string; dangling: boolean }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return names
    .filter((n) => n.endsWith(SUFFIX))
    .map((n) => {
      const path = join(dir, n);
      try {
        statSync(path);
        return { path, dangling: false };
      } catch {
        return { path, dangling: lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() ?? false };
      }
    });
}
