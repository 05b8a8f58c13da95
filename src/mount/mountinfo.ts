// tmpfs mounts for memory-backed volumes (emptyDir medium Memory, secret, projected,
// downwardAPI as upstream) and their teardown. mount(8) does the syscall: Node has none; the
// command helper runs it without forking the kubelet (command.ts).
import { mkdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { podSubPathsDir, podVolumesDir } from '../podutil/pod-dirs.ts';
import { runCommand } from './command.ts';

/** Pure: a mountinfo field as the kernel escapes it (space, tab, newline, backslash as \\ooo) made plain. */
export const mountinfoField = (raw: string): string => raw.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

/** Pure: the mount points at or below dir, deepest first, from /proc/self/mountinfo. */
export function mountPointsUnder(mountinfo: string, dir: string): string[] {
  return deepestFirst(mountLinesUnder(mountinfo, dir));
}

const deepestFirst = (points: string[]) => [...new Set(points)].sort((a, b) => b.length - a.length);

/** Pure: the mount point of each mountinfo line at or below dir: a point mounted twice (stacked) is there twice. */
function mountLinesUnder(mountinfo: string, dir: string): string[] {
  const base = dir.replace(/\/+$/, '');
  const out: string[] = [];
  for (const line of mountinfo.split('\n')) {
    const raw = line.split(' ')[4];
    if (!raw) continue;
    const point = mountinfoField(raw);
    if (point === base || point.startsWith(base + '/')) out.push(point);
  }
  return out;
}

/** Whether dir is a mount point (another device than its parent). */
export function isMountPoint(dir: string): boolean {
  try {
    return statSync(dir).dev !== statSync(dirname(dir)).dev;
  } catch {
    return false;
  }
}

export async function mountTmpfs(dir: string, sizeBytes?: number): Promise<void> {
  if (isMountPoint(dir)) return;
  const args = ['-t', 'tmpfs', ...(sizeBytes ? ['-o', `size=${sizeBytes}`] : []), 'tmpfs', dir];
  try {
    await runCommand(['mount', ...args]);
  } catch (e) {
    throw new Error(`mount failed: ${(e as Error).message}`);
  }
}

/**
 * A bind mount of source at target (made when missing), read-only by a remount as upstream's
 * MakeBindOpts does; a target already mounted is left as it is (a restarted kubelet).
 */
export async function bindMount(source: string, target: string, readOnly: boolean): Promise<void> {
  mkdirSync(target, { recursive: true, mode: 0o750 });
  // By mountinfo, not by device: a bind mount within one filesystem keeps the device.
  if (mountPointsUnder(readFileSync('/proc/self/mountinfo', 'utf8'), target).includes(target)) return;
  const mount = async (args: string[]) => {
    try {
      await runCommand(['mount', ...args]);
    } catch (e) {
      throw new Error(`mount failed: ${(e as Error).message}\nMounting command: mount\nMounting arguments: ${args.join(' ')}`);
    }
  };
  await mount(['--bind', source, target]);
  if (readOnly) await mount(['-o', 'bind,remount,ro', target]);
}

/**
 * Unmounts everything at or below dir, deepest first: how many mount points there were, and
 * whether all are gone for certain (each unmounted at the first try, none mounted twice), so that
 * a caller need not read mountinfo again before it removes dir.
 */
export async function unmountAll(dir: string): Promise<{ found: number; allGone: boolean }> {
  let info: string;
  try {
    info = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return { found: 0, allGone: false };
  }
  const lines = mountLinesUnder(info, dir);
  const points = deepestFirst(lines);
  // One umount of a point mounted twice leaves the lower mount.
  let allGone = lines.length === points.length;
  for (const p of points) {
    try {
      await runCommand(['umount', p]);
    } catch {
      allGone = false;
      await runCommand(['umount', '-l', p]).catch(() => {
        /* housekeeping leaves the pod dir while it stays mounted */
      });
    }
  }
  return { found: points.length, allGone };
}

/**
 * Unmounts the volumes of a pod that is gone without this kubelet tearing them down (it
 * was deleted while the kubelet was down): only what is below ROOT/pods/UID/volume-subpaths
 * (its subPath binds, first: they hold the volumes) and ROOT/pods/UID/volumes.
 */
export async function unmountPodVolumes(rootDir: string, uid: string): Promise<number> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(uid)) return 0;
  let n = 0;
  for (const d of [podSubPathsDir(rootDir, uid), podVolumesDir(rootDir, uid)]) {
    let dir: string;
    try {
      dir = realpathSync(d);
    } catch {
      continue;
    }
    n += (await unmountAll(dir)).found;
  }
  return n;
}
