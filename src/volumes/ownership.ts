// fsGroup: upstream's SetVolumeOwnership for the volumes it applies to (emptyDir and the
// API-data ones): every file and directory gets the group, group read (and write unless the
// volume is read-only), directories also setgid and group search. Symlinks only the group.
import { chmodSync, lchownSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const RW = 0o660,
  RO = 0o440,
  EXEC = 0o110,
  SETGID = 0o2000;

/** Pure: the mode a file gets under fsGroup. */
export function fsGroupMode(mode: number, isDir: boolean, readOnly: boolean): number {
  let mask = readOnly ? RO : RW;
  if (isDir) mask |= SETGID | EXEC;
  return (mode & 0o7777) | mask;
}

export function setVolumeOwnership(dir: string, fsGroup: number, readOnly: boolean): void {
  const walk = (p: string) => {
    const st = lstatSync(p);
    lchownSync(p, -1, fsGroup);
    if (st.isSymbolicLink()) return;
    chmodSync(p, fsGroupMode(st.mode, st.isDirectory(), readOnly));
    if (st.isDirectory()) for (const n of readdirSync(p)) walk(join(p, n));
  };
  walk(dir);
}

/**
 * Pure: upstream's requiresPermissionChange, for fsGroupChangePolicy OnRootMismatch: the volume's
 * root already has the group, the group's permissions and setgid, so nothing below is changed.
 */
export function rootMatches(root: { gid: number; mode: number; isDir: boolean }, fsGroup: number, readOnly: boolean): boolean {
  if (root.gid !== fsGroup || !root.isDir) return false;
  const want = (readOnly ? RO : RW) | EXEC;
  return (root.mode & want) === want && (root.mode & SETGID) !== 0;
}

/** upstream's SetVolumeOwnership with its skipPermissionChange: OnRootMismatch leaves a matching volume be. */
export function setVolumeOwnershipUnlessMatching(dir: string, fsGroup: number, readOnly: boolean, policy: string | undefined): void {
  if (policy === 'OnRootMismatch') {
    const st = lstatSync(dir);
    if (rootMatches({ gid: st.gid, mode: st.mode, isDir: st.isDirectory() }, fsGroup, readOnly)) return;
  }
  setVolumeOwnership(dir, fsGroup, readOnly);
}
