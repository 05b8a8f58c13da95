// OTLP's ExportTraceServiceRequest (proto/otlp/trace.proto) on the wire, with protobufjs's
// Writer as src/server/pprof/encode.ts writes profiles: one ResourceSpans for the kubelet (its
// resource attributes, upstream's service.name and host.name), one ScopeSpans per tracer scope.
import protobuf from 'protobufjs/minimal.js';
import type { AttributeValue, Attributes, Scope, SpanData } from './span.ts';

type Writer = protobuf.Writer;

// Span.flags: SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK, and _IS_REMOTE_MASK when the parent was
// remote, over the W3C sampled flag, as the Go SDK's exporter sets them.
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;
const SAMPLED = 0x01;

function anyValue(w: Writer, v: AttributeValue): void {
  if (typeof v === 'string') w.uint32((1 << 3) | 2).string(v);
  else if (typeof v === 'boolean') w.uint32(2 << 3).bool(v);
  else if (Number.isSafeInteger(v)) w.uint32(3 << 3).int64(v);
  else w.uint32((4 << 3) | 1).double(v);
}

function attributes(w: Writer, field: number, attrs: Attributes): void {
  for (const [key, value] of Object.entries(attrs)) {
    w.uint32((field << 3) | 2).fork();
    w.uint32((1 << 3) | 2).string(key);
    w.uint32((2 << 3) | 2).fork();
    anyValue(w, value);
    w.ldelim();
    w.ldelim();
  }
}

/** fixed64 of a bigint: protobufjs takes it as a Long-like {low, high}. */
function fixed64(w: Writer, field: number, v: bigint): void {
  w.uint32((field << 3) | 1).fixed64({ low: Number(v & 0xffffffffn) | 0, high: Number(v >> 32n) | 0, unsigned: true } as never);
}

function span(w: Writer, s: SpanData): void {
  w.uint32((1 << 3) | 2).bytes(s.traceId);
  w.uint32((2 << 3) | 2).bytes(s.spanId);
  if (s.parentSpanId) w.uint32((4 << 3) | 2).bytes(s.parentSpanId);
  w.uint32((5 << 3) | 2).string(s.name);
  w.uint32(6 << 3).int32(s.kind);
  fixed64(w, 7, s.startNs);
  fixed64(w, 8, s.endNs);
  attributes(w, 9, s.attributes);
  for (const e of s.events) {
    w.uint32((11 << 3) | 2).fork();
    fixed64(w, 1, e.timeNs);
    w.uint32((2 << 3) | 2).string(e.name);
    attributes(w, 3, e.attributes);
    w.ldelim();
  }
  if (s.status.code !== 0) {
    w.uint32((15 << 3) | 2).fork();
    if (s.status.message) w.uint32((2 << 3) | 2).string(s.status.message);
    w.uint32(3 << 3).int32(s.status.code);
    w.ldelim();
  }
  w.uint32((16 << 3) | 5).fixed32(HAS_IS_REMOTE | (s.parentRemote ? IS_REMOTE : 0) | SAMPLED);
}

/** The request exporting `spans`, for a process described by `resource`. */
export function encodeExportRequest(resource: Attributes, spans: SpanData[]): Uint8Array {
  const byScope = new Map<string, { scope: Scope; spans: SpanData[] }>();
  for (const s of spans) {
    const key = `${s.scope.name}\0${s.scope.version ?? ''}`;
    let group = byScope.get(key);
    if (!group) byScope.set(key, (group = { scope: s.scope, spans: [] }));
    group.spans.push(s);
  }
  const w = protobuf.Writer.create();
  w.uint32((1 << 3) | 2).fork();
  w.uint32((1 << 3) | 2).fork();
  attributes(w, 1, resource);
  w.ldelim();
  for (const { scope, spans: list } of byScope.values()) {
    w.uint32((2 << 3) | 2).fork();
    w.uint32((1 << 3) | 2).fork();
    w.uint32((1 << 3) | 2).string(scope.name);
    if (scope.version) w.uint32((2 << 3) | 2).string(scope.version);
    w.ldelim();
    for (const s of list) {
      w.uint32((2 << 3) | 2).fork();
      span(w, s);
      w.ldelim();
    }
    w.ldelim();
  }
  w.ldelim();
  return w.finish();
}
