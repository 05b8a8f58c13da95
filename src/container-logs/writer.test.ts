import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCRILog } from './cri-log.ts';
import { LogWriter, type LogOptions } from './writer.ts';

const records = [
  '2026-11-22T12:00:01.5Z stdout F one\n',
  '2026-11-22T12:00:02Z stderr P tw',
  '2026-11-22T12:00:03Z stderr F o\n',
  '2026-11-22T12:00:04Z stdout F three\n',
];

function render(opts: LogOptions): string {
  const w = new LogWriter(opts);
  return records.map((r) => w.render(parseCRILog(Buffer.from(r))!)?.toString() ?? '').join('');
}

test('LogWriter applies since, timestamps and limitBytes as upstream', () => {
  const cases: { name: string; opts: LogOptions; want: string }[] = [
    { name: 'all', opts: {}, want: 'one\ntwo\nthree\n' },
    {
      name: 'timestamps prefix lines, not partial continuations',
      opts: { timestamps: true },
      want: '2026-11-22T12:00:01.500000000Z one\n2026-11-22T12:00:02.000000000Z two\n2026-11-22T12:00:04.000000000Z three\n',
    },
    { name: 'since skips older records', opts: { sinceNs: 1795348803000000000n }, want: 'o\nthree\n' },
    { name: 'limitBytes cuts mid-record', opts: { limitBytes: 6 }, want: 'one\ntw' },
    { name: 'limitBytes counts prefixes', opts: { limitBytes: 33, timestamps: true }, want: '2026-11-22T12:00:01.500000000Z on' },
  ];
  for (const c of cases) assert.equal(render(c.opts), c.want, c.name);
});

test('LogWriter is done once limitBytes is reached', () => {
  const w = new LogWriter({ limitBytes: 4 });
  w.render(parseCRILog(Buffer.from(records[0]!))!);
  assert.equal(w.done, true);
  assert.equal(w.render(parseCRILog(Buffer.from(records[3]!))!), undefined);
});
