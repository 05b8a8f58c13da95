// A finished span as plain data: what the tracer records and the OTLP encoder writes.

/** An attribute's value: OTLP's string, bool, int (a safe integer) or double. */
export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue>;

/** OTLP's Span.SpanKind: the kubelet's own work is internal, a call out a client. */
export const SpanKind = { internal: 1, server: 2, client: 3 } as const;
export type SpanKind = (typeof SpanKind)[keyof typeof SpanKind];

/** OTLP's Status.StatusCode: unset (fine) or error. */
export const StatusCode = { unset: 0, error: 2 } as const;

/** The instrumentation scope: upstream's Tracer name (a Go package), and its version. */
export interface Scope {
  name: string;
  version?: string;
}

export interface SpanEvent {
  timeNs: bigint;
  name: string;
  attributes: Attributes;
}

export interface SpanData {
  scope: Scope;
  /** 16 bytes. */
  traceId: Uint8Array;
  /** 8 bytes. */
  spanId: Uint8Array;
  parentSpanId?: Uint8Array;
  /** The parent came from another process (a traceparent header). */
  parentRemote: boolean;
  name: string;
  kind: SpanKind;
  startNs: bigint;
  endNs: bigint;
  attributes: Attributes;
  events: SpanEvent[];
  status: { code: number; message: string };
}

/** Now, in nanoseconds since the epoch (the clock of performance.now(), finer than Date.now()). */
export function nowNs(): bigint {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
}
