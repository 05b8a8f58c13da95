import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stalledMs, watchEventLoop } from './event-loop.ts';
import { type Fields, logger } from './log.ts';

test('stalledMs: a timer late by the threshold or more is a stall, a little late is not', () => {
  const cases: [number, number, number, number | undefined][] = [
    [1000, 1005, 1000, undefined],
    [1000, 1999, 1000, undefined],
    [1000, 2000, 1000, 1000],
    [1000, 16_500, 1000, 15_500],
    [1000, 900, 1000, undefined], // early (a coarse clock)
  ];
  for (const [due, now, threshold, want] of cases) assert.equal(stalledMs(due, now, threshold), want, `${due} ${now}`);
});

test('watchEventLoop: a loop held up for 1.2 s is logged as a warning with how long', async () => {
  const warned: unknown[] = [];
  const log = { ...logger('test'), warn: (msg: string, fields?: Fields) => warned.push({ msg, ...fields }) };
  const stop = watchEventLoop(log, { everyMs: 50, thresholdMs: 1000 });
  await new Promise((r) => setTimeout(r, 60));
  const until = Date.now() + 1200;
  while (Date.now() < until); // the loop stands still
  await new Promise((r) => setTimeout(r, 120));
  stop();
  assert.equal(warned.length, 1);
  assert.match(String((warned[0] as { seconds: string }).seconds), /^(1\.[1-9]|[2-4]\.\d)$/);
});
