import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PullSlots, pullLimit } from './pull-slots.ts';

const turn = () => new Promise((r) => setImmediate(r));

test('pullLimit: serial by default, else maxParallelImagePulls or no limit', () => {
  assert.equal(pullLimit(true, undefined), 1);
  assert.equal(pullLimit(false, 3), 3);
  assert.equal(pullLimit(false, undefined), Number.POSITIVE_INFINITY);
});

test('PullSlots: at most the limit at once, the rest in order; a release passes the slot on once', async () => {
  const slots = new PullSlots(2);
  const order: string[] = [];
  const a = await slots.acquire();
  const b = await slots.acquire();
  const noted = (name: string) => (release: () => void) => {
    order.push(name);
    return release;
  };
  const c = slots.acquire().then(noted('c'));
  const d = slots.acquire().then(noted('d'));
  await turn();
  assert.deepEqual(order, [], 'both slots taken');
  a();
  a(); // twice: still one slot
  await turn();
  assert.deepEqual(order, ['c']);
  b();
  await turn();
  assert.deepEqual(order, ['c', 'd']);
  (await c)();
  (await d)();
  const e = await slots.acquire(); // free again
  e();
});

test('PullSlots: a cancelled wait leaves the queue and throws; the others keep their turn', async () => {
  const slots = new PullSlots(1);
  const held = await slots.acquire();
  const ac = new AbortController();
  const cancelled = slots.acquire(ac.signal);
  let got = false;
  const next = slots.acquire().then((release) => {
    got = true;
    return release;
  });
  ac.abort(new Error('pod deleted'));
  await assert.rejects(cancelled, /pod deleted/);
  held();
  (await next)();
  assert.ok(got, 'the wait after the cancelled one got the slot');
  await assert.rejects(slots.acquire(AbortSignal.abort(new Error('gone'))), /gone/);
});
