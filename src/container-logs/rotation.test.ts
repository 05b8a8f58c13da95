import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { criLogRuntime, diskLogFiles, rotateContainerLog, startLogRotation, type LogRuntime } from './rotation.ts';
import type { ContainerPhase, ContainerState } from '../container/types.ts';
import type { RuntimeClient } from '../cri/runtime-client.ts';

const quiet = { info() {}, v() {}, warn() {}, error() {} };

const scratch = mkdtempSync(join(tmpdir(), 'logrotate-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function setup() {
  const root = mkdtempSync(join(scratch, 'pods-'));
  const dir = join(root, 'ns_p_uid', 'c');
  mkdirSync(dir, { recursive: true });
  const log = join(dir, '0.log');
  const calls: string[] = [];
  let reopenFails = false;
  const runtime: LogRuntime = {
    async running() {
      return ['c1'];
    },
    async logPath() {
      return log;
    },
    async reopen(id) {
      calls.push(`reopen ${id}`);
      if (reopenFails) throw new Error('reopen failed');
      writeFileSync(log, '');
    },
  };
  return {
    root,
    dir,
    log,
    runtime,
    calls,
    failReopen: () => {
      reopenFails = true;
    },
  };
}

test('rotateContainerLog: a small log is left alone', async () => {
  const s = setup();
  writeFileSync(s.log, 'short\n');
  assert.equal(
    await rotateContainerLog('c1', {
      runtime: s.runtime,
      files: diskLogFiles,
      policy: { maxSize: 100, maxFiles: 3 },
      podLogsDir: s.root,
      log: quiet,
    }),
    'small',
  );
  assert.deepEqual(readdirSync(s.dir), ['0.log']);
});

test('rotateContainerLog: rotates, compresses the previous one, drops the oldest, reopens', async () => {
  const s = setup();
  writeFileSync(s.log, 'x'.repeat(200));
  writeFileSync(`${s.log}.20260101-000000.gz`, 'old');
  writeFileSync(`${s.log}.20260101-000010`, 'previous\n');
  const now = () => new Date(2026, 0, 1, 0, 0, 20);
  const r = await rotateContainerLog('c1', {
    runtime: s.runtime,
    files: diskLogFiles,
    policy: { maxSize: 100, maxFiles: 3 },
    podLogsDir: s.root,
    log: quiet,
    now,
  });
  assert.equal(r, 'rotated');
  assert.deepEqual(readdirSync(s.dir).sort(), ['0.log', '0.log.20260101-000010.gz', '0.log.20260101-000020']);
  assert.equal(gunzipSync(readFileSync(`${s.log}.20260101-000010.gz`)).toString(), 'previous\n');
  assert.equal(readFileSync(`${s.log}.20260101-000020`, 'utf8'), 'x'.repeat(200));
  assert.equal(readFileSync(s.log, 'utf8'), '');
  assert.deepEqual(s.calls, ['reopen c1']);
});

test('rotateContainerLog: a failed reopen renames the log back', async () => {
  const s = setup();
  writeFileSync(s.log, 'x'.repeat(200));
  s.failReopen();
  await assert.rejects(
    rotateContainerLog('c1', {
      runtime: s.runtime,
      files: diskLogFiles,
      policy: { maxSize: 100, maxFiles: 3 },
      podLogsDir: s.root,
      log: quiet,
    }),
    /reopen failed/,
  );
  assert.deepEqual(readdirSync(s.dir), ['0.log']);
  assert.equal(readFileSync(s.log, 'utf8').length, 200);
});

test('rotateContainerLog: logs outside podLogsDir are not touched', async () => {
  const s = setup();
  writeFileSync(s.log, 'x'.repeat(200));
  assert.equal(
    await rotateContainerLog('c1', {
      runtime: s.runtime,
      files: diskLogFiles,
      policy: { maxSize: 100, maxFiles: 3 },
      podLogsDir: join(s.root, 'other'),
      log: quiet,
    }),
    'skipped',
  );
  assert.deepEqual(s.calls, []);
});

test('startLogRotation: a pass rotates with bounded workers and counts; a failing container backs off alone', async () => {
  const s = setup();
  writeFileSync(s.log, 'x'.repeat(200));
  const seen: string[] = [];
  let inFlight = 0,
    maxInFlight = 0;
  const runtime: LogRuntime = {
    async running() {
      return ['c1', 'bad', 'c3'];
    },
    async logPath(id) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      if (id === 'bad') throw new Error('boom');
      return id === 'c1' ? s.log : '';
    },
    reopen: s.runtime.reopen,
  };
  const rot = startLogRotation(
    {
      runtime,
      policy: { maxSize: 100, maxFiles: 5 },
      podLogsDir: s.root,
      workers: 2,
      intervalMs: 10_000,
      log: quiet,
      observe: (r) => seen.push(r),
    },
    { loop: false },
  );
  await rot.pass();
  assert.deepEqual(seen.sort(), ['error', 'rotated']);
  assert.equal(maxInFlight, 2);
  await rot.pass(); // 'bad' is backing off; c1 is small now
  assert.deepEqual(seen.sort(), ['error', 'rotated']);
  rot.stop();
});

test("criLogRuntime: the running containers from the view's list at the monitor interval's age; a log path asked once, forgotten once it no longer runs", async () => {
  let running = ['a', 'b'];
  const asked: string[] = [];
  const ages: number[] = [];
  const cri = {
    containerStatus: async ({ containerId }: { containerId: string }) => {
      asked.push(containerId);
      return { status: { logPath: `/var/log/pods/x/${containerId}/0.log` } };
    },
  } as unknown as RuntimeClient;
  const container = (id: string, phase: ContainerPhase) => ({ id, phase }) as ContainerState;
  const pods = async (maxAgeMs: number) => {
    ages.push(maxAgeMs);
    const containers = [...running.map((id) => container(id, 'running')), container('done', 'exited'), container('new', 'created')];
    return new Map([['uid', { uid: 'uid', sandboxes: [], containers }]]);
  };
  const rt = criLogRuntime(cri, pods, 10_000);
  for (let pass = 0; pass < 3; pass++) for (const id of await rt.running()) await rt.logPath(id);
  assert.deepEqual(asked, ['a', 'b'], 'once each over three passes, and only the running ones');
  assert.deepEqual(ages, [10_000, 10_000, 10_000]);
  assert.equal(await rt.logPath('a'), '/var/log/pods/x/a/0.log');
  running = ['b'];
  await rt.running();
  running = ['a', 'b'];
  for (const id of await rt.running()) await rt.logPath(id);
  assert.deepEqual(asked, ['a', 'b', 'a'], 'a container that left the list is asked again');
  // The view's status call gave the path (RuntimeView keeps ContainerStatus's logPath): no call of its own.
  const known = (id: string) => ({ id, phase: 'running', logPath: `/var/log/pods/y/${id}/0.log` }) as ContainerState;
  const viewed = criLogRuntime(cri, async () => new Map([['uid', { uid: 'uid', sandboxes: [], containers: [known('k')] }]]), 10_000);
  for (const id of await viewed.running()) assert.equal(await viewed.logPath(id), '/var/log/pods/y/k/0.log');
  assert.deepEqual(asked, ['a', 'b', 'a'], 'no status call for a path the view has');
});
