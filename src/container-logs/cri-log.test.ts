import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatTimestamp, isFullRecord, parseCRILog, parseRFC3339Ns } from './cri-log.ts';

test('parseCRILog reads full and partial records', () => {
  const cases: { line: string; want?: { stream: string; partial: boolean; content: string; timeNs: bigint } }[] = [
    {
      line: '2026-11-22T12:00:57.276476673Z stdout F hello\n',
      want: { stream: 'stdout', partial: false, content: 'hello\n', timeNs: 1795348857276476673n },
    },
    {
      line: '2026-11-22T12:00:57.276476673Z stderr P part\n',
      want: { stream: 'stderr', partial: true, content: 'part', timeNs: 1795348857276476673n },
    },
    // forward compatible tags: only the first one counts
    {
      line: '2026-11-22T12:00:57Z stdout P:x more\n',
      want: { stream: 'stdout', partial: true, content: 'more', timeNs: 1795348857000000000n },
    },
    {
      line: '2026-11-22T13:00:57.5+01:00 stdout F  two  spaces \n',
      want: { stream: 'stdout', partial: false, content: ' two  spaces \n', timeNs: 1795348857500000000n },
    },
    { line: '2026-11-22T12:00:57Z stdout F \n', want: { stream: 'stdout', partial: false, content: '\n', timeNs: 1795348857000000000n } },
    {
      line: '2026-11-22T12:00:57Z stdout F unterminated',
      want: { stream: 'stdout', partial: false, content: 'unterminated', timeNs: 1795348857000000000n },
    },
    { line: 'not a log line\n' },
    { line: '2026-11-22T12:00:57Z stdin F x\n' },
    { line: '2026-11-22 stdout F x\n' },
    { line: '2026-11-22T12:00:57Z stdout\n' },
  ];
  for (const c of cases) {
    const m = parseCRILog(Buffer.from(c.line));
    if (!c.want) {
      assert.equal(m, undefined, c.line);
      continue;
    }
    assert.ok(m, c.line);
    assert.deepEqual({ stream: m.stream, partial: m.partial, content: m.content.toString(), timeNs: m.timeNs }, c.want, c.line);
  }
});

test('parseRFC3339Ns keeps nanoseconds and offsets', () => {
  assert.equal(parseRFC3339Ns('1970-01-01T00:00:01.000000001Z'), 1_000_000_001n);
  assert.equal(parseRFC3339Ns('1970-01-01T01:00:00+01:00'), 0n);
  assert.equal(parseRFC3339Ns('1970-01-01T00:00:00.1234567891Z'), undefined);
  assert.equal(parseRFC3339Ns('yesterday'), undefined);
});

test('formatTimestamp pads to nine digits and keeps the offset, as upstream', () => {
  const cases: [string, string][] = [
    ['2026-11-22T12:00:57.276476673Z', '2026-11-22T12:00:57.276476673Z'],
    ['2026-11-22T12:00:57.27Z', '2026-11-22T12:00:57.270000000Z'],
    ['2026-11-22T12:00:57Z', '2026-11-22T12:00:57.000000000Z'],
    ['2026-11-22T12:00:57.1+00:00', '2026-11-22T12:00:57.100000000Z'],
    ['2026-11-22T12:00:57.1-05:00', '2026-11-22T12:00:57.100000000-05:00'],
  ];
  for (const [input, want] of cases) assert.equal(formatTimestamp(input), want);
});

test('isFullRecord reads the tag from the first bytes', () => {
  assert.equal(isFullRecord(Buffer.from('2026-11-22T12:00:57Z stdout F x')), true);
  assert.equal(isFullRecord(Buffer.from('2026-11-22T12:00:57Z stdout P x')), false);
  assert.equal(isFullRecord(Buffer.from('2026-11-22T12:00:57Z std')), false);
});
