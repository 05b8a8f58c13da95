import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoff, jittered } from './backoff.ts';

test('backoff doubles up to the maximum, then resets', () => {
  const b = backoff(100, 1000, 0);
  assert.deepEqual([b.next(), b.next(), b.next(), b.next(), b.next()], [100, 200, 400, 800, 1000]);
  b.reset();
  assert.equal(b.next(), 100);
});

test('jitter only lengthens, by at most the fraction', () => {
  const b = backoff(100, 1000, 0.5, () => 0.999);
  assert.equal(b.next(), 150);
  assert.equal(
    jittered(1000, 0.1, () => 0),
    1000,
  );
  assert.equal(
    jittered(1000, 0.1, () => 0.5),
    1050,
  );
});
