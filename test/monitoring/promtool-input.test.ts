import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CHART_METRIC_RELABELINGS,
  dropped,
  extension,
  firingAlertsExpr,
  formatValue,
  inputSeries,
  kubeNodeInfoSeries,
  kubePodInfoSeries,
  kubeletTargetLabels,
  promtoolTestFile,
  seriesSelector,
  withTargetLabels,
} from './promtool-input.ts';

const TARGET = { node: 'n1', instance: '10.0.0.1:10250' };

test('kubeletTargetLabels: the chart ServiceMonitor labels of each endpoint', () => {
  assert.deepEqual(kubeletTargetLabels('/metrics/cadvisor', TARGET), {
    endpoint: 'https-metrics',
    instance: '10.0.0.1:10250',
    job: 'kubelet',
    metrics_path: '/metrics/cadvisor',
    namespace: 'kube-system',
    node: 'n1',
    service: 'kube-prometheus-stack-kubelet',
  });
  assert.equal(kubeletTargetLabels('/metrics', { ...TARGET, service: 'kubelet' }).service, 'kubelet');
});

test('withTargetLabels: honor_labels, the scraped labels win, an empty one is no label', () => {
  const cases: [Record<string, string>, Record<string, string>, Record<string, string>][] = [
    [{}, { job: 'kubelet', namespace: 'kube-system' }, { job: 'kubelet', namespace: 'kube-system' }],
    [{ namespace: 'ns' }, { job: 'kubelet', namespace: 'kube-system' }, { job: 'kubelet', namespace: 'ns' }],
    [
      { namespace: '', pod: '' },
      { job: 'kubelet', namespace: 'kube-system' },
      { job: 'kubelet', namespace: 'kube-system' },
    ],
    [{ job: 'other' }, { job: 'kubelet' }, { job: 'other' }],
  ];
  for (const [scraped, target, want] of cases) assert.deepEqual(withTargetLabels(scraped, target), want);
});

test('seriesSelector and formatValue: promtool series notation', () => {
  assert.equal(seriesSelector('m', { b: 'x"y', a: 'c\\d' }), 'm{a="c\\\\d",b="x\\"y"}');
  assert.equal(seriesSelector('up', {}), 'up{}');
  const cases: [number, string][] = [
    [Number.POSITIVE_INFINITY, 'Inf'],
    [Number.NEGATIVE_INFINITY, '-Inf'],
    [Number.NaN, 'NaN'],
    [1.5, '1.5'],
    [0, '0'],
  ];
  for (const [v, s] of cases) assert.equal(formatValue(v), s);
});

test('extension: counters go on at their mean rate, gauges stay, missing stays missing', () => {
  const cases: [string, (number | undefined)[], 'counter' | 'gauge' | 'histogram' | 'summary', Record<string, string>, number, string][] = [
    ['counter', [10, 20, 40], 'counter', {}, 5, '55+15x4'],
    ['counter from its first sample', [undefined, 10, 30], 'counter', {}, 2, '50+20x1'],
    ['counter after a reset', [100, 5], 'counter', {}, 3, '5+0x2'],
    ['histogram bucket', [1, 3], 'histogram', { le: '1' }, 2, '5+2x1'],
    ['summary quantile is a gauge', [1, 3], 'summary', { quantile: '0.5' }, 2, '3+0x1'],
    ['gauge', [150, 120], 'gauge', {}, 4, '120+0x3'],
    ['infinite gauge', [Number.POSITIVE_INFINITY], 'gauge', {}, 2, 'Inf+0x1'],
    ['missing in the last round', [1, undefined], 'gauge', {}, 3, '_x3'],
    ['no extension', [1, 2], 'counter', {}, 0, ''],
  ];
  for (const [what, values, type, labels, steps, want] of cases) assert.equal(extension(values, type, labels, steps), want, what);
});

