import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TtlCache } from './ttl-cache.ts';

test('TtlCache expires entries and evicts the oldest when full', () => {
  let now = 0;
  const c = new TtlCache<string>(2, () => now);
  c.set('a', 'A', 100);
  c.set('b', 'B', 10);
  now = 50;
  assert.equal(c.get('a'), 'A');
  assert.equal(c.get('b'), undefined);
  c.set('b', 'B', 100);
  c.set('c', 'C', 100); // evicts a
  assert.deepEqual([c.get('a'), c.get('b'), c.get('c')], [undefined, 'B', 'C']);
});
