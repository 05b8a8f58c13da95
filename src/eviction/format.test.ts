import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalQuantity, formatQuantity } from './format.ts';
import type { QuantityFormat } from './types.ts';

test('formatQuantity prints as Go resource.Quantity.String()', () => {
  const cases: [number, QuantityFormat, string][] = [
    [104857600, 'BinarySI', '100Mi'],
    [12288, 'BinarySI', '12Ki'],
    [2 ** 30, 'BinarySI', '1Gi'],
    [1536 * 2 ** 20, 'BinarySI', '1536Mi'],
    [1500, 'BinarySI', '1500'],
    // Below 1024 Go falls back to decimal, so 1000 bytes read "1k".
    [1000, 'BinarySI', '1k'],
    [0, 'BinarySI', '0'],
    [1073741840, 'BinarySI', '1073741840'],
    [-(2 ** 20), 'BinarySI', '-1Mi'],
    [2_000_000, 'DecimalSI', '2M'],
    [1_500_000, 'DecimalSI', '1500k'],
    [1024, 'DecimalSI', '1024'],
    [0.5, 'DecimalSI', '500m'],
  ];
  for (const [n, f, want] of cases) assert.equal(formatQuantity(n, f), want, `${n} ${f}`);
});

test('canonicalQuantity keeps the format the text was written in', () => {
  const cases: [string, string | undefined][] = [
    ['100Mi', '100Mi'],
    ['1024Mi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['500M', '500M'],
    ['1000', '1k'],
    ['128974848', '128974848'],
    ['0', '0'],
    ['lots', undefined],
  ];
  for (const [text, want] of cases) assert.equal(canonicalQuantity(text), want, text);
});
