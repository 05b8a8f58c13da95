import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireLockFile, lockContended, parseProcLocks } from './lock-file.ts';
import type { Logger } from '../log/log.ts';

const LOCKS = `1: OFDLCK ADVISORY  WRITE -1 fe:00:5326994 0 EOF
2: FLOCK  ADVISORY  WRITE 7621 fe:00:811042 0 EOF
3: FLOCK  ADVISORY  WRITE 9676 fe:00:9977886 0 EOF
3: -> FLOCK  ADVISORY  WRITE 9680 fe:00:9977886 0 EOF
4: POSIX  ADVISORY  READ 8963 fe:00:1122820 0 EOF
`;

test('/proc/locks: holders and waiters', () => {
  const locks = parseProcLocks(LOCKS);
  assert.equal(locks.length, 5);
  assert.deepEqual(locks[3], { waiter: true, pid: 9680, file: 'fe:00:9977886' });
  assert.deepEqual(locks[1], { waiter: false, pid: 7621, file: 'fe:00:811042' });
});

test('contention: a waiter on the file our holder locks', () => {
  const locks = parseProcLocks(LOCKS);
  const cases: [string, number, boolean][] = [
    ['a waiter on our file', 9676, true],
    ['no waiter on our file', 7621, false],
    ['we hold nothing (yet)', 1234, false],
    ['the waiter is not a holder', 9680, false],
  ];
  for (const [name, pid, want] of cases) assert.equal(lockContended(locks, pid), want, name);
});

const quiet: Logger = { info() {}, v() {}, warn() {}, error() {} };
const waitFor = (path: string): ChildProcess => spawn('flock', ['--exclusive', path, 'true'], { stdio: 'ignore' });

test('the lock is held (a second flock waits), and a waiter ends it with exitOnContention', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-lock-'));
  const path = join(dir, 'kubelet.lock');
  try {
    const held = await acquireLockFile(path, true, quiet);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const probe = spawnSyncLocked(path);
    assert.equal(await probe, 1, 'flock --nonblock fails while we hold it');
    const second = waitFor(path);
    const loss = await held.lost;
    assert.deepEqual(loss, { reason: 'another process waits for the lock file', contended: true });
    second.kill();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a deleted lock file ends it too', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-lock-'));
  const path = join(dir, 'kubelet.lock');
  try {
    const held = await acquireLockFile(path, true, quiet);
    unlinkSync(path);
    assert.equal(existsSync(path), false);
    assert.deepEqual(await held.lost, { reason: 'lock file deleted', contended: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an unopenable lock file is one line naming it', async () => {
  await assert.rejects(
    acquireLockFile('/nonexistent/dir/kubelet.lock', false, quiet),
    /^Error: unable to acquire file lock on "\/nonexistent\/dir\/kubelet.lock": ENOENT/,
  );
});

function spawnSyncLocked(path: string): Promise<number | null> {
  return new Promise((resolve) => spawn('flock', ['--nonblock', path, 'true']).once('exit', resolve));
}
