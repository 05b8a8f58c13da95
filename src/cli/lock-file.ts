// --lock-file and --exit-on-lock-contention, as server.go's run: flock.Acquire (an exclusive
// flock on the file, waited for) before the kubelet talks to anything, and
// watchForLockfileContention, which ends the kubelet when another process comes for the file.
//
// Node.js has no flock(2): util-linux's flock(1) holds the lock for us, in a child that lives as
// long as its stdin (our pipe) stays open, so the lock goes when the kubelet goes, however it
// goes. Nor can Node see inotify's IN_OPEN: contention is read from /proc/locks instead, where a
// process blocked on the same file (a second kubelet in flock.Acquire) is listed as a waiter
// ("->") on our lock. An open that takes no lock is not seen, as upstream would; a deleted lock
// file is (IN_DELETE_SELF).
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, constants, existsSync, openSync, readFileSync, watch } from 'node:fs';
import type { Logger } from '../log/log.ts';

/** One line of /proc/locks: `3: -> FLOCK  ADVISORY  WRITE 9680 fe:00:9977886 0 EOF`. */
interface LockLine {
  waiter: boolean;
  pid: number;
  /** `major:minor:inode`, the locked file. */
  file: string;
}

export function parseProcLocks(text: string): LockLine[] {
  return text.split('\n').flatMap((line) => {
    const f = line.trim().split(/\s+/);
    const waiter = f[1] === '->';
    const rest = waiter ? f.slice(2) : f.slice(1);
    // type, ADVISORY|MANDATORY, READ|WRITE, pid, file, start, end
    if (rest.length < 5) return [];
    return [{ waiter, pid: Number(rest[3]), file: rest[4]! }];
  });
}

/** Whether another process waits for the file whose lock `holderPid` holds. */
export function lockContended(locks: LockLine[], holderPid: number): boolean {
  const held = locks.find((l) => !l.waiter && l.pid === holderPid);
  return held !== undefined && locks.some((l) => l.waiter && l.file === held.file && l.pid !== holderPid);
}

export interface LockLoss {
  reason: string;
  /** Upstream's clean exit (contended, deleted, the watch failed), not the lock lost under us. */
  contended: boolean;
}

export interface HeldLock {
  /** Settles when the lock file is contended or deleted, or its holder is gone. */
  lost: Promise<LockLoss>;
}

const POLL_MS = 1000;

/**
 * flock.Acquire: waits for an exclusive lock on `path` (created 0600 if missing), held until the
 * process exits. With `exitOnContention`, `lost` settles when another process waits for it.
 */
export async function acquireLockFile(path: string, exitOnContention: boolean, log: Logger): Promise<HeldLock> {
  log.info('Acquiring file lock', { path });
  try {
    closeSync(openSync(path, constants.O_CREAT | constants.O_RDWR, 0o600));
  } catch (e) {
    throw new Error(`unable to acquire file lock on "${path}": ${(e as Error).message}`);
  }
  const holder = spawn('flock', ['--exclusive', path, 'sh', '-c', 'echo locked; read _'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let stderr = '';
    const fail = (why: string) => reject(new Error(`unable to acquire file lock on "${path}": ${why}`));
    holder.once('error', (e) => fail(e.message));
    holder.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    holder.once('exit', (code) => fail(stderr.trim() || `flock exited with ${code}`));
    holder.stdout!.once('data', () => {
      holder.removeAllListeners('exit');
      resolve();
    });
  });
  // The lock is the child's: it must not keep the event loop alive, nor outlive us.
  holder.unref();
  for (const s of [holder.stdin, holder.stdout, holder.stderr]) (s as unknown as { unref?: () => void })?.unref?.();
  return { lost: watchLock(path, holder, exitOnContention, log) };
}

function watchLock(path: string, holder: ChildProcess, exitOnContention: boolean, log: Logger): Promise<LockLoss> {
  return new Promise((settle) => {
    const resolve = (reason: string, contended = true) => settle({ reason, contended });
    holder.once('exit', (code, signal) => resolve(`its holder (flock) exited (${signal ?? code}): the lock is gone`, false));
    if (!exitOnContention) return;
    log.info('Watching for lock file contention', { path });
    const watcher = watch(path, () => {
      if (!existsSync(path)) resolve('lock file deleted');
    });
    // watchForLockfileContention ends the kubelet on a watcher error too, as on an event.
    watcher.once('error', (e) => resolve(`watching the lock file failed: ${e.message}`));
    watcher.unref();
    const poll = () => {
      let text = '';
      try {
        text = readFileSync('/proc/locks', 'utf8');
      } catch (e) {
        return resolve(`cannot read /proc/locks: ${(e as Error).message}`, false);
      }
      if (lockContended(parseProcLocks(text), holder.pid!)) return resolve('another process waits for the lock file');
      setTimeout(poll, POLL_MS * (0.9 + Math.random() * 0.2)).unref();
    };
    poll();
  });
}
