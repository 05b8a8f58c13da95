import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collectGeneric, collectPrometheus } from './collect.ts';
import { parseCollector, type GenericCollector, type PrometheusCollector } from './config.ts';

const NOW = 1_700_000_000_000;
const PAGE = [
  '# TYPE http_requests_total counter',
  'http_requests_total{code="200"} 10',
  'http_requests_total{code="500"} 2 1699999999000',
  '# TYPE temperature gauge',
  'temperature 21.5',
  '# TYPE rpc summary',
  'rpc_sum 3',
  'rpc_count 4',
].join('\n');

const prom = (config: object, limit = 100) =>
  parseCollector('prometheus', JSON.stringify({ endpoint: 'http://x/m', ...config }), limit) as PrometheusCollector;

test("collectPrometheus: every sample under its own name, the page's labels, its time or now; the families as specs", () => {
  const got = collectPrometheus(prom({}), PAGE, NOW);
  assert.deepEqual(got.errors, []);
  assert.deepEqual(got.specs, [
    { name: 'http_requests_total', type: 'cumulative', format: 'float', units: '' },
    { name: 'temperature', type: 'gauge', format: 'float', units: '' },
    { name: 'rpc', type: 'SUMMARY', format: 'float', units: '' },
  ]);
  assert.deepEqual(got.values.http_requests_total, [
    { floatValue: 10, labels: { code: '200' }, timestampMs: NOW },
    { floatValue: 2, labels: { code: '500' }, timestampMs: 1699999999000 },
  ]);
  assert.deepEqual(Object.keys(got.values), ['http_requests_total', 'temperature', 'rpc_sum', 'rpc_count']);
});

test('collectPrometheus: metrics_config keeps the names it lists; over the limit of names, nothing but an error', () => {
  const only = collectPrometheus(prom({ metrics_config: ['temperature'] }), PAGE, NOW);
  assert.deepEqual(
    only.specs.map((s) => s.name),
    ['temperature'],
  );
  assert.deepEqual(only.values, { temperature: [{ floatValue: 21.5, labels: {}, timestampMs: NOW }] });
  const over = collectPrometheus(prom({}, 3), PAGE, NOW);
  assert.deepEqual([over.values, over.errors], [{}, ['too many metrics to collect']]);
  const bad = collectPrometheus(prom({}), 'x{', NOW);
  assert.deepEqual(bad.values, {});
  assert.match(bad.errors[0] ?? '', /line 1/);
});

test('collectGeneric: the first group of each regex; an "int" metric in intValue; misses and bad numbers are errors', () => {
  const c = parseCollector(
    'nginx',
    JSON.stringify({
      endpoint: 'http://x/status',
      metrics_config: [
        { name: 'active', metric_type: 'gauge', data_type: 'int', regex: 'Active connections: ([0-9]+)' },
        { name: 'rate', metric_type: 'gauge', data_type: 'float', regex: 'rate=\\s*([^\\s]+)' },
        { name: 'missing', data_type: 'int', regex: 'Nope: ([0-9]+)' },
        { name: 'typeless', regex: 'Active (c)' },
        { name: 'bad', data_type: 'float', regex: 'bad=(\\S+)' },
      ],
    }),
    100,
  ) as GenericCollector;
  const got = collectGeneric(c, 'Active connections: 7 \nrate= 0.25\nbad=x', NOW);
  assert.deepEqual(got.values, {
    active: [{ floatValue: 0, intValue: 7, timestampMs: NOW }],
    rate: [{ floatValue: 0.25, timestampMs: NOW }],
    bad: [{ floatValue: 0, timestampMs: NOW }],
  });
  assert.deepEqual(got.errors, [
    "no match found for regexp: Nope: ([0-9]+) for metric 'missing' in config",
    "unexpected value of 'data_type' for metric 'typeless' in config ",
    'strconv.ParseFloat: parsing "x": invalid syntax',
  ]);
  assert.deepEqual(
    got.specs.map((s) => s.name),
    ['active', 'rate', 'missing', 'typeless', 'bad'],
  );
});
