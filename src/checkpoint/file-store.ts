// The file store under the kubelet's checkpoints (upstream's checkpointmanager and its
// filestore): a checkpoint is read whole, and written whole or not at all, through a temporary
// file renamed over it, so that a kubelet killed mid-write leaves the previous one. Each user
// (device plugins, DRA claims, pod allocations) keeps its own format and checksum.

import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** The checkpoint's text; undefined when there is none. */
export function readCheckpointFile(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** upstream's filestore Write: a temporary file beside it, renamed over it. */
export function writeCheckpointFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.tmp`);
  writeFileSync(tmp, text, { mode: 0o644 });
  renameSync(tmp, path);
}
