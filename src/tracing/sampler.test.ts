import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rootSampled, samplingFraction } from './sampler.ts';

const id = (low8: string) => Buffer.from(`0102030405060708${low8}`, 'hex');

test("TraceIDRatioBased as the Go SDK's: the trace ID's low 8 bytes >> 1 under fraction * 2^63", () => {
  const cases: [string, string, number, boolean][] = [
    ['always at 1', 'ffffffffffffffff', 1, true],
    ['never at 0', '0000000000000000', 0, false],
    ['half: just under the bound', '7ffffffffffffffe', 0.5, true],
    ['half: at the bound', '8000000000000000', 0.5, false],
    ['a thousandth: small IDs only', '0000000000000001', 0.001, true],
    ['a thousandth: the top half never', 'c000000000000000', 0.001, false],
  ];
  for (const [name, low, fraction, want] of cases) assert.equal(rootSampled(id(low), fraction), want, name);
});

test('samplingRatePerMillion: none and 0 never sample', () => {
  assert.equal(samplingFraction(undefined), 0);
  assert.equal(samplingFraction(0), 0);
  assert.equal(samplingFraction(1_000_000), 1);
  assert.equal(samplingFraction(250_000), 0.25);
});
