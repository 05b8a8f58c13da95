import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prlimitArgs, setOpenFilesLimit, type Run } from './open-files.ts';

test('prlimitArgs: soft and hard both set, on this pid (upstream SetNumFiles)', () => {
  assert.deepEqual(prlimitArgs(4242, 1_000_000), ['--pid', '4242', '--nofile=1000000:1000000']);
});

test('setOpenFilesLimit: undefined when set, else why not', () => {
  const enoent = Object.assign(new Error('spawnSync prlimit ENOENT'), { code: 'ENOENT' });
  const rows: [string, ReturnType<Run>, string | undefined][] = [
    ['set', { status: 0, stderr: '' }, undefined],
    [
      'no CAP_SYS_RESOURCE to raise the hard limit',
      { status: 1, stderr: 'prlimit: failed to set the NOFILE resource limit: Operation not permitted\n' },
      'prlimit: failed to set the NOFILE resource limit: Operation not permitted',
    ],
    ['no prlimit on the host', { status: null, stderr: '', error: enoent }, 'prlimit: spawnSync prlimit ENOENT'],
    ['a silent failure', { status: 2, stderr: '' }, 'prlimit exited with 2'],
  ];
  for (const [name, result, want] of rows) {
    const calls: string[][] = [];
    const got = setOpenFilesLimit(1000, 7, (cmd, args) => {
      calls.push([cmd, ...args]);
      return result;
    });
    assert.equal(got, want, name);
    assert.deepEqual(calls, [['prlimit', '--pid', '7', '--nofile=1000:1000']], name);
  }
});

test('setOpenFilesLimit on this process: lowering the limits takes no privilege, and they hold', async () => {
  const { spawn } = await import('node:child_process');
  // A child of ours, so that this test process keeps its own limits.
  const child = spawn('sleep', ['30']);
  try {
    assert.equal(setOpenFilesLimit(4096, child.pid!), undefined);
    const limits = (await import('node:fs')).readFileSync(`/proc/${child.pid}/limits`, 'utf8');
    assert.match(limits, /Max open files\s+4096\s+4096\s+files/);
  } finally {
    child.kill();
  }
});
