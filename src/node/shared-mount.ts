// The kubelet's root directory as a shared mount, as upstream's setupDataDirs does with
// hostutil.MakeRShared (pkg/volume/util/hostutil/hostutil_linux.go DoMakeRShared): without it
// the runtime refuses a Bidirectional volumeMount ("... is mounted on "/" but it is not a shared
// mount") and a HostToContainer one sees nothing mounted later. mount(8) does the syscalls.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

interface MountInfo {
  mountPoint: string;
  /** The optional fields: "shared:N", "master:N", ... */
  optional: string[];
}

const unescapeOctal = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

/** Pure: /proc/self/mountinfo's lines (mount point and optional fields; the latter end at "-"). */
export function parseMountInfo(text: string): MountInfo[] {
  const out: MountInfo[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(' ');
    const sep = f.indexOf('-', 6);
    if (f.length < 7 || sep < 0) continue;
    out.push({ mountPoint: unescapeOctal(f[4]!), optional: f.slice(6, sep) });
  }
  return out;
}

/** mount-utils' PathWithinBase. */
const within = (path: string, base: string) => {
  const rel = relative(base, path);
  return rel !== '..' && !rel.startsWith('../');
};

/**
 * Pure, upstream's isShared over findMountInfo: the mount path lives on (the last mounted one
 * whose mount point contains it) has shared propagation. Throws when none contains it.
 */
export function isShared(path: string, mountinfo: string): boolean {
  const infos = parseMountInfo(mountinfo);
  for (let i = infos.length - 1; i >= 0; i--) {
    if (within(path, infos[i]!.mountPoint)) return infos[i]!.optional.some((o) => o.startsWith('shared:'));
  }
  throw new Error(`cannot find mount point for "${path}"`);
}

export interface MountOps {
  mountinfo(): string;
  /** Runs mount(8) with these arguments; throws with its message. */
  mount(args: string[]): void;
}

const hostOps: MountOps = {
  mountinfo: () => readFileSync('/proc/self/mountinfo', 'utf8'),
  mount: (args) => {
    try {
      execFileSync('mount', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (e) {
      const err = e as { stderr?: Buffer; message: string };
      throw new Error(err.stderr?.toString().trim() || err.message);
    }
  },
};

/**
 * Upstream's DoMakeRShared: nothing when path is on a shared mount already (a restarted kubelet);
 * else bind-mounts it onto itself and makes that rshared. Returns whether it mounted.
 */
export function makeRShared(path: string, ops: MountOps = hostOps): boolean {
  if (isShared(path, ops.mountinfo())) return false;
  try {
    ops.mount(['--bind', path, path]);
  } catch (e) {
    throw new Error(`failed to bind-mount ${path}: ${(e as Error).message}`);
  }
  try {
    ops.mount(['--make-rshared', path]);
  } catch (e) {
    throw new Error(`failed to make ${path} rshared: ${(e as Error).message}`);
  }
  return true;
}
