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
