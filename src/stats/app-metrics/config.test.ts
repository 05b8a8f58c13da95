import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collectorConfigs, parseCollector } from './config.ts';

test('collectorConfigs: the io.cadvisor.metric.* labels, named by what follows the prefix', () => {
  assert.deepEqual(
    collectorConfigs({
      'io.cadvisor.metric.prometheus-app': '/etc/app.json',
      'io.kubernetes.pod.name': 'web',
      'io.cadvisor.metric.nginx': '/n.json',
    }),
    [
      { name: 'prometheus-app', path: '/etc/app.json' },
      { name: 'nginx', path: '/n.json' },
    ],
  );
  assert.deepEqual(collectorConfigs({}), []);
});

test('parseCollector: a Prometheus collector (its name starts "prometheus"): the URL, polling at least 1 s, the metrics to keep', () => {
  assert.deepEqual(parseCollector('prometheus', '{"endpoint": "http://localhost:9100/metrics"}', 100), {
    kind: 'prometheus',
    name: 'prometheus',
    url: 'http://localhost:9100/metrics',
    pollingMs: 1000,
    limit: 100,
  });
  // encoding/json matches keys case-insensitively; polling_frequency is a Duration in ns.
  const c = parseCollector(
    'Prometheus-x',
    '{"Endpoint": {"protocol": "https", "port": 9443, "path": "/m"}, "polling_frequency": 5000000000, "METRICS_CONFIG": ["a", "b"]}',
    2,
  );
  assert.deepEqual(c, {
    kind: 'prometheus',
    name: 'Prometheus-x',
    url: 'https://:9443/m',
    pollingMs: 5000,
    limit: 2,
    only: new Set(['a', 'b']),
  });
  assert.equal(parseCollector('prometheus', '{"endpoint": {"path": "/metrics"}}', 1, '10.1.2.3').url, 'http://10.1.2.3:8000/metrics');
  assert.equal(parseCollector('prometheus', '{"endpoint": {"port": "9100"}}', 1).url, 'http://:9100');
});

test('parseCollector: a generic collector: each metric its regex, polling the smallest given', () => {
  const c = parseCollector(
    'nginx',
    JSON.stringify({
      endpoint: 'http://127.0.0.1:8080/nginx_status',
      metrics_config: [
        {
          name: 'activeConnections',
          metric_type: 'gauge',
          units: 'number of active connections',
          data_type: 'int',
          polling_frequency: 10e9,
          regex: 'Active connections: ([0-9]+)',
        },
        {
          name: 'reading',
          metric_type: 'gauge',
          units: 'number of reading connections',
          data_type: 'int',
          polling_frequency: 3e9,
          regex: 'Reading: ([0-9]+) .*',
        },
      ],
    }),
    100,
  );
  assert.equal(c.kind, 'generic');
  assert.equal(c.pollingMs, 3000);
  assert.deepEqual(c.kind === 'generic' && c.metrics.map((m) => [m.spec, m.regex.source]), [
    [{ name: 'activeConnections', type: 'gauge', format: 'int', units: 'number of active connections' }, 'Active connections: ([0-9]+)'],
    [{ name: 'reading', type: 'gauge', format: 'int', units: 'number of reading connections' }, 'Reading: ([0-9]+) .*'],
  ]);
});

test("parseCollector: cAdvisor's errors", () => {
  const m = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ name: `m${i}`, data_type: 'int', regex: '(x)' })));
  for (const [name, text, limit, want] of [
    ['prometheus', '{', 100, /^Error: the config file is not valid JSON$/],
    ['prometheus', '[]', 100, /cannot unmarshal array/],
    ['prometheus', '{"endpoint": "u", "metrics_config": ["a", "b", "c"]}', 2, /^Error: too many metrics defined: 3 limit 2$/],
    ['prometheus', '{"endpoint": "u"}', -1, /metric count limit must be greater than or equal to 0/],
    ['prometheus', '{"endpoint": "u", "polling_frequency": "5s"}', 1, /into polling_frequency of type time.Duration/],
    ['prometheus', '{"endpoint": {"port": "x"}}', 1, /invalid number literal/],
    ['app', '{"endpoint": "u"}', 100, /^Error: no metrics provided in config$/],
    ['app', `{"endpoint": "u", "metrics_config": ${m(3)}}`, 2, /^Error: too many metrics defined: 3 limit: 2$/],
    ['app', '{"endpoint": "u", "metrics_config": [{"name": "x", "regex": "("}]}', 100, /^Error: invalid regexp \( for metric x$/],
  ] as const)
    assert.throws(() => parseCollector(name, text, limit), want, text);
});
