import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goFloat, withGoBucketBounds } from './go-float.ts';

test("goFloat: strconv.FormatFloat(x, 'g', -1, 64), as Go's expfmt writes numbers", () => {
  // Each printed by Go 1.25 (strconv.FormatFloat(f, 'g', -1, 64)).
  const cases: [number, string][] = [
    [0, '0'],
    [1, '1'],
    [0.005, '0.005'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [100000, '100000'],
    [999999, '999999'],
    [1e6, '1e+06'],
    [1048576, '1.048576e+06'],
    [16777216, '1.6777216e+07'],
    [25276194816, '2.5276194816e+10'],
    [-1.5e7, '-1.5e+07'],
    [1.9999999999999993, '1.9999999999999993'],
    [1e21, '1e+21'],
    [Number.POSITIVE_INFINITY, '+Inf'],
    [Number.NEGATIVE_INFINITY, '-Inf'],
    [Number.NaN, 'NaN'],
  ];
  for (const [x, want] of cases) assert.equal(goFloat(x), want, String(x));
});

test('withGoBucketBounds: only the le labels JavaScript writes otherwise are rewritten', () => {
  const text = [
    'rest_client_request_size_bytes_bucket{host="h",verb="GET",le="262144"} 3',
    'rest_client_request_size_bytes_bucket{host="h",verb="GET",le="1048576"} 3',
    'rest_client_request_size_bytes_bucket{host="h",verb="GET",le="16777216"} 3',
    'x_bucket{le="0.00001"} 1',
    'x_bucket{le="+Inf"} 3',
    'machine_memory_bytes 25276194816',
  ].join('\n');
  assert.equal(
    withGoBucketBounds(text),
    [
      'rest_client_request_size_bytes_bucket{host="h",verb="GET",le="262144"} 3',
      'rest_client_request_size_bytes_bucket{host="h",verb="GET",le="1.048576e+06"} 3',
      'rest_client_request_size_bytes_bucket{host="h",verb="GET",le="1.6777216e+07"} 3',
      'x_bucket{le="1e-05"} 1',
      'x_bucket{le="+Inf"} 3',
      'machine_memory_bytes 25276194816',
    ].join('\n'),
  );
});