test('inputSeries: rounds of both endpoints, target labels, up, gaps and extension', () => {
  const cadvisor = (v: number) =>
    `# TYPE container_cpu_cfs_periods_total counter\ncontainer_cpu_cfs_periods_total{container="c",namespace="ns",pod="p"} ${v}\n`;
  const metrics = (ttl: number) =>
    `# TYPE kubelet_certificate_manager_client_ttl_seconds gauge\nkubelet_certificate_manager_client_ttl_seconds ${ttl}\n`;
  const got = inputSeries(
    [
      [
        { path: '/metrics', text: metrics(100) },
        { path: '/metrics/cadvisor', text: cadvisor(10) },
      ],
      [{ path: '/metrics/cadvisor', text: cadvisor(30) + cadvisor(99) }],
    ],
    TARGET,
    2,
  );
  const common = 'endpoint="https-metrics",instance="10.0.0.1:10250",job="kubelet"';
  assert.deepEqual(got, [
    {
      series: `kubelet_certificate_manager_client_ttl_seconds{${common},metrics_path="/metrics",namespace="kube-system",node="n1",service="kube-prometheus-stack-kubelet"}`,
      values: '100 _ _x2',
    },
    {
      series: `up{${common},metrics_path="/metrics",namespace="kube-system",node="n1",service="kube-prometheus-stack-kubelet"}`,
      values: '1 _ _x2',
    },
    {
      series: `container_cpu_cfs_periods_total{container="c",${common},metrics_path="/metrics/cadvisor",namespace="ns",node="n1",pod="p",service="kube-prometheus-stack-kubelet"}`,
      values: '10 30 50+20x1',
    },
    {
      series: `up{${common},metrics_path="/metrics/cadvisor",namespace="kube-system",node="n1",service="kube-prometheus-stack-kubelet"}`,
      values: '1 1 1+0x1',
    },
  ]);
});

test('kubePodInfoSeries, kubeNodeInfoSeries, firingAlertsExpr and promtoolTestFile', () => {
  assert.deepEqual(kubePodInfoSeries([{ namespace: 'ns', pod: 'p', node: 'n1', uid: 'u' }], 3), [
    { series: 'kube_pod_info{job="kube-state-metrics",namespace="ns",node="n1",pod="p",uid="u"}', values: '1+0x2' },
  ]);
  assert.deepEqual(kubeNodeInfoSeries('n1', 2), [{ series: 'kube_node_info{job="kube-state-metrics",node="n1"}', values: '1+0x1' }]);
  assert.equal(
    firingAlertsExpr('CPUThrottlingHigh', { pod: 'p' }, ['namespace', 'pod']),
    'count by (namespace, pod) (ALERTS{alertname="CPUThrottlingHigh",alertstate="firing",pod="p"})',
  );
  assert.deepEqual(promtoolTestFile({ ruleFiles: ['r.yaml'], interval: '15s', series: [] }), {
    rule_files: ['r.yaml'],
    evaluation_interval: '15s',
    tests: [{ name: 'kubelet-ts', interval: '15s', input_series: [], alert_rule_test: [], promql_expr_test: [] }],
  });
});

test('dropped: the chart ServiceMonitor metricRelabelings', () => {
  const cad = CHART_METRIC_RELABELINGS['/metrics/cadvisor'];
  const met = CHART_METRIC_RELABELINGS['/metrics'];
  const cases: [string, string, Record<string, string>, boolean][] = [
    ['throttled periods kept', 'container_cpu_cfs_throttled_periods_total', { id: '/kubepods/p', pod: 'p' }, false],
    ['throttled seconds dropped', 'container_cpu_cfs_throttled_seconds_total', { id: '/kubepods/p', pod: 'p' }, true],
    ['a cgroup with no pod dropped', 'container_cpu_usage_seconds_total', { id: '/' }, true],
    ['no id, no pod kept', 'container_scrape_error', {}, false],
    ['hierarchy failures dropped', 'container_memory_failures_total', { id: '/x', pod: 'p', scope: 'hierarchy' }, true],
    ['container failures kept', 'container_memory_failures_total', { id: '/x', pod: 'p', scope: 'container' }, false],
    ['cni interface dropped', 'container_network_receive_bytes_total', { id: '/x', pod: 'p', interface: 'cni0' }, true],
    ['eth0 kept', 'container_network_receive_bytes_total', { id: '/x', pod: 'p', interface: 'eth0' }, false],
    ['spec dropped', 'container_spec_cpu_quota', { id: '/x', pod: 'p' }, true],
    ['prefix only is no match', 'xcontainer_spec_cpu_quota', { id: '/x', pod: 'p' }, false],
  ];
  for (const [what, name, labels, want] of cases) assert.equal(dropped(name, labels, cad), want, what);
  assert.equal(dropped('storage_operation_duration_seconds_bucket', { le: '2.5' }, met), true);
  assert.equal(dropped('storage_operation_duration_seconds_bucket', { le: '15.0' }, met), true);
  assert.equal(dropped('storage_operation_duration_seconds_bucket', { le: '1' }, met), false);
});

test('inputSeries: leaves out what the metricRelabelings drop', () => {
  const text = '# TYPE container_cpu_cfs_throttled_seconds_total counter\ncontainer_cpu_cfs_throttled_seconds_total{id="/k/p",pod="p"} 1\n';
  assert.deepEqual(
    inputSeries([[{ path: '/metrics/cadvisor', text }]], TARGET).map((s) => s.series.split('{')[0]),
    ['up'],
  );
});
