// The file store under the kubelet's checkpoints (upstream's checkpointmanager and its
// filestore): a checkpoint is read whole, and written whole or not at all, through a temporary
// file renamed over it, so that a kubelet killed mid-write leaves the previous one. Each user
// (device plugins, DRA claims, pod allocations) keeps its own format and checksum.

import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
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

const tmpOf = (path: string) => join(dirname(path), `.${basename(path)}.tmp`);

/** upstream's filestore Write: a temporary file beside it, renamed over it. */
export function writeCheckpointFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(tmpOf(path), text, { mode: 0o644 });
  renameSync(tmpOf(path), path);
}

/**
 * A checkpoint that changes with every pod, written off the event loop and coalesced: while a
 * write is in flight, any number of changes make one more write, of the state at that time.
 * Writing it synchronously for each of a burst of 100 pods held the kubelet's loop for
 * 5-10 ms each on a busy disk (upstream writes from the pod's goroutine, which blocks no other).
 * A kubelet killed between a change and its write restarts from the write before, as upstream
 * killed before its write would.
 */
export class CheckpointWriter {
  readonly #path: string;
  readonly #text: () => string;
  readonly #onError: (e: unknown) => void;
  #writing: Promise<void> | undefined;
  #again = false;

  /** text: the checkpoint's content now, taken when a write starts. */
  constructor(path: string, text: () => string, onError: (e: unknown) => void) {
    this.#path = path;
    this.#text = text;
    this.#onError = onError;
  }

  /** The state changed: it is written soon, after the write in flight if there is one. */
  changed(): void {
    if (this.#writing) this.#again = true;
    else this.#writing = this.#write();
  }

  /** Resolves once every change made before the call is on disk (or failed, said by onError). */
  async flushed(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  async #write(): Promise<void> {
    do {
      this.#again = false;
      try {
        await mkdir(dirname(this.#path), { recursive: true });
        await writeFile(tmpOf(this.#path), this.#text(), { mode: 0o644 });
        await rename(tmpOf(this.#path), this.#path);
      } catch (e) {
        this.#onError(e);
      }
    } while (this.#again);
    this.#writing = undefined;
  }
}
