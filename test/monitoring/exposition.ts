// Prometheus's text exposition format (version 0.0.4) read back into samples: what a
// Prometheus server ingests from a scrape of the kubelet's /metrics and /metrics/cadvisor,
// for promtool's rule tests (promtool-input.ts). Mirrors what expfmt's TextParser
// (github.com/prometheus/common/expfmt, text_parse.go) accepts: `# TYPE` lines, label values
// with the \\, \" and \n escapes, +Inf/-Inf/NaN, an optional timestamp (ignored here: the
// test places each scrape at its own step).

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  /** The TYPE of the family the sample belongs to (a histogram's _bucket, _sum, _count included). */
  type: MetricType;
}

const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** Exposition value syntax (Go's ParseFloat plus expfmt's Inf spellings). */
export function parseValue(s: string): number {
  if (s === '+Inf' || s === 'Inf') return Number.POSITIVE_INFINITY;
  if (s === '-Inf') return Number.NEGATIVE_INFINITY;
  if (s === 'NaN') return Number.NaN;
  const v = Number(s);
  if (s === '' || Number.isNaN(v)) throw new Error(`not a sample value: ${JSON.stringify(s)}`);
  return v;
}

/** The family a sample name belongs to, given the TYPEs declared (histogram and summary suffixes). */
function familyType(name: string, types: Map<string, MetricType>): MetricType {
  const own = types.get(name);
  if (own) return own;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const t = types.get(name.slice(0, -suffix.length));
    if (t === 'histogram' || (t === 'summary' && suffix !== '_bucket')) return t;
  }
  return 'untyped';
}

/** The labels of `{a="x",b="y"}` starting at text[i] === '{'; returns them and the index after '}'. */
function parseLabels(line: string, start: number): [Record<string, string>, number] {
  const labels: Record<string, string> = {};
  let i = start + 1;
  for (;;) {
    while (line[i] === ' ' || line[i] === ',') i++;
    if (line[i] === '}') return [labels, i + 1];
    const eq = line.indexOf('=', i);
    if (eq < 0 || line[eq + 1] !== '"') throw new Error(`bad label in: ${line}`);
    const name = line.slice(i, eq).trim();
    let value = '';
    i = eq + 2;
    for (; i < line.length && line[i] !== '"'; i++) {
      if (line[i] !== '\\') {
        value += line[i];
        continue;
      }
      i++;
      value += line[i] === 'n' ? '\n' : line[i];
    }
    if (i >= line.length) throw new Error(`unterminated label value in: ${line}`);
    labels[name] = value;
    i++;
  }
}

/** Every sample of an exposition, in order. Throws on a line expfmt would refuse. */
export function parseExposition(text: string): Sample[] {
  const types = new Map<string, MetricType>();
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^#\s+TYPE\s+(\S+)\s+(\S+)/.exec(line);
      if (m && TYPES.has(m[2] as MetricType)) types.set(m[1], m[2] as MetricType);
      continue;
    }
    const brace = line.indexOf('{');
    const space = line.indexOf(' ');
    let name: string;
    let labels: Record<string, string> = {};
    let rest: string;
    if (brace >= 0 && (space < 0 || brace < space)) {
      name = line.slice(0, brace);
      const [l, end] = parseLabels(line, brace);
      labels = l;
      rest = line.slice(end).trim();
    } else {
      if (space < 0) throw new Error(`no value in: ${line}`);
      name = line.slice(0, space);
      rest = line.slice(space + 1).trim();
    }
    samples.push({ name, labels, value: parseValue(rest.split(/\s+/)[0]), type: familyType(name, types) });
  }
  return samples;
}
