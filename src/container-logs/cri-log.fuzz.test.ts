// Bad input for the CRI log parser and reader (#18): any bytes in a log file, lines over the
// runtime's 16 KiB split, no final newline, binary content. The parser never throws and a
// record round-trips; the reader sends what a line-by-line model of upstream's ReadLogs sends.
// Seeded and bounded, so a failure replays.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { isFullRecord, parseCRILog } from './cri-log.ts';
import { readContainerLog } from './reader.ts';

const scratch = mkdtempSync(join(tmpdir(), 'cri-fuzz-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const timestamp = fc
  .record({
    ms: fc.integer({ min: 0, max: 4102444800000 - 1 }), // 1970 to 2100
    frac: fc.option(fc.stringMatching(/^[0-9]{1,9}$/), { nil: undefined }),
    zone: fc.constantFrom('Z', '+00:00', '-05:00', '+14:00'),
  })
  .map(({ ms, frac, zone }) => {
    const sign = zone === 'Z' ? 0 : zone.startsWith('-') ? -1 : 1;
    const offsetMin = sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)) || 0);
    const local = new Date(ms + offsetMin * 60_000).toISOString().slice(0, 19);
    const nanos = BigInt((frac ?? '').padEnd(9, '0'));
    return { text: `${local}${frac === undefined ? '' : `.${frac}`}${zone}`, ns: BigInt(Math.floor(ms / 1000)) * 1_000_000_000n + nanos };
  });
const content = fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b.map((x) => (x === 0x0a ? 0x20 : x))));
const record = fc.record({
  ts: timestamp,
  stream: fc.constantFrom('stdout', 'stderr'),
  tag: fc.constantFrom('F', 'P', 'F:x', 'P:y:z'),
  content,
});
const line = (r: { ts: { text: string }; stream: string; tag: string; content: Buffer }) =>
  Buffer.concat([Buffer.from(`${r.ts.text} ${r.stream} ${r.tag} `), r.content, Buffer.from('\n')]);

test('fuzz: parseCRILog never throws on any bytes', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 512 }), (b) => {
      const buf = Buffer.from(b);
      parseCRILog(buf);
      isFullRecord(buf);
    }),
    { seed: 0xc41, numRuns: 2000 },
  );
});

test('fuzz: a CRI record round-trips: timestamp, nanoseconds, stream, tag, binary content', () => {
  fc.assert(
    fc.property(record, (r) => {
      const msg = parseCRILog(line(r));
      assert.ok(msg);
      const partial = r.tag.startsWith('P');
      assert.deepEqual(
        { timestamp: msg.timestamp, timeNs: msg.timeNs, stream: msg.stream, partial: msg.partial, content: msg.content },
        {
          timestamp: r.ts.text,
          timeNs: r.ts.ns,
          stream: r.stream,
          partial,
          content: partial ? r.content : Buffer.concat([r.content, Buffer.from('\n')]),
        },
      );
      assert.equal(isFullRecord(line(r).subarray(0, 128)), !partial);
    }),
    { seed: 0xc42, numRuns: 1000 },
  );
});

/** What the reader sends without follow: each newline-ended record (and an unterminated last one) that parses, its content. */
function model(file: Buffer, maxRecord: number): Buffer {
  const out: Buffer[] = [];
  let start = 0;
  while (start < file.length) {
    const nl = file.indexOf(0x0a, start);
    const end = nl < 0 ? file.length : nl + 1;
    // A run of more than maxRecord bytes without a newline is dropped up to its newline.
    if (end - start <= maxRecord + 1 || nl < 0) {
      const msg = parseCRILog(file.subarray(start, end));
      if (msg) out.push(msg.content);
    }
    start = end;
  }
  return Buffer.concat(out);
}

async function readAll(path: string): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await readContainerLog(path, out, {});
  return Buffer.concat(chunks);
}

test('fuzz: readContainerLog sends what the line model sends, with garbage, long and unterminated lines', async () => {
  const piece = fc.oneof(
    { weight: 6, arbitrary: record.map(line) },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)) }, // binary garbage, any newlines
    // over the runtime's 16 KiB split and across the reader's 64 KiB chunks
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 16 << 10, max: 150 << 10 })
        .map((n) => line({ ts: { text: '2026-11-22T12:00:00Z' }, stream: 'stdout', tag: 'F', content: Buffer.alloc(n, 0x61) })),
    },
  );
  let i = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(piece, { maxLength: 30 }), fc.boolean(), async (pieces, cutLast) => {
      let file = Buffer.concat(pieces);
      if (cutLast && file.length > 0) file = file.subarray(0, file.length - 1); // no final newline
      const path = join(scratch, `${i++}.log`);
      writeFileSync(path, file);
      assert.deepEqual(await readAll(path), model(file, 1 << 20));
    }),
    { seed: 0xc43, numRuns: 120 },
  );
});

test('a newline-free run past 1 MiB is dropped up to its newline; the records around it are read', async () => {
  const path = join(scratch, 'runaway.log');
  const ok = (text: string) => `2026-11-22T12:00:00Z stdout F ${text}\n`;
  writeFileSync(path, Buffer.concat([Buffer.from(ok('before')), Buffer.alloc(3 << 20, 0x00), Buffer.from(`\n${ok('after')}`)]));
  assert.equal((await readAll(path)).toString(), 'before\nafter\n');
});

// Not upstream's (which counts raw records and sends to the end of the file): here a line is a
// full record with the partial ones before it, and N lines are sent, so partial records after
// the last full line (a long line still being written) are left out once N lines were found.
test('fuzz: tailLines N sends the last N full lines (a line: its partial records and the full one ending it)', async () => {
  let i = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(record, { maxLength: 40 }), fc.nat({ max: 45 }), async (records, n) => {
      const path = join(scratch, `tail-${i++}.log`);
      writeFileSync(path, Buffer.concat(records.map(line)));
      // The model: group records into lines ending at a full record; an unfinished last group is no line yet.
      const lines: Buffer[][] = [[]];
      for (const r of records) {
        const msg = parseCRILog(line(r))!;
        lines.at(-1)!.push(msg.content);
        if (!msg.partial) lines.push([]);
      }
      const full = lines.slice(0, -1);
      const want = Buffer.concat([...full.slice(Math.max(0, full.length - n)).flat(), ...(n > full.length ? lines.at(-1)! : [])]);
      const out = new PassThrough();
      const chunks: Buffer[] = [];
      out.on('data', (c: Buffer) => chunks.push(c));
      await readContainerLog(path, out, { tailLines: n });
      assert.deepEqual(Buffer.concat(chunks), want);
    }),
    { seed: 0xc44, numRuns: 150 },
  );
});
