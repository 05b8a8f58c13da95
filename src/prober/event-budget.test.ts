import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EVENT_BURST, EVENT_REFILL_MS, takeEventToken, type Bucket } from './event-budget.ts';

test('takeEventToken: a burst of 25, then one per 5 minutes', () => {
  let b: Bucket | undefined;
  let sent = 0;
  for (let i = 0; i < 40; i++) {
    const r = takeEventToken(b, 1000 + i * 1000);
    b = r.bucket;
    if (r.ok) sent++;
  }
  assert.equal(sent, EVENT_BURST);
  assert.equal(takeEventToken(b, 1000 + EVENT_REFILL_MS - 1).ok, false);
  const r = takeEventToken(b, 1000 + EVENT_REFILL_MS);
  assert.equal(r.ok, true);
  assert.equal(takeEventToken(r.bucket, 1000 + EVENT_REFILL_MS + 1).ok, false);
  // A long quiet time refills the whole burst, no more.
  assert.deepEqual(takeEventToken(r.bucket, 1000 + 1000 * EVENT_REFILL_MS).bucket.tokens, EVENT_BURST - 1);
});
