// The Prometheus text format as cAdvisor's Prometheus collector reads an application's page
// (expfmt's TextParser behind SampleDecoder and its MetricFamily decoder): samples with their
// labels and value, and the families their TYPE lines declare. Pure.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  /** The sample's own timestamp (ms), when the line has one. */
  timestampMs?: number;
}

/** A family with samples, by expfmt's name for its type (COUNTER, GAUGE, SUMMARY, UNTYPED, HISTOGRAM, GAUGE_HISTOGRAM). */
export interface Family {
  name: string;
  type: string;
}

export interface Exposition {
  samples: Sample[];
  /** In the order their first sample came; a TYPE with no sample is no family (TextToMetricFamilies drops empty ones). */
  families: Family[];
}

const TYPES: Record<string, string> = {
  counter: 'COUNTER',
  gauge: 'GAUGE',
  summary: 'SUMMARY',
  untyped: 'UNTYPED',
  histogram: 'HISTOGRAM',
  gaugehistogram: 'GAUGE_HISTOGRAM',
};
/** The sample names a histogram's or summary's family holds besides its own. */
const SUFFIXES: Record<string, string[]> = {
  HISTOGRAM: ['_bucket', '_sum', '_count'],
  GAUGE_HISTOGRAM: ['_bucket', '_gsum', '_gcount'],
  SUMMARY: ['_sum', '_count'],
};

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*/;

/** Go's ParseFloat as expfmt takes values: +Inf, -Inf and NaN included. */
function parseValue(text: string): number {
  if (/^[+-]?inf$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^nan$/i.test(text)) return NaN;
  const v = Number(text);
  if (text === '' || Number.isNaN(v)) throw new Error(`expected float as value, got "${text}"`);
  return v;
}

/** One sample line: name, {labels}, value, optional timestamp. Throws on a malformed line, as expfmt stops there. */
function parseSample(line: string, n: number): Sample {
  const name = NAME.exec(line)?.[0];
  if (!name) throw new Error(`text format parsing error in line ${n}: invalid metric name`);
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1).trimStart();
    while (!rest.startsWith('}')) {
      const key = LABEL.exec(rest)?.[0];
      if (!key) throw new Error(`text format parsing error in line ${n}: invalid label name`);
      rest = rest.slice(key.length).trimStart();
      if (!rest.startsWith('="')) throw new Error(`text format parsing error in line ${n}: expected '=' and '"' after label name "${key}"`);
      rest = rest.slice(2);
      let value = '';
      let i = 0;
      for (; i < rest.length && rest[i] !== '"'; i++) {
        if (rest[i] !== '\\') {
          value += rest[i];
          continue;
        }
        const c = rest[++i];
        if (c === 'n') value += '\n';
        else if (c === '\\' || c === '"') value += c;
        else throw new Error(`text format parsing error in line ${n}: invalid escape sequence '\\${c}'`);
      }
      if (i >= rest.length) throw new Error(`text format parsing error in line ${n}: unterminated label value`);
      labels[key] = value;
      rest = rest.slice(i + 1).trimStart();
      if (rest.startsWith(',')) rest = rest.slice(1).trimStart();
      else if (!rest.startsWith('}')) throw new Error(`text format parsing error in line ${n}: unexpected end of label value`);
    }
    rest = rest.slice(1);
  }
  const [value, ts, extra] = rest.trim().split(/[ \t]+/);
  if (extra !== undefined) throw new Error(`text format parsing error in line ${n}: spurious string after timestamp`);
  const sample: Sample = { name, labels, value: parseValue(value ?? '') };
  if (ts !== undefined) {
    const t = Number(ts);
    if (!Number.isInteger(t)) throw new Error(`text format parsing error in line ${n}: expected integer as timestamp, got "${ts}"`);
    sample.timestampMs = t;
  }
  return sample;
}

/** Pure: the page's samples and families. Throws at the first malformed line (expfmt's error, the scrape fails). */
export function parseExposition(text: string): Exposition {
  const declared = new Map<string, string>();
  const families = new Map<string, Family>();
  const samples: Sample[] = [];
  let current: { name: string; type: string } | undefined;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    if (line.startsWith('#')) {
      const [, keyword, name, type] = line.split(/[ \t]+/);
      if (keyword === 'TYPE' && name) {
        const t = TYPES[type ?? ''];
        if (!t) throw new Error(`text format parsing error in line ${i + 1}: unknown metric type "${type}"`);
        declared.set(name, t);
        current = { name, type: t };
      }
      return;
    }
    const s = parseSample(line, i + 1);
    samples.push(s);
    // A histogram's or summary's samples belong to the family of the TYPE line before them.
    const own =
      current && (s.name === current.name || SUFFIXES[current.type]?.some((x) => s.name === current!.name + x)) ? current : undefined;
    const family = own ?? { name: s.name, type: declared.get(s.name) ?? 'UNTYPED' };
    if (!families.has(family.name)) families.set(family.name, family);
  });
  return { samples, families: [...families.values()] };
}
