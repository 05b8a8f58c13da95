import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TokenBucket } from './token-bucket.ts';

test('a token bucket gives its burst at once, then qps per second; 0 qps is no limit', () => {
  let now = 0;
  const b = new TokenBucket(2, 3, () => now);
  assert.deepEqual([b.tryAccept(), b.tryAccept(), b.tryAccept(), b.tryAccept()], [true, true, true, false]);
  now = 499;
  assert.equal(b.tryAccept(), false, 'not yet a whole token');
  now = 500;
  assert.equal(b.tryAccept(), true);
  now = 100_000;
  assert.deepEqual(
    [b.tryAccept(), b.tryAccept(), b.tryAccept(), b.tryAccept()],
    [true, true, true, false],
    'refilled to the burst, no more',
  );
  const free = new TokenBucket(0, 0, () => now);
  assert.ok(Array.from({ length: 1000 }, () => free.tryAccept()).every(Boolean));
  assert.equal(free.reserve(), 0);
});

test('reserve: each caller past the burst waits its turn', () => {
  let now = 0;
  const b = new TokenBucket(10, 2, () => now);
  assert.deepEqual([b.reserve(), b.reserve(), b.reserve(), b.reserve()], [0, 0, 100, 200]);
  now = 1000;
  assert.equal(b.reserve(), 0, 'a second later the bucket has refilled past the debt');
});
