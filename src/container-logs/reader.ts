// Streams one container's CRI log file to a client, as upstream's kuberuntime ReadLogs:
// stdout and stderr records in file order, from the tailLines start, through the
// LogWriter's since/timestamps/limitBytes, and with `follow` on as the file grows until
// the client goes away, the container stops or its log is removed. A rotated log
// (renamed, and reopened by the runtime) is followed into the new file, as upstream does.
import { open, realpath, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import { parseCRILog } from './cri-log.ts';
import { fileChanges, type FileChanges } from './file-changes.ts';
import { tailStart } from './tail.ts';
import { LogWriter, type LogOptions } from './writer.ts';

export interface FollowControl {
  /** Stops reading (e.g. the kubelet shuts down); the client closing `out` stops it too. */
  signal?: AbortSignal;
  /** Whether the container still writes this log: following ends once it does not. */
  running?: () => boolean | Promise<boolean>;
  /** How often to look for growth when no change notification comes. */
  pollMs?: number;
}

const NL = 0x0a;
const CHUNK = 64 * 1024;
// Runtimes split lines at 16 KiB; a longer newline-free run is not a CRI log and is dropped
// rather than buffered without bound.
const MAX_RECORD = 1024 * 1024;

/** Rejects before writing anything when the log cannot be opened (ENOENT: no such log). */
export async function readContainerLog(path: string, out: Writable, opts: LogOptions, ctl: FollowControl = {}): Promise<void> {
  const real = await realpath(path); // upstream resolves symlinks so that rotation is seen on the real file
  let file: FileHandle = await open(real, 'r');
  const stop = new AbortController();
  const onClose = () => stop.abort();
  out.on('close', onClose);
  ctl.signal?.addEventListener('abort', onClose);
  let changes: FileChanges | undefined;
  try {
    const { size, ino } = await file.stat();
    let inode = ino;
    let pos = opts.tailLines === undefined ? 0 : await tailStart(file, size, opts.tailLines);
    const writer = new LogWriter(opts);
    // Without follow, tailLines also bounds what is sent: the file may grow while we read.
    let linesLeft = !opts.follow && opts.tailLines !== undefined ? opts.tailLines : Infinity;
    let pending: Buffer[] = [],
      pendingBytes = 0,
      skipping = false;
    let ending: 'drain' | 'reopen' | undefined;
    const finished = () => linesLeft <= 0 || writer.done || stop.signal.aborted || out.destroyed;

    const emit = async (record: Buffer) => {
      const msg = parseCRILog(record);
      if (!msg) return; // upstream skips malformed records too
      if (!msg.partial) linesLeft--;
      const bytes = writer.render(msg);
      // A copy: the read buffer is reused while `out` may still queue what it was given.
      if (bytes?.length && !out.write(Buffer.from(bytes))) await drained(out, stop.signal);
    };

    const chunk = Buffer.allocUnsafe(CHUNK);
    while (!finished()) {
      const { bytesRead } = await file.read(chunk, 0, CHUNK, pos);
      if (bytesRead > 0) {
        pos += bytesRead;
        const data = chunk.subarray(0, bytesRead);
        let start = 0;
        for (let nl = data.indexOf(NL); nl >= 0 && !finished(); nl = data.indexOf(NL, start)) {
          const piece = data.subarray(start, nl + 1);
          start = nl + 1;
          if (skipping) {
            skipping = false;
            continue;
          }
          const record = pendingBytes ? Buffer.concat([...pending, piece]) : piece;
          pending = [];
          pendingBytes = 0;
          await emit(record);
        }
        if (start < data.length && !skipping) {
          pending.push(Buffer.from(data.subarray(start)));
          pendingBytes += data.length - start;
          if (pendingBytes > MAX_RECORD) {
            pending = [];
            pendingBytes = 0;
            skipping = true;
          }
        }
        continue;
      }
      // End of file.
      if (!opts.follow) {
        // Upstream sends an unterminated last record when not following.
        if (pendingBytes) await emit(Buffer.concat(pending));
        return;
      }
      if (ending === 'drain') return;
      if (ending === 'reopen') {
        ending = undefined;
        const next = await open(real, 'r').catch(() => undefined);
        if (!next) return;
        await file.close();
        file = next;
        inode = (await file.stat()).ino;
        pos = 0;
        pending = [];
        pendingBytes = 0;
        skipping = false;
        continue;
      }
      // Read once more to the end before acting: the last writes may land meanwhile.
      const current = await stat(real).catch(() => undefined);
      if (!current) {
        ending = 'drain';
        continue;
      }
      if (current.ino !== inode) {
        ending = 'reopen';
        continue;
      }
      if (ctl.running && !(await ctl.running())) {
        ending = 'drain';
        continue;
      }
      changes ??= fileChanges(dirname(real));
      await changes.wait(ctl.pollMs ?? 1000, stop.signal);
    }
  } finally {
    changes?.close();
    out.off('close', onClose);
    ctl.signal?.removeEventListener('abort', onClose);
    await file.close();
  }
}

/** Waits until `out` takes more, or reading stops (the client went away). */
function drained(out: Writable, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    out.on('drain', done);
    signal.addEventListener('abort', done);
  });
}
