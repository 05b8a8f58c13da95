// Scrapes of the kubelet's /metrics and /metrics/cadvisor turned into `promtool test rules`
// input (https://prometheus.io/docs/prometheus/latest/configuration/unit_testing_rules/): each
// sample labelled as kube-prometheus-stack's kubelet ServiceMonitor has Prometheus label it
// (job="kubelet", metrics_path, node, instance, service, endpoint, namespace, with
// honorLabels: true), one test step per round of scrapes, plus the `up` series Prometheus
// writes for each target. promtool evaluates the chart's rules over exactly these series.

import { type MetricType, parseExposition } from './exposition.ts';

export type MetricsPath = '/metrics' | '/metrics/cadvisor';

/** One scrape of one of the kubelet's endpoints. */
export interface ScrapeTarget {
  path: MetricsPath;
  text: string;
}

/** Where the scraped kubelet is, as the ServiceMonitor's target labels name it. */
export interface KubeletTarget {
  node: string;
  /** host:port, as Prometheus's instance label (the kubelet Service's endpoint address). */
  instance: string;
  /** The kubelet Service the Prometheus Operator keeps in kube-system (its name in the chart). */
  service?: string;
}

export interface InputSeries {
  series: string;
  values: string;
}

/**
 * The target labels of a sample scraped from path: the kubelet ServiceMonitor's job (its
 * jobLabel k8s-app, "kubelet"), the metrics_path relabeling, the node relabeling from
 * __meta_kubernetes_endpoint_address_target_name, and what the Prometheus Operator's
 * endpoints discovery adds (instance, service, endpoint = the port name, namespace = the Service's).
 */
export function kubeletTargetLabels(path: MetricsPath, t: KubeletTarget): Record<string, string> {
  return {
    endpoint: 'https-metrics',
    instance: t.instance,
    job: 'kubelet',
    metrics_path: path,
    namespace: 'kube-system',
    node: t.node,
    service: t.service ?? 'kube-prometheus-stack-kubelet',
  };
}

/**
 * The labels Prometheus stores for a scraped sample under honor_labels: true (scrape.go's
 * mutateSampleLabels): the scraped labels win, an empty value is no label, and the target's
 * labels fill in those the sample lacks.
 */
export function withTargetLabels(scraped: Record<string, string>, target: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(target)) out[k] = v;
  for (const [k, v] of Object.entries(scraped)) {
    if (v !== '') out[k] = v;
  }
  return out;
}

/** A metric_relabel_configs rule of action drop: the values of sourceLabels joined by ';', matched whole. */
export interface DropRule {
  sourceLabels: string[];
  regex: string;
}

/**
 * The kubelet ServiceMonitor's metricRelabelings of the chart's default values.yaml
 * (kubelet.serviceMonitor.metricRelabelings and cAdvisorMetricRelabelings, all of action drop):
 * Prometheus never stores these samples, so the rules never see them.
 */
export const CHART_METRIC_RELABELINGS: Record<MetricsPath, DropRule[]> = {
  '/metrics': [
    {
      sourceLabels: ['__name__', 'le'],
      regex: '(csi_operations|storage_operation_duration)_seconds_bucket;(0.25|2.5|15|25|120|600)(\\.0)?',
    },
  ],
  '/metrics/cadvisor': [
    {
      sourceLabels: ['__name__'],
      regex: 'container_cpu_(cfs_throttled_seconds_total|load_average_10s|system_seconds_total|user_seconds_total)',
    },
    {
      sourceLabels: ['__name__'],
      regex:
        'container_fs_(io_current|io_time_seconds_total|io_time_weighted_seconds_total|reads_merged_total|sector_reads_total|sector_writes_total|writes_merged_total)',
    },
    { sourceLabels: ['__name__'], regex: 'container_memory_(mapped_file|swap)' },
    { sourceLabels: ['__name__'], regex: 'container_(file_descriptors|tasks_state|threads_max)' },
    { sourceLabels: ['__name__', 'scope'], regex: 'container_memory_failures_total;hierarchy' },
    { sourceLabels: ['__name__', 'interface'], regex: 'container_network_.*;(cali|cilium|cni|lxc|nodelocaldns|tunl).*' },
    { sourceLabels: ['__name__'], regex: 'container_spec.*' },
    { sourceLabels: ['id', 'pod'], regex: '.+;' },
  ],
};

/** Whether a drop rule removes a sample (relabel.go's Drop: the joined values match the anchored regex). */
export function dropped(name: string, labels: Record<string, string>, rules: DropRule[]): boolean {
  const all: Record<string, string> = { ...labels, __name__: name };
  return rules.some((r) => new RegExp(`^(?:${r.regex})$`).test(r.sourceLabels.map((l) => all[l] ?? '').join(';')));
}

/** A PromQL string literal's escaping (for label values in a series selector). */
function quote(v: string): string {
  return `"${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`;
}

