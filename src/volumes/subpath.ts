// A volumeMount's subPath: upstream's makeMounts creates a missing one before the container
// starts (so the runtime does not make it 0750 later), with subpather.SafeMakeDir.
import { closeSync, constants, existsSync, fchmodSync, mkdirSync, openSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

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
