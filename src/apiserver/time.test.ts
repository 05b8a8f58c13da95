import { test } from 'node:test';
import assert from 'node:assert/strict';
import { microTime, rfc3339 } from './time.ts';

test('metav1.Time and MicroTime', () => {
  const t = new Date('2026-11-24T20:41:42.987Z');
  assert.equal(rfc3339(t), '2026-11-24T20:41:42Z', 'truncated, not rounded');
  assert.equal(rfc3339(t.getTime()), '2026-11-24T20:41:42Z');
  assert.equal(microTime(t), '2026-11-24T20:41:42.987000Z');
});
