import { test } from 'node:test';
import assert from 'node:assert/strict';
import { garbageToCollect, startMemoryReducer } from './reducer.ts';
import type { Logger } from '../log/log.ts';

const MB = 1 << 20;
const log = { info() {}, warn() {}, error() {}, v() {} } as unknown as Logger;

test('garbageToCollect: only once the heap holds the threshold above its live size', () => {
  const rows: [used: number, live: number, collect: boolean][] = [
    [20 * MB, 20 * MB, false],
    [27 * MB, 20 * MB, false],
    [28 * MB, 20 * MB, true],
    [60 * MB, 20 * MB, true],
  ];
  for (const [used, live, collect] of rows) assert.equal(garbageToCollect(used, live, 8 * MB), collect, `${used / MB} over ${live / MB}`);
});

test('memory reducer: collects when garbage piles up, then measures from the new floor; a heap V8 shrank itself lowers the floor', async () => {
  let used = 20 * MB;
  const collected: [number, number][] = [];
  const reducer = startMemoryReducer({
    log,
    intervalMs: 5,
    thresholdBytes: 8 * MB,
    heapUsed: () => used,
    gc: () => {
      used = 22 * MB; // what lives after
    },
    observe: (before, after) => collected.push([before / MB, after / MB]),
  });
  const tick = () => new Promise((r) => setTimeout(r, 30));
  await tick();
  assert.deepEqual(collected, [], 'nothing to collect');
  used = 31 * MB;
  await tick();
  assert.deepEqual(collected, [[31, 22]]);
  used = 16 * MB; // V8's own GC: the floor is now 16
  await tick();
  used = 25 * MB;
  await tick();
  assert.deepEqual(
    collected,
    [
      [31, 22],
      [25, 22],
    ],
    '9 MB above the new floor',
  );
  reducer.stop();
});

test('memory reducer: a gc() that throws stops the loop with a warning, and nothing else', async () => {
  const warnings: string[] = [];
  let calls = 0;
  const reducer = startMemoryReducer({
    log: { ...log, warn: (msg: string) => warnings.push(msg) } as unknown as Logger,
    intervalMs: 5,
    thresholdBytes: 1,
    heapUsed: (() => {
      let n = 0;
      return () => (n += MB);
    })(),
    gc: () => {
      calls++;
      throw new Error('no gc');
    },
  });
  await new Promise((r) => setTimeout(r, 60));
  reducer.stop();
  assert.equal(calls, 1);
  assert.deepEqual(warnings, ['Cannot collect garbage; the memory reducer stops']);
});
