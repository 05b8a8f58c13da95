// One collection of a container's application metrics (cAdvisor's Collect and GetSpec of its
// Prometheus and generic collectors), pure over the page fetched. Upstream fetches the page twice
// (GetSpec, then Collect); one fetch gives both here.
import type { Collector, GenericCollector, MetricSpec, PrometheusCollector } from './config.ts';
import { parseExposition } from './exposition.ts';

/** v1.MetricVal: a value, its Prometheus labels (the Prometheus collector's), its time. */
export interface MetricValue {
  floatValue: number;
  /** A generic collector's "int" metric: its value is here and floatValue stays 0, as cAdvisor's. */
  intValue?: number;
  labels?: Record<string, string>;
  timestampMs: number;
}

/** A container's custom metrics: the specs (Spec.CustomMetrics) and one collection's values (Stats.CustomMetrics). */
export interface CustomMetrics {
  specs: MetricSpec[];
  values: Record<string, MetricValue[]>;
}

export interface Collection {
  /** The specs the page declares (a Prometheus collector's); a generic collector's are its config's. */
  specs: MetricSpec[];
  values: Record<string, MetricValue[]>;
  errors: string[];
}

/** Prometheus's type to cAdvisor's (metricType): counter is cumulative, gauge gauge, others by name. */
const metricType = (t: string) => (t === 'COUNTER' ? 'cumulative' : t === 'GAUGE' ? 'gauge' : t);

/** Pure: PrometheusCollector's GetSpec and Collect over one page. */
export function collectPrometheus(c: PrometheusCollector, page: string, nowMs: number): Collection {
  const keep = (name: string) => !c.only || c.only.has(name);
  let parsed: ReturnType<typeof parseExposition>;
  try {
    parsed = parseExposition(page);
  } catch (e) {
    return { specs: [], values: {}, errors: [(e as Error).message] };
  }
  const specs = parsed.families
    .filter((f) => keep(f.name))
    .map((f): MetricSpec => ({ name: f.name, type: metricType(f.type), format: 'float', units: '' }));
  const values: Record<string, MetricValue[]> = {};
  for (const s of parsed.samples) {
    if (!keep(s.name)) continue;
    (values[s.name] ??= []).push({ floatValue: s.value, labels: s.labels, timestampMs: s.timestampMs ?? nowMs });
    // The limit is on metric names, and a page over it yields none.
    if (Object.keys(values).length > c.limit) return { specs, values: {}, errors: ['too many metrics to collect'] };
  }
  return { specs, values, errors: [] };
}

/** Pure: GenericCollector's Collect: each metric's regex on the page, its first group the value. */
export function collectGeneric(c: GenericCollector, page: string, nowMs: number): Collection {
  const values: Record<string, MetricValue[]> = {};
  const errors: string[] = [];
  for (const { spec, regex } of c.metrics) {
    const m = regex.exec(page);
    // (A regex without a group has no match[1]: Go's collector panics there; an error here.)
    if (!m || m[1] === undefined) {
      errors.push(`no match found for regexp: ${regex.source} for metric '${spec.name}' in config`);
      continue;
    }
    const text = m[1].trim();
    if (spec.format === 'float') {
      const v = Number(text);
      // strconv.ParseFloat's error leaves the value 0, still reported.
      if (text === '' || Number.isNaN(v)) errors.push(`strconv.ParseFloat: parsing "${text}": invalid syntax`);
      values[spec.name] = [{ floatValue: Number.isNaN(v) ? 0 : v, timestampMs: nowMs }];
    } else if (spec.format === 'int') {
      const ok = /^[+-]?\d+$/.test(text);
      if (!ok) errors.push(`strconv.ParseInt: parsing "${text}": invalid syntax`);
      values[spec.name] = [{ floatValue: 0, intValue: ok ? Number(text) : 0, timestampMs: nowMs }];
    } else errors.push(`unexpected value of 'data_type' for metric '${spec.name}' in config `);
  }
  return { specs: c.metrics.map((m) => m.spec), values, errors };
}

export const collect = (c: Collector, page: string, nowMs: number): Collection =>
  c.kind === 'prometheus' ? collectPrometheus(c, page, nowMs) : collectGeneric(c, page, nowMs);
