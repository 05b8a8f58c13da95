import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { readContainerLog } from './reader.ts';
import type { LogOptions } from './writer.ts';
import { isOpen } from './testing.ts';

const rec = (sec: number, stream: string, tag: string, text: string) =>
  `2026-11-22T12:00:${String(sec).padStart(2, '0')}.000000001Z ${stream} ${tag} ${text}\n`;

const scratch = mkdtempSync(join(tmpdir(), 'logs-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function logFile(content = ''): string {
  const dir = join(mkdtempSync(join(scratch, 'p-')), 'app');
  mkdirSync(dir);
  const path = join(dir, '0.log');
  writeFileSync(path, content);
  return path;
}

/** Collects what the reader writes; `text()` is everything so far. */
function sink() {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  return { out, text: () => Buffer.concat(chunks).toString() };
}

async function read(content: string, opts: LogOptions): Promise<string> {
  const s = sink();
  await readContainerLog(logFile(content), s.out, opts);
  return s.text();
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await sleep(10);
  assert.ok(cond(), what);
}

const content =
  rec(1, 'stdout', 'F', 'out one') +
  rec(2, 'stderr', 'F', 'err one') +
  rec(3, 'stdout', 'P', 'long ') +
  rec(4, 'stdout', 'P', 'long ') +
  rec(5, 'stdout', 'F', 'line') +
  rec(6, 'stderr', 'F', 'err two');

test('readContainerLog merges stdout and stderr in order and joins partial records', async () => {
  assert.equal(await read(content, {}), 'out one\nerr one\nlong long line\nerr two\n');
});

test('readContainerLog options', async () => {
  const cases: { name: string; opts: LogOptions; want: string }[] = [
    { name: 'tailLines counts joined lines', opts: { tailLines: 2 }, want: 'long long line\nerr two\n' },
    { name: 'tailLines 0', opts: { tailLines: 0 }, want: '' },
    { name: 'limitBytes', opts: { limitBytes: 12 }, want: 'out one\nerr ' },
    { name: 'sinceNs', opts: { sinceNs: 1795348805000000000n }, want: 'line\nerr two\n' },
    {
      name: 'timestamps with tail',
      opts: { timestamps: true, tailLines: 1 },
      want: '2026-11-22T12:00:06.000000001Z err two\n',
    },
  ];
  for (const c of cases) assert.equal(await read(content, c.opts), c.want, c.name);
});

test('readContainerLog sends an unterminated last record when not following, skips malformed ones', async () => {
  assert.equal(await read('garbage\n' + rec(1, 'stdout', 'F', 'a') + '2026-11-22T12:00:02Z stdout F b', {}), 'a\nb');
});

test('readContainerLog rejects before writing when the log does not exist', async () => {
  const s = sink();
  await assert.rejects(readContainerLog('/nonexistent/0.log', s.out, {}), { code: 'ENOENT' });
});

test('follow sends what an appending writer adds, across records split between writes', async () => {
  const path = logFile(rec(1, 'stdout', 'F', 'first'));
  const s = sink();
  let running = true;
  const done = readContainerLog(path, s.out, { follow: true }, { running: () => running, pollMs: 50 });
  await until(() => s.text() === 'first\n', 'initial content');
  const more = rec(2, 'stdout', 'P', 'par') + rec(3, 'stdout', 'F', 'tial');
  appendFileSync(path, more.slice(0, 30)); // half a record
  await sleep(60);
  appendFileSync(path, more.slice(30));
  await until(() => s.text() === 'first\npartial\n', 'appended lines');
  for (let i = 0; i < 3; i++) {
    appendFileSync(path, rec(10 + i, 'stderr', 'F', `n${i}`));
    await sleep(5);
  }
  await until(() => s.text().endsWith('n2\n'), 'more lines');
  running = false;
  appendFileSync(path, rec(20, 'stdout', 'F', 'last words'));
  await done;
  assert.equal(s.text(), 'first\npartial\nn0\nn1\nn2\nlast words\n');
  assert.equal(isOpen(path), false);
});

test('follow with tailLines starts at the tail and keeps going', async () => {
  const path = logFile(content);
  const s = sink();
  let running = true;
  const done = readContainerLog(path, s.out, { follow: true, tailLines: 1 }, { running: () => running, pollMs: 20 });
  await until(() => s.text() === 'err two\n', 'tail');
  appendFileSync(path, rec(7, 'stdout', 'F', 'new'));
  await until(() => s.text() === 'err two\nnew\n', 'new line');
  running = false;
  await done;
});

test('follow stops and releases the file when the client goes away', async () => {
  const path = logFile(content);
  const s = sink();
  const done = readContainerLog(path, s.out, { follow: true }, { pollMs: 10_000 });
  await until(() => s.text().endsWith('err two\n'), 'content');
  assert.equal(isOpen(path), true);
  s.out.destroy();
  await done;
  assert.equal(isOpen(path), false);
});

test('follow stops on abort even while the client does not read', async () => {
  const path = logFile(rec(1, 'stdout', 'F', 'x'.repeat(60_000)).repeat(20));
  const out = new PassThrough({ highWaterMark: 1024 }); // never read: the reader waits for drain
  const ctl = new AbortController();
  const done = readContainerLog(path, out, { follow: true }, { signal: ctl.signal });
  await sleep(50);
  ctl.abort();
  await done;
  assert.equal(isOpen(path), false);
});

test('follow stops when the log is removed', async () => {
  const path = logFile(rec(1, 'stdout', 'F', 'a'));
  const s = sink();
  const done = readContainerLog(path, s.out, { follow: true }, { pollMs: 20 });
  await until(() => s.text() === 'a\n', 'content');
  rmSync(path);
  await done;
  assert.equal(s.text(), 'a\n');
});

test('follow continues into the new file when the log is rotated', async () => {
  const path = logFile(rec(1, 'stdout', 'F', 'old'));
  const s = sink();
  let running = true;
  const done = readContainerLog(path, s.out, { follow: true }, { running: () => running, pollMs: 20 });
  await until(() => s.text() === 'old\n', 'content');
  renameSync(path, `${path}.20261122-120000`);
  appendFileSync(`${path}.20261122-120000`, rec(2, 'stdout', 'F', 'late write to the old file'));
  writeFileSync(path, rec(3, 'stdout', 'F', 'new file'));
  await until(() => s.text().endsWith('new file\n'), 'rotated');
  running = false;
  await done;
  assert.equal(s.text(), 'old\nlate write to the old file\nnew file\n');
});

test('a log larger than the chunk size streams whole', async () => {
  const lines = Array.from({ length: 3000 }, (_, i) => rec(i % 60, i % 2 ? 'stderr' : 'stdout', 'F', `line ${i} ${'y'.repeat(50)}`));
  const out = await read(lines.join(''), {});
  assert.equal(out.split('\n').length, 3001);
  assert.ok(out.endsWith(`line 2999 ${'y'.repeat(50)}\n`));
});