/** name{a="x",b="y"}, labels sorted: promtool's series notation, and the key of a series. */
export function seriesSelector(name: string, labels: Record<string, string>): string {
  const ls = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${quote(labels[k])}`);
  return `${name}{${ls.join(',')}}`;
}

/** A sample value in promtool's series notation. */
export function formatValue(v: number): string {
  if (v === Number.POSITIVE_INFINITY) return 'Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  if (Number.isNaN(v)) return 'NaN';
  return String(v);
}

/** Counters (and a histogram's parts, a summary's _sum and _count) only grow between resets. */
function cumulative(type: MetricType, labels: Record<string, string>): boolean {
  return type === 'counter' || type === 'histogram' || (type === 'summary' && !('quantile' in labels));
}

/**
 * The steps after the last round, continuing a series as it went: a cumulative series by its mean
 * increase per step over the rounds (none after a reset), any other by its last value, a series
 * missing from the last round stays missing. Empty when steps is 0.
 */
export function extension(values: (number | undefined)[], type: MetricType, labels: Record<string, string>, steps: number): string {
  if (steps <= 0) return '';
  const last = values.at(-1);
  if (last === undefined) return `_x${steps}`;
  const first = values.findIndex((v) => v !== undefined);
  const firstValue = values[first] as number;
  const span = values.length - 1 - first;
  const delta = cumulative(type, labels) && span > 0 && Number.isFinite(last) && last >= firstValue ? (last - firstValue) / span : 0;
  // promtool's expanding notation: `a+bxn` is a, a+b, ..., a+n*b (n+1 samples).
  return `${formatValue(last + delta)}+${formatValue(delta)}x${steps - 1}`;
}

/**
 * promtool input_series of rounds of scrapes of one kubelet (a round: its scrapes of /metrics and
 * /metrics/cadvisor, one test step apart from the next round), with Prometheus's `up` = 1 for each
 * target scraped in a round, and each series continued for extendSteps more steps (extension()):
 * the alerts' `for` outlasts the minutes a test can scrape for. A series missing from a round
 * has `_` there. A sample repeated within one scrape keeps its first value, as Prometheus. The
 * samples the ServiceMonitor's metricRelabelings drop (relabelings) are left out.
 */
export function inputSeries(
  rounds: ScrapeTarget[][],
  target: KubeletTarget,
  extendSteps = 0,
  relabelings: Record<MetricsPath, DropRule[]> = CHART_METRIC_RELABELINGS,
): InputSeries[] {
  const byKey = new Map<string, { type: MetricType; labels: Record<string, string>; values: (number | undefined)[] }>();
  rounds.forEach((round, r) => {
    for (const scrape of round) {
      const targetLabels = kubeletTargetLabels(scrape.path, target);
      const samples = [...parseExposition(scrape.text), { name: 'up', labels: {}, value: 1, type: 'gauge' as const }];
      for (const s of samples) {
        const labels = withTargetLabels(s.labels, targetLabels);
        if (dropped(s.name, labels, relabelings[scrape.path])) continue;
        const key = seriesSelector(s.name, labels);
        let e = byKey.get(key);
        if (!e) {
          e = { type: s.type, labels, values: new Array(rounds.length).fill(undefined) };
          byKey.set(key, e);
        }
        if (e.values[r] === undefined) e.values[r] = s.value;
      }
    }
  });
  return [...byKey.entries()].map(([series, e]) => ({
    series,
    values: [...e.values.map((v) => (v === undefined ? '_' : formatValue(v))), extension(e.values, e.type, e.labels, extendSteps)]
      .filter((v) => v !== '')
      .join(' '),
  }));
}

/** A pod as kube-state-metrics's kube_pod_info shows it (the rules join container series on it for the node). */
export interface PodInfo {
  namespace: string;
  pod: string;
  node: string;
  uid: string;
}

/**
 * kube_pod_info of pods, as kube-state-metrics exposes it scraped by the chart's ServiceMonitor
 * (job="kube-state-metrics", honorLabels: true), 1 at every one of steps steps. The container_*
 * recording rules multiply by it: without kube-state-metrics they record nothing.
 */
export function kubePodInfoSeries(pods: PodInfo[], steps: number): InputSeries[] {
  return pods.map((p) => ({
    series: seriesSelector('kube_pod_info', { job: 'kube-state-metrics', namespace: p.namespace, node: p.node, pod: p.pod, uid: p.uid }),
    values: `1+0x${steps - 1}`,
  }));
}

/**
 * kube_node_info of a node, as kube-state-metrics exposes it (job="kube-state-metrics"), 1 at every
 * one of steps steps. KubeletDown fires on a node kube-state-metrics knows that no kubelet target
 * is up for: without it, KubeletDown could never fire, and its silence would prove nothing.
 */
export function kubeNodeInfoSeries(node: string, steps: number): InputSeries[] {
  return [{ series: seriesSelector('kube_node_info', { job: 'kube-state-metrics', node }), values: `1+0x${steps - 1}` }];
}

/** ALERTS series of alertname firing, counted by the labels in by and narrowed by matchers. */
export function firingAlertsExpr(alertname: string, matchers: Record<string, string>, by: string[]): string {
  const sel = seriesSelector('ALERTS', { alertname, alertstate: 'firing', ...matchers }).slice('ALERTS'.length);
  return `count by (${by.join(', ')}) (ALERTS${sel})`;
}

export interface AlertRuleTest {
  eval_time: string;
  alertname: string;
  exp_alerts: { exp_labels?: Record<string, string>; exp_annotations?: Record<string, string> }[];
}

export interface PromqlExprTest {
  expr: string;
  eval_time: string;
  exp_samples: { labels: string; value: number }[];
}

/** A promtool test file (one test group) over ruleFiles, evaluated every interval. */
export function promtoolTestFile(o: {
  ruleFiles: string[];
  interval: string;
  series: InputSeries[];
  alertRuleTests?: AlertRuleTest[];
  promqlExprTests?: PromqlExprTest[];
  name?: string;
}): Record<string, unknown> {
  return {
    rule_files: o.ruleFiles,
    evaluation_interval: o.interval,
    tests: [
      {
        name: o.name ?? 'kubelet-ts',
        interval: o.interval,
        input_series: o.series,
        alert_rule_test: o.alertRuleTests ?? [],
        promql_expr_test: o.promqlExprTests ?? [],
      },
    ],
  };
}
