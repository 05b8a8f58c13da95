// A volumeMount's subPath: upstream's makeMounts creates a missing one before the container
// starts (so the runtime does not make it 0750 later), with subpather.SafeMakeDir; then
// PrepareSafeSubpath bind-mounts it, opened without following symlinks, at a path of the
// kubelet's own, which the runtime mounts instead: a container that swaps a directory of the
// volume for a symlink meanwhile cannot have another container mount the host's files
// (CVE-2017-1002101, CVE-2021-25741). CleanSubPaths unmounts them when the pod's volumes go.
import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { mountPointsUnder, unmountAll } from '../mount/mountinfo.ts';

/**
 * Why a subPath could not be used: while making it (upstream's SafeMakeDir) or while resolving
 * it for the mount (PrepareSafeSubpath). makeMounts tells the two apart in its message.
 */
export class SubPathError extends Error {
  readonly stage: 'create' | 'prepare';
  constructor(stage: 'create' | 'prepare', message: string, options?: ErrorOptions) {
    super(message, options);
    this.stage = stage;
  }
}

/**
 * volumePath/subPath, made a directory when missing, refused when it resolves (through symlinks)
 * outside the volume. Returns the host path to mount; throws SubPathError.
 */
export function prepareSubPath(volumePath: string, subPath: string): string {
  const base = realpathSync(volumePath);
  const inside = (p: string) => p === base || p.startsWith(base + '/');
  const target = join(base, subPath);
  const outside = (stage: SubPathError['stage']) => new SubPathError(stage, `subpath "${target}" not within volume path "${base}"`);
  // (A dangling symlink does not exist for stat, as upstream's PathExists: making it fails.)
  if (!existsSync(target)) {
    let existing = dirname(target);
    while (!existsSync(existing)) existing = dirname(existing);
    const realExisting = realpathSync(existing);
    if (!inside(realExisting)) throw outside('create');
    try {
      // makeMounts: perm is hu.GetMode(volumePath), the volume root's mode with its setgid and sticky bits.
      makeDirs(realExisting, relative(existing, target).split('/'), statSync(base).mode & 0o7777);
    } catch (e) {
      throw new SubPathError('create', (e as Error).message, { cause: e });
    }
  }
  const real = realpathSync(target);
  if (!inside(real)) throw outside('prepare');
  return real;
}

/**
 * Creates parent/dirs one level at a time, each chmod'ed to perm, as upstream's doSafeMakeDir:
 * mkdir is cut by the kubelet's umask (022), so without the chmod an fsGroup volume's subPath
 * would be rwxr-xr-x and its group could not write. The chmod goes through a no-follow handle
 * (fchmod, as upstream) so a directory swapped for a symlink meanwhile is not followed.
 */
export function makeDirs(parent: string, dirs: string[], perm: number): void {
  let current = parent;
  for (const dir of dirs) {
    current = join(current, dir);
    mkdirSync(current, { mode: perm & 0o777 });
    const fd = openSync(current, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    try {
      fchmodSync(fd, perm & 0o7777);
    } finally {
      closeSync(fd);
    }
  }
}

/** Linux's O_PATH (the same on x86_64 and arm64), which Node's fs.constants leaves out. */
const O_PATH = 0o10000000;

/** A subPath to bind: the volume's and the subPath's resolved paths, and where the bind goes. */
export interface SubPathBind {
  base: string;
  path: string;
  target: string;
}

/** Upstream's getSubpathBindTarget: SUBPATHS (pod-dirs.ts podSubPathsDir)/VOLUME/CONTAINER/INDEX of the volumeMount. */
export const subPathTarget = (subPathsDir: string, volume: string, container: string, index: number) =>
  join(subPathsDir, volume, container, String(index));

/**
 * Upstream's doSafeOpen: path (resolved, within base) opened one component at a time, each by
 * name in the descriptor of the one before (/proc/self/fd/N/NAME, as its openat) with
 * O_NOFOLLOW, refused when one is a symlink. Returns an O_PATH descriptor of path.
 */
export function safeOpen(path: string, base: string): number {
  const rel = relative(base, path);
  if (rel === '..' || rel.startsWith('../') || rel.startsWith('/'))
    throw new SubPathError('prepare', `path ${path} is outside of allowed base ${base}`);
  let fd = openSync(base, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    let current = base;
    for (const seg of rel ? rel.split('/') : []) {
      current = join(current, seg);
      const child = openSync(`/proc/self/fd/${fd}/${seg}`, O_PATH | constants.O_NOFOLLOW);
      closeSync(fd);
      fd = child;
      if (fstatSync(fd).isSymbolicLink()) throw new SubPathError('prepare', `unexpected symlink found ${current}`);
    }
    return fd;
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/**
 * Upstream's doBindSubPath: the subPath opened safely, then /proc/<kubelet>/fd/<fd> bind-mounted
 * (mount --no-canonicalize, so that mount does not resolve it back to a path) at the target, a
 * file or a directory as the subPath is. A target already mounted from the same file is kept (a
 * restarted container, a restarted kubelet); one mounted from another is unmounted first.
 */
export async function bindSubPath(b: SubPathBind, run: (argv: string[]) => Promise<unknown>): Promise<void> {
  const fd = safeOpen(b.path, b.base);
  try {
    const source = fstatSync(fd);
    mkdirSync(dirname(b.target), { recursive: true, mode: 0o750 });
    // mountinfo names mount points by their real paths.
    const real = join(realpathSync(dirname(b.target)), basename(b.target));
    const mounted = () => mountPointsUnder(readFileSync('/proc/self/mountinfo', 'utf8'), real).includes(real);
    if (mounted()) {
      const t = lstatSync(b.target);
      if (t.dev === source.dev && t.ino === source.ino) return;
      await run(['umount', b.target]);
    }
    // A file serves every other type (a symlink, a device, a socket): the bind mount changes it.
    if (source.isDirectory()) mkdirSync(b.target, { recursive: true, mode: 0o750 });
    else if (!existsSync(b.target)) writeFileSync(b.target, '', { mode: 0o640 });
    try {
      await run(['mount', '--no-canonicalize', '--bind', `/proc/${process.pid}/fd/${fd}`, b.target]);
    } catch (e) {
      if (!mounted()) rmSync(b.target, { recursive: true, force: true });
      throw new SubPathError('prepare', `error mounting ${b.path}: ${(e as Error).message}`, { cause: e });
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Upstream's CleanSubPaths for all of a pod's volumes at once: every bind under the pod's
 * subPaths directory unmounted, then the directory removed, never while something is still
 * mounted below it (the caller tries again). Before the volumes themselves are unmounted.
 */
export async function cleanSubPaths(dir: string): Promise<void> {
  if (!existsSync(dir)) return;
  const real = realpathSync(dir);
  await unmountAll(real);
  const left = mountPointsUnder(readFileSync('/proc/self/mountinfo', 'utf8'), real);
  if (left.length) throw new Error(`subPath mounts still mounted: ${left.join(', ')}`);
  rmSync(real, { recursive: true, force: true });
}
