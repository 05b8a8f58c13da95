import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQuantity, formatBinary, formatCPU } from './quantity.ts';

test('parses the quantity forms Kubernetes accepts', () => {
  const cases: [string, number | undefined][] = [
    ['100Mi', 100 * 2 ** 20],
    ['1Gi', 2 ** 30],
    ['500m', 0.5],
    ['2', 2],
    ['1.5', 1.5],
    ['2k', 2000],
    ['1e3', 1000],
    ['128974848', 128974848],
    ['10%', undefined],
    ['Mi', undefined],
    ['', undefined],
  ];
  for (const [q, want] of cases) assert.equal(parseQuantity(q), want, q);
});

test('formats like the apiserver canonicalises', () => {
  assert.equal(formatBinary(24607540 * 1024), '24607540Ki');
  assert.equal(formatBinary(2 ** 30), '1Gi');
  assert.equal(formatBinary(1000), '1000');
  assert.equal(formatCPU(2), '2');
  assert.equal(formatCPU(1.9), '1900m');
});
