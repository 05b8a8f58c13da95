// A raw block volume handed to a pod, as upstream's volumepathhandler and util.MapBlockVolume /
// UnmapBlockVolume lay it out: the device (the file a CSI driver published) bind-mounted onto
// GLOBALMAP/PODUID, a symlink to it at the pod's device map path, and a loop device opened over
// GLOBALMAP/PODUID (AttachFileDevice: it keeps the device open, so it cannot be silently
// replaced under a running container). The effects are behind BlockDeviceOps; mapBlockVolume and
// unmapBlockVolume order them as upstream does.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from './command.ts';
import { isMountPoint, mountPointsUnder } from './mountinfo.ts';

export interface BlockDeviceOps {
  /** upstream's MapDevice with bindMount: the file target made, source bind-mounted onto it (once). */
  bindMountFile(source: string, target: string): Promise<void>;
  /** upstream's UnmapDevice with bindMount: target unmounted (when mounted) and removed. */
  unmountFile(target: string): Promise<void>;
  /** upstream's AttachFileDevice: the loop device over path, made with `losetup -f` when there is none; its /dev path. */
  attachLoop(path: string): Promise<string>;
  /** upstream's DetachFileDevice: `losetup -d` of the loop device over path, if any. */
  detachLoop(path: string): Promise<void>;
}

/** upstream's getLoopDeviceFromSysfs: the loop device whose backing file is path, by /sys/block/loop*. */
export function loopDeviceOf(path: string, sysBlock = '/sys/block'): string | undefined {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return undefined;
  }
  let names: string[];
  try {
    names = readdirSync(sysBlock).filter((n) => n.startsWith('loop'));
  } catch {
    return undefined;
  }
  for (const n of names) {
    try {
      // cleanBackingFilePath: the kernel appends " (deleted)" once the file is gone.
      const backing = readFileSync(join(sysBlock, n, 'loop', 'backing_file'), 'utf8')
        .trim()
        .replace(/ \(deleted\)$/, '');
      if (backing === real || backing === path) return `/dev/${n}`;
    } catch {
      /* not set up */
    }
  }
  return undefined;
}

export const hostBlockDeviceOps: BlockDeviceOps = {
  async bindMountFile(source, target) {
    if (existsSync(target) && mountPointsUnder(readFileSync('/proc/self/mountinfo', 'utf8'), target).includes(target)) return;
    closeSync(openSync(target, 'a', 0o750));
    await runCommand(['mount', '--bind', source, target]);
  },
  async unmountFile(target) {
    if (!existsSync(target)) return;
    if (isMountPoint(target) || mountPointsUnder(readFileSync('/proc/self/mountinfo', 'utf8'), target).includes(target))
      await runCommand(['umount', target]);
    rmSync(target, { force: true });
  },
  async attachLoop(path) {
    const found = loopDeviceOf(path);
    if (found) return found;
    await runCommand(['losetup', '-f', path]).catch((e: Error) => {
      throw new Error(`makeLoopDevice failed for path ${path}: losetup -f ${path} failed: ${e.message}`);
    });
    const made = loopDeviceOf(path);
    if (!made) throw new Error(`makeLoopDevice failed for path ${path}: no loop device found after losetup`);
    return made;
  },
  async detachLoop(path) {
    const loop = loopDeviceOf(path);
    if (!loop) return;
    await runCommand(['losetup', '-d', loop]).catch((e: Error) => {
      if (existsSync(loop)) throw new Error(`removeLoopDevice failed for path ${path}: losetup -d ${loop} failed: ${e.message}`);
    });
  },
};

/**
 * upstream's util.MapBlockVolume: the device bind-mounted at GLOBALMAP/PODUID, the pod's symlink
 * PODMAPDIR/NAME to it, and the loop device over the bind mount. Returns the pod's symlink, what
 * the containers get.
 */
export async function mapBlockVolume(
  ops: BlockDeviceOps,
  m: { devicePath: string; globalMapPath: string; podMapDir: string; name: string; podUID: string },
): Promise<string> {
  mkdirSync(m.globalMapPath, { recursive: true, mode: 0o750 });
  await ops.bindMountFile(m.devicePath, join(m.globalMapPath, m.podUID));
  mkdirSync(m.podMapDir, { recursive: true, mode: 0o750 });
  const link = join(m.podMapDir, m.name);
  rmSync(link, { force: true });
  symlinkSync(m.devicePath, link);
  await ops.attachLoop(join(m.globalMapPath, m.podUID));
  return link;
}

/** upstream's util.UnmapBlockVolume: the pod's symlink, the loop device, then the bind mount. */
export async function unmapBlockVolume(
  ops: BlockDeviceOps,
  m: { globalMapPath: string; podMapDir: string; name: string; podUID: string },
): Promise<void> {
  rmSync(join(m.podMapDir, m.name), { force: true });
  await ops.detachLoop(join(m.globalMapPath, m.podUID));
  await ops.unmountFile(join(m.globalMapPath, m.podUID));
}
