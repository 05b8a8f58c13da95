import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastLogText, terminationMessage } from './termination-message.ts';

const dir = mkdtempSync(join(tmpdir(), 'kts-tm-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string) => {
  writeFileSync(join(dir, name), content);
  return join(dir, name);
};
const log = (...lines: string[]) => lines.map((l, i) => `2026-11-22T12:00:0${i}.000000000Z stdout F ${l}\n`).join('');
const base = {
  exitCode: 1,
  reason: 'Error',
  path: '/dev/termination-log',
  policy: 'File',
  mounts: [] as { containerPath: string; hostPath: string }[],
  logPath: '',
};

test('terminationMessage: the file written at terminationMessagePath, its last 4096 bytes', () => {
  const hostPath = file('msg', 'x'.repeat(5000) + 'the end');
  const m = terminationMessage({ ...base, mounts: [{ containerPath: '/dev/termination-log', hostPath }] });
  assert.equal(m.length, 4096);
  assert.ok(m.endsWith('the end'));
});

test('terminationMessage: FallbackToLogsOnError reads the log only for a failure with no message written', () => {
  const logPath = file('0.log', log('first', 'boom: it failed'));
  const empty = [{ containerPath: '/dev/termination-log', hostPath: file('empty', '') }];
  assert.equal(terminationMessage({ ...base, policy: 'FallbackToLogsOnError', mounts: empty, logPath }), 'first\nboom: it failed\n');
  assert.equal(terminationMessage({ ...base, policy: 'FallbackToLogsOnError', exitCode: 0, mounts: empty, logPath }), '');
  assert.equal(terminationMessage({ ...base, policy: 'File', mounts: empty, logPath }), '');
});

test('lastLogText: at most 80 lines and 2048 bytes from the end', () => {
  const many = Buffer.from(log(...Array.from({ length: 9 }, (_, i) => `line${i}`)));
  assert.equal(lastLogText(many, 2), 'line7\nline8\n');
  assert.equal(lastLogText(many, 80, 6), 'line8\n');
});
