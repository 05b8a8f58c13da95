import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeAtomically } from './atomic-writer.ts';
import type { Payload } from './payload.ts';

const payload = (o: Record<string, [string, number?]>): Payload =>
  new Map(Object.entries(o).map(([k, [d, m]]) => [k, { data: Buffer.from(d), mode: m ?? 0o644 }]));

test("upstream's layout: files in a timestamped dir, ..data swapped, visible names linked through it", (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aw-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.equal(writeAtomically(dir, payload({ a: ['1'], 'sub/b': ['2', 0o400] }), new Date('2026-11-22T16:00:05Z')), true);
  const ts = readlinkSync(join(dir, '..data'));
  assert.match(ts, /^\.\.2026_11_22_16_00_05\.\w+$/);
  assert.equal(readlinkSync(join(dir, 'a')), '..data/a');
  assert.equal(readlinkSync(join(dir, 'sub')), '..data/sub');
  assert.equal(readFileSync(join(dir, 'sub/b'), 'utf8'), '2');
  assert.equal((statSync(join(dir, 'sub/b')).mode & 0o777).toString(8), '400');
  assert.equal((statSync(join(dir, ts)).mode & 0o777).toString(8), '755');

  // Same content: nothing written.
  assert.equal(writeAtomically(dir, payload({ a: ['1'], 'sub/b': ['2', 0o400] })), false);
  assert.equal(readlinkSync(join(dir, '..data')), ts);

  // New content: a new dir, the old one and the names no longer in the payload gone.
  assert.equal(writeAtomically(dir, payload({ a: ['changed'], c: ['3'] }), new Date('2026-11-22T16:01:00Z')), true);
  const ts2 = readlinkSync(join(dir, '..data'));
  assert.notEqual(ts2, ts);
  assert.equal(readFileSync(join(dir, 'a'), 'utf8'), 'changed');
  assert.deepEqual(readdirSync(dir).sort(), ['..data', ts2, 'a', 'c'].sort());
  assert.ok(lstatSync(join(dir, 'c')).isSymbolicLink());
});

test('an invalid path is refused before anything is written', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aw-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.throws(() => writeAtomically(dir, payload({ '../x': ['1'] })), /must not contain/);
  assert.deepEqual(readdirSync(dir), []);
});
