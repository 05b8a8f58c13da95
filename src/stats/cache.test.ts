import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { logger } from '../log/log.ts';
import { sampleCache } from './cache.ts';
import { later } from './testing.ts';
import type { RawSample } from './sample.ts';

function collector() {
  let n = 0,
    now = 0;
  const calls: number[] = [];
  const collect = async (): Promise<RawSample> => {
    calls.push(now);
    n++;
    return { ...later, timeMs: now, rlimit: { curProc: n } };
  };
  return {
    collect,
    calls,
    setNow: (t: number) => {
      now = t;
    },
    now: () => now,
  };
}

test('the first sample is taken at once; requests share it while fresh', async () => {
  const c = collector();
  const cache = sampleCache(c.collect, { intervalMs: 60_000, log: logger('test'), now: c.now });
  const [a, b] = await Promise.all([cache.get(), cache.get()]);
  assert.equal(a.cur, b.cur);
  assert.equal(a.prev, undefined);
  assert.equal(c.calls.length, 1);
  cache.stop();
});

test('a stale sample is replaced on demand, keeping the old one for rates', async () => {
  const c = collector();
  const cache = sampleCache(c.collect, { intervalMs: 60_000, maxAgeMs: 12_000, log: logger('test'), now: c.now });
  const first = (await cache.get()).cur;
  c.setNow(11_000);
  assert.equal((await cache.get()).cur, first, 'still fresh');
  c.setNow(13_000);
  const { cur, prev } = await cache.get();
  assert.equal(prev, first);
  assert.equal(cur.timeMs, 13_000);
  assert.equal(c.calls.length, 2);
  cache.stop();
});

test('the background loop samples every interval until stopped', async () => {
  const c = collector();
  const cache = sampleCache(c.collect, { intervalMs: 20, log: logger('test'), now: c.now });
  await sleep(110);
  cache.stop();
  const n = c.calls.length;
  assert.ok(n >= 3 && n <= 7, `${n} samples in 110 ms at 20 ms`);
  await sleep(60);
  assert.equal(c.calls.length, n, 'no sample after stop');
});

test('a failing collector leaves the last good sample; none at all is an error; each sample is timed, ok or not', async () => {
  let fail = true;
  const timed: boolean[] = [];
  const cache = sampleCache(
    async () => {
      if (fail) throw new Error('boom');
      return later;
    },
    {
      intervalMs: 60_000,
      maxAgeMs: Infinity,
      log: { ...logger('test'), error: () => {} },
      observe: (seconds, ok) => timed.push(seconds >= 0 && ok),
    },
  );
  await assert.rejects(cache.get(), /no stats sample/);
  fail = false;
  assert.equal((await cache.get()).cur, later);
  assert.deepEqual(timed, [false, true]);
  cache.stop();
});
