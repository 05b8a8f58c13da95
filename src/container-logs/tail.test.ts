import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tailStart } from './tail.ts';

const rec = (i: number, tag = 'F', text = `line ${i}`) => `2026-11-22T12:00:00.${String(i).padStart(9, '0')}Z stdout ${tag} ${text}\n`;

const scratch = mkdtempSync(join(tmpdir(), 'tail-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

async function tail(content: string, n: number, chunkSize?: number): Promise<string> {
  const path = join(mkdtempSync(join(scratch, 'f-')), '0.log');
  writeFileSync(path, content);
  const f = await open(path);
  try {
    const size = (await f.stat()).size;
    return content.slice(await tailStart(f, size, n, chunkSize));
  } finally {
    await f.close();
  }
}

test('tailStart finds the last n lines, at any chunk size', async () => {
  const lines = Array.from({ length: 50 }, (_, i) => rec(i));
  const all = lines.join('');
  for (const chunk of [7, 64, 100, 4096]) {
    assert.equal(await tail(all, 3, chunk), lines.slice(-3).join(''), `chunk ${chunk}`);
    assert.equal(await tail(all, 0, chunk), '', `chunk ${chunk}`);
    assert.equal(await tail(all, 50, chunk), all, `chunk ${chunk}`);
    assert.equal(await tail(all, 500, chunk), all, `chunk ${chunk}`);
  }
});

test('tailStart counts partial records as one line with their full record', async () => {
  const content = rec(1) + rec(2, 'P', 'a') + rec(3, 'P', 'b') + rec(4, 'F', 'c') + rec(5);
  assert.equal(await tail(content, 2, 16), rec(2, 'P', 'a') + rec(3, 'P', 'b') + rec(4, 'F', 'c') + rec(5));
  assert.equal(await tail(content, 1, 16), rec(5));
});

test('tailStart ignores an unterminated last record and empty files', async () => {
  const content = rec(1) + rec(2) + '2026-11-22T12:00:03Z stdout F still being wri';
  assert.equal(await tail(content, 1), rec(2) + '2026-11-22T12:00:03Z stdout F still being wri');
  assert.equal(await tail('', 5), '');
});

test('tailStart on a file much larger than the chunk size reads only its end', async () => {
  const lines = Array.from({ length: 20_000 }, (_, i) => rec(i, 'F', 'x'.repeat(100)));
  const path = join(mkdtempSync(join(scratch, 'f-')), '0.log');
  writeFileSync(path, lines.join(''));
  const f = await open(path);
  let read = 0;
  const counting = new Proxy(f, {
    get: (t, p) =>
      p === 'read'
        ? (b: Buffer, o: number, l: number, pos: number) => {
            read += l;
            return t.read(b, o, l, pos);
          }
        : Reflect.get(t, p),
  });
  try {
    const size = (await f.stat()).size;
    const start = await tailStart(counting, size, 10, 4096);
    assert.equal(size - start, lines.slice(-10).join('').length);
    assert.ok(read <= 4096, `read ${read} bytes of ${size}`);
  } finally {
    await f.close();
  }
});
