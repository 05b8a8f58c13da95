import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseExposition } from './exposition.ts';

test('parseExposition: samples with labels, escapes, timestamps and special values; families by TYPE, histograms as one', () => {
  const page = [
    '# HELP requests_total Requests.',
    '# TYPE requests_total counter',
    'requests_total{code="200",path="/a\\"b\\\\c\\nd"} 1027 1700000000000',
    'requests_total{code="500",} 3',
    '# TYPE latency histogram',
    'latency_bucket{le="0.1"} 2',
    'latency_bucket{le="+Inf"} 5',
    'latency_sum 0.7',
    'latency_count 5',
    '# TYPE unused gauge',
    'temperature -Inf',
    'ratio NaN',
    '',
  ].join('\n');
  const { samples, families } = parseExposition(page);
  assert.deepEqual(samples[0], {
    name: 'requests_total',
    labels: { code: '200', path: '/a"b\\c\nd' },
    value: 1027,
    timestampMs: 1700000000000,
  });
  assert.deepEqual(samples[1], { name: 'requests_total', labels: { code: '500' }, value: 3 });
  assert.deepEqual(
    samples.slice(2, 6).map((s) => [s.name, s.value]),
    [
      ['latency_bucket', 2],
      ['latency_bucket', 5],
      ['latency_sum', 0.7],
      ['latency_count', 5],
    ],
  );
  assert.equal(samples[6]?.value, -Infinity);
  assert.ok(Number.isNaN(samples[7]?.value));
  // "unused" has no sample: no family; an undeclared one is UNTYPED.
  assert.deepEqual(families, [
    { name: 'requests_total', type: 'COUNTER' },
    { name: 'latency', type: 'HISTOGRAM' },
    { name: 'temperature', type: 'UNTYPED' },
    { name: 'ratio', type: 'UNTYPED' },
  ]);
});

test('parseExposition: a malformed line is an error naming it', () => {
  for (const [page, want] of [
    ['x{a="1"', /line 1: unterminated label value|line 1: unexpected end/],
    ['ok 1\nx{a=1} 2', /line 2: expected '=' and '"'/],
    ['x abc', /expected float as value, got "abc"/],
    ['x 1 2 3', /spurious string after timestamp/],
    ['x 1 1.5', /expected integer as timestamp/],
    ['# TYPE x bogus\nx 1', /unknown metric type "bogus"/],
    ['9x 1', /invalid metric name/],
  ] as const)
    assert.throws(() => parseExposition(page), want, page);
});
