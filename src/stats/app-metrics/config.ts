// cAdvisor's application metrics (its collector package), as the upstream kubelet's cAdvisor
// runs them (AppMetrics is in the kubelet's metric set): a container labelled
// io.cadvisor.metric.<name>=<path> names a collector config file inside the container; a <name>
// starting "prometheus" (or "Prometheus") scrapes a Prometheus page, any other fetches a page and
// takes one value a metric with a regular expression. Pure: the labels and the config file's text
// in, the collector out, or cAdvisor's error.

export const METRIC_LABEL_PREFIX = 'io.cadvisor.metric.';

/** cAdvisor's minimum polling frequency, 1 s. */
const MIN_POLLING_MS = 1000;

/** v1.MetricSpec: a metric's name, type ("gauge", "cumulative", or a Prometheus type's name), format and units. */
export interface MetricSpec {
  name: string;
  type: string;
  format: string;
  units: string;
}

interface Common {
  /** The label's name after the prefix. */
  name: string;
  url: string;
  pollingMs: number;
  /** --application-metrics-count-limit. */
  limit: number;
}

export interface PrometheusCollector extends Common {
  kind: 'prometheus';
  /** The metrics to keep (metrics_config); every one without it. */
  only?: Set<string>;
}

export interface GenericCollector extends Common {
  kind: 'generic';
  metrics: { spec: MetricSpec; regex: RegExp }[];
}

export type Collector = PrometheusCollector | GenericCollector;

/** Pure: GetCollectorConfigs: the collectors a container's labels name, with their config file's path in the container. */
export function collectorConfigs(labels: Record<string, string>): { name: string; path: string }[] {
  return Object.entries(labels)
    .filter(([k]) => k.startsWith(METRIC_LABEL_PREFIX))
    .map(([k, path]) => ({ name: k.slice(METRIC_LABEL_PREFIX.length), path }));
}

type Json = Record<string, unknown>;

/** encoding/json's field match: the exact key, else one equal under case folding. */
function field(o: Json, key: string): unknown {
  if (key in o) return o[key];
  const k = Object.keys(o).find((x) => x.toLowerCase() === key.toLowerCase());
  return k === undefined ? undefined : o[k];
}

const object = (v: unknown, what: string): Json => {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new Error(`json: cannot unmarshal ${what}`);
  return v as Json;
};
const str = (v: unknown, what: string): string => {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new Error(`json: cannot unmarshal ${typeof v} into ${what} of type string`);
  return v;
};
/** A time.Duration in JSON: an integer of nanoseconds. */
const durationMs = (v: unknown, what: string): number => {
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isInteger(v))
    throw new Error(`json: cannot unmarshal ${JSON.stringify(v)} into ${what} of type time.Duration`);
  return v / 1e6;
};

/**
 * EndpointConfig: a string is the URL; an object is a URL made of the container's IP address,
 * its protocol (default http), port (default 8000, a JSON number or a string of one) and path.
 * cAdvisor's containerd handler knows no IP address (GetContainerIPAddress returns ""), so on a
 * containerd node, upstream's, such a URL has no host and every scrape fails: kept.
 */
function endpointUrl(v: unknown, ip: string): string {
  if (typeof v === 'string') return v;
  const o = object(v, 'endpoint into collector.EndpointConfig');
  const port = field(o, 'port') ?? '8000';
  if (typeof port !== 'number' && !(typeof port === 'string' && port !== '' && !Number.isNaN(Number(port))))
    throw new Error(`json: invalid number literal, trying to unmarshal ${JSON.stringify(port)} into Number`);
  return `${str(field(o, 'protocol'), 'URLConfig.protocol') || 'http'}://${ip}:${port}${str(field(o, 'path'), 'URLConfig.path')}`;
}

function parseJson(text: string): Json {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    // (Not JSON.parse's message: it quotes the text, which may be a host file a link in the container names.)
    throw new Error('the config file is not valid JSON');
  }
  return object(v, `${Array.isArray(v) ? 'array' : typeof v} into Go value of type collector.Config`);
}

/**
 * Pure: NewPrometheusCollector or NewCollector over the config file's text. ip: the container's
 * address for an endpoint given as parts. Throws cAdvisor's error, which it logs and then runs
 * the container without the collector.
 */
export function parseCollector(name: string, text: string, limit: number, ip = ''): Collector {
  const o = parseJson(text);
  const url = endpointUrl(field(o, 'endpoint'), ip);
  const list = field(o, 'metrics_config') ?? [];
  if (!Array.isArray(list)) throw new Error('json: cannot unmarshal metrics_config: not an array');
  if (name.startsWith('prometheus') || name.startsWith('Prometheus')) {
    if (limit < 0) throw new Error('metric count limit must be greater than or equal to 0');
    const only = list.map((x) => str(x, 'metrics_config'));
    if (only.length > limit) throw new Error(`too many metrics defined: ${only.length} limit ${limit}`);
    return {
      kind: 'prometheus',
      name,
      url,
      pollingMs: Math.max(durationMs(field(o, 'polling_frequency'), 'polling_frequency'), MIN_POLLING_MS),
      limit,
      ...(only.length ? { only: new Set(only) } : {}),
    };
  }
  if (list.length === 0) throw new Error('no metrics provided in config');
  let polling = 0;
  const metrics = list.map((raw) => {
    const m = object(raw, 'metrics_config into collector.MetricConfig');
    const spec: MetricSpec = {
      name: str(field(m, 'name'), 'MetricConfig.name'),
      type: str(field(m, 'metric_type'), 'MetricConfig.metric_type'),
      format: str(field(m, 'data_type'), 'MetricConfig.data_type'),
      units: str(field(m, 'units'), 'MetricConfig.units'),
    };
    // The smallest polling frequency any metric gives; none given is the minimum.
    const p = durationMs(field(m, 'polling_frequency'), 'polling_frequency');
    if (p !== 0 && (polling === 0 || p < polling)) polling = p;
    const source = str(field(m, 'regex'), 'MetricConfig.regex');
    try {
      return { spec, regex: new RegExp(source) };
    } catch {
      throw new Error(`invalid regexp ${source} for metric ${spec.name}`);
    }
  });
  if (metrics.length > limit) throw new Error(`too many metrics defined: ${metrics.length} limit: ${limit}`);
  return { kind: 'generic', name, url, pollingMs: Math.max(polling, MIN_POLLING_MS), limit, metrics };
}
