import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HEAP_TRIM_POLICY, startHeapTrim, trimDue } from './heap-trim.ts';

test('trimDue: once the used heap has grown by growthBytes over what the last collection left', () => {
  const MB = 1 << 20;
  const cases: [string, number, number, boolean][] = [
    ['the first look, a heap of 20 MB', 20 * MB, 0, true],
    ['grown 1 MB since', 21 * MB, 20 * MB, false],
    ['grown 4 MB since', 24 * MB, 20 * MB, true],
    ['smaller than it was left (V8 collected on its own)', 15 * MB, 20 * MB, false],
  ];
  for (const [name, used, left, want] of cases) assert.equal(trimDue(used, left, HEAP_TRIM_POLICY), want, name);
});

test('startHeapTrim: a full collection frees what is no longer referenced', async () => {
  let garbage: unknown[] | undefined = Array.from({ length: 50_000 }, (_, i) => ({ i, s: `item ${i}` }));
  const done: [number, number][] = [];
  const trim = startHeapTrim((seconds, freed) => done.push([seconds, freed]), { periodMs: 20, growthBytes: 1 });
  garbage = undefined;
  await new Promise((r) => setTimeout(r, 100));
  trim.stop();
  assert.equal(garbage, undefined);
  assert.ok(done.length >= 1, 'collected');
  assert.ok(done[0]![1] > 1 << 20, `the first collection freed the 50,000 objects: ${done[0]![1]} bytes`);
});
