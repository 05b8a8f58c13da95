// Writes a payload into a volume directory so that a reader never sees a mix of old and
// new files: upstream's AtomicWriter layout. The files live in a timestamped directory
// (..2006_01_02_15_04_05.XXXXXX); ..data is a symlink to it, swapped by rename(2); each
// top-level name the user sees is a symlink through ..data.
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { type Payload, validatePayloadPath } from './payload.ts';

const DATA = '..data';

const stamp = (d: Date) => {
  const p = (n: number) => String(n).padStart(2, '0');
  return `..${d.getUTCFullYear()}_${p(d.getUTCMonth() + 1)}_${p(d.getUTCDate())}_${p(d.getUTCHours())}_${p(d.getUTCMinutes())}_${p(d.getUTCSeconds())}.`;
};

/** Relative paths of the files below dir. */
function files(dir: string, prefix = ''): string[] {
  let out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out = out.concat(files(join(dir, e.name), rel));
    else out.push(rel);
  }
  return out;
}

const exists = (p: string) => {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
};
const top = (p: string) => p.split('/')[0]!;

/** Writes the payload unless the volume already holds exactly it (by content, as upstream); returns whether it wrote. */
export function writeAtomically(dir: string, payload: Payload, now = new Date()): boolean {
  for (const p of payload.keys()) validatePayloadPath(p);
  mkdirSync(dir, { recursive: true });
  let oldTs: string | undefined;
  try {
    oldTs = readlinkSync(join(dir, DATA));
  } catch {
    /* first write */
  }
  if (oldTs?.includes('/')) oldTs = undefined; // not ours
  const oldFiles = oldTs && exists(join(dir, oldTs)) ? files(join(dir, oldTs)) : undefined;
  const stale = (oldFiles ?? []).filter((p) => !payload.has(p));
  const same =
    oldFiles !== undefined &&
    stale.length === 0 &&
    [...payload].every(([p, f]) => {
      try {
        return readFileSync(join(dir, oldTs!, p)).equals(f.data);
      } catch {
        return false;
      }
    });
  if (same) return false;

  const tsDir = mkdtempSync(join(dir, stamp(now)));
  chmodSync(tsDir, 0o755);
  for (const [p, f] of payload) {
    const full = join(tsDir, p);
    mkdirSync(dirname(full), { recursive: true, mode: 0o755 });
    writeFileSync(full, f.data, { mode: f.mode });
    chmodSync(full, f.mode); // whatever the umask
  }
  const tmpLink = join(dir, `${DATA}_tmp`);
  rmSync(tmpLink, { force: true });
  symlinkSync(tsDir.slice(dir.length + 1), tmpLink);
  renameSync(tmpLink, join(dir, DATA));

  const visible = new Set([...payload.keys()].map(top));
  for (const name of visible) if (!exists(join(dir, name))) symlinkSync(`${DATA}/${name}`, join(dir, name));
  for (const name of new Set((oldFiles ?? []).map(top))) if (!visible.has(name)) rmSync(join(dir, name), { force: true });
  if (oldTs?.startsWith('..') && !oldTs.includes('/')) rmSync(join(dir, oldTs), { recursive: true, force: true });
  return true;
}
