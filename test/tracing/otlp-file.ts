// The OpenTelemetry Collector file exporter's output read back into spans, for
// test/e2e/tracing.test.ts: one OTLP/JSON ExportTraceServiceRequest a line, in the OTLP spec's
// JSON encoding (trace and span IDs in lowercase hex, enums as numbers, 64-bit integers as
// decimal strings, an attribute as {key, value: AnyValue}, an empty status as {}). The exporter
// writes through a buffer it flushes every second, so the last line may still be partial.

/** OTLP's Span.SpanKind values the kubelet's spans have. */
export const SpanKind = { internal: 1, server: 2, client: 3 } as const;

/** An attribute's value: a string, bool, int or double one as a JS value, any other as the file has it. */
export type Value = string | number | boolean | AnyValue;
export type Attributes = Record<string, Value>;

interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: string | number;
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface FileSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: KeyValue[];
  status?: { code?: number; message?: string };
}
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { scope?: { name?: string }; spans?: FileSpan[] }[];
  }[];
}

/** A span with its resource's attributes and its scope's name. */
export interface Span {
  resource: Attributes;
  scope: string;
  traceId: string;
  spanId: string;
  /** '' for a root. */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Attributes;
  /** code 0 (unset) when the file's status is empty. */
  status: { code: number; message: string };
}

// intValue is a string (int64) in OTLP/JSON and doubleValue may be one ("NaN", "Infinity"): the
// kubelet's are safe integers and finite doubles, so Number loses nothing.
function value(v: AnyValue): Value {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return Number(v.doubleValue);
  return v;
}

const attributes = (kvs: KeyValue[] = []): Attributes => Object.fromEntries(kvs.map((kv) => [kv.key, value(kv.value)]));

/** The spans of the file's complete lines, in the order the collector wrote them. */
export function parseSpans(text: string): Span[] {
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  return complete
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) =>
      ((JSON.parse(line) as ExportRequest).resourceSpans ?? []).flatMap((rs) => {
        const resource = attributes(rs.resource?.attributes);
        return (rs.scopeSpans ?? []).flatMap((ss) =>
          (ss.spans ?? []).map(
            (s): Span => ({
              resource,
              scope: ss.scope?.name ?? '',
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              kind: s.kind ?? 0,
              attributes: attributes(s.attributes),
              status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
            }),
          ),
        );
      }),
    );
}

/** The spans whose parent is `parent`. */
export const childrenOf = (spans: Span[], parent: Span): Span[] =>
  spans.filter((s) => s.traceId === parent.traceId && s.parentSpanId === parent.spanId);
