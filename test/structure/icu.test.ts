// The kubelet's own code leaves ICU's locale data alone: the node binary carries it in its pages,
// and the first localeCompare maps ~2 MB of them for good (collation tables; Intl's formatters
// more), resident on every node, where Go's kubelet compares bytes. Measured with the pages of
// icudt*_dat present in /proc/PID/pagemap: a bare node 0.4 MB, after one localeCompare 2.4 MB.
// Sorts use podutil's byCodeUnits, as Go orders strings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const SRC = join(import.meta.dirname, '../../src');

/** Where ICU is wanted: /statusz names the host's zone as Go's time.Format does. */
const ALLOWED = new Set(['server/zpages/handlers.ts']);

/** Pure: the calls into ICU's locale services a source text makes. */
export const icuCalls = (text: string): string[] =>
  text.match(/\.localeCompare\(|\bIntl\.|\.toLocale\w*String\(|\.normalize\(['"]N/g) ?? [];

test('icuCalls: collation, Intl and locale formatting; not a path normalize', () => {
  assert.deepEqual(icuCalls("a.localeCompare(b); new Intl.Collator(); d.toLocaleDateString(); s.normalize('NFC')"), [
    '.localeCompare(',
    'Intl.',
    '.toLocaleDateString(',
    ".normalize('N",
  ]);
  assert.deepEqual(icuCalls('path.normalize(p); a < b'), []);
});

test("src calls none of ICU's locale services outside the allowed files", () => {
  const found = (readdirSync(SRC, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !ALLOWED.has(f))
    .flatMap((f) => icuCalls(readFileSync(join(SRC, f), 'utf8')).map((c) => `${f}: ${c}`));
  assert.deepEqual(found, []);
});
