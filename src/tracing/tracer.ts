// The kubelet's tracer provider, as component-base's tracing.NewProvider builds upstream's from
// KubeletConfiguration's `tracing`: spans of the scopes upstream's kubelet traces (its pod sync,
// the garbage collectors, each CRI call as otelgrpc's client span), sampled parent-based by
// trace ID ratio, batched to an OTLP collector. Without `tracing`, NO_TRACER: nothing is made,
// nothing propagated (upstream's noop provider).
//
// The current span is carried by AsyncLocalStorage, as Go carries it in a context: the CRI calls a
// sync makes are its children, and each call's traceparent carries the trace to the runtime.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomFillSync } from 'node:crypto';
import { rootSampled } from './sampler.ts';
import { type Attributes, type Scope, type SpanData, SpanKind, StatusCode, nowNs } from './span.ts';

export interface Span {
  /** Sampled: what is set on it is exported. */
  readonly recording: boolean;
  /** W3C traceparent of this span ('' for none), for the headers of a call it makes. */
  readonly traceparent: string;
  setAttributes(attrs: Attributes): void;
  /** span.SetName: a server span is named for its route once the router has found it. */
  setName(name: string): void;
  addEvent(name: string, attrs?: Attributes): void;
  /** span.RecordError and SetStatus(codes.Error, message). */
  fail(message: string, recordException?: boolean): void;
  end(): void;
}

export interface SpanOptions {
  kind?: SpanKind;
  /** An incoming request's traceparent header: the span's remote parent when it is valid. */
  remoteParent?: string;
}

export interface Tracer {
  /** fn in a new span, current for the async work fn starts; a throw is recorded and rethrown. */
  inSpan<T>(name: string, attrs: Attributes, fn: (span: Span) => Promise<T>, options?: SpanOptions): Promise<T>;
  /**
   * A client span for a call out of the process: a child of the current span; ended by the
   * caller. attrs is called only for a span that records (every CRI call and request passes here).
   */
  startClient(name: string, attrs: () => Attributes): Span;
}

const NO_SPAN: Span = { recording: false, traceparent: '', setAttributes() {}, setName() {}, addEvent() {}, fail() {}, end() {} };
export const NO_TRACER: Tracer = { inSpan: (_n, _a, fn) => fn(NO_SPAN), startClient: () => NO_SPAN };

/** Where finished spans go (the batch exporter). */
export interface SpanSink {
  add(span: SpanData): void;
}

export interface Context {
  traceId: Uint8Array;
  spanId: Uint8Array;
  sampled: boolean;
}

const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/** W3C TraceContext's traceparent (version 00 and what follows it); undefined when not valid. */
export function parseTraceparent(header: string | undefined): Context | undefined {
  const m = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-|$)/.exec(header?.trim() ?? '');
  if (!m || m[1] === 'ff' || /^0+$/.test(m[2]!) || /^0+$/.test(m[3]!)) return undefined;
  if (m[1] === '00' && m[5] === '-') return undefined;
  return { traceId: Buffer.from(m[2]!, 'hex'), spanId: Buffer.from(m[3]!, 'hex'), sampled: (Number.parseInt(m[4]!, 16) & 1) === 1 };
}

class RecordedSpan implements Span {
  readonly recording = true;
  readonly data: SpanData;
  readonly #sink: SpanSink;
  #ended = false;
  constructor(data: SpanData, sink: SpanSink) {
    this.data = data;
    this.#sink = sink;
  }
  get traceparent() {
    return `00-${hex(this.data.traceId)}-${hex(this.data.spanId)}-01`;
  }
  setAttributes(attrs: Attributes) {
    Object.assign(this.data.attributes, attrs);
  }
  setName(name: string) {
    this.data.name = name;
  }
  addEvent(name: string, attrs: Attributes = {}) {
    this.data.events.push({ timeNs: nowNs(), name, attributes: attrs });
  }
  fail(message: string, recordException = true) {
    if (recordException) this.addEvent('exception', { 'exception.type': 'error', 'exception.message': message });
    this.data.status = { code: StatusCode.error, message };
  }
  end() {
    if (this.#ended) return;
    this.#ended = true;
    this.data.endNs = nowNs();
    this.#sink.add(this.data);
  }
}

/** A span not sampled: it records nothing but keeps the trace's context for its children. */
function unsampledSpan(ctx: Context): Span {
  return { ...NO_SPAN, traceparent: `00-${hex(ctx.traceId)}-${hex(ctx.spanId)}-00` };
}

export class TracerProvider {
  readonly #fraction: number;
  readonly #sink: SpanSink;
  readonly #current = new AsyncLocalStorage<Context>();
  // IDs are cut from one random buffer, refilled when spent.
  #pool = Buffer.alloc(0);
  #at = 0;

  constructor(fraction: number, sink: SpanSink) {
    this.#fraction = fraction;
    this.#sink = sink;
  }

  tracer(scope: Scope): Tracer {
    return {
      inSpan: (name, attrs, fn, options = {}) => {
        const { span, ctx } = this.#start(scope, name, options.kind ?? SpanKind.internal, attrs, parseTraceparent(options.remoteParent));
        return this.#current.run(ctx, async () => {
          try {
            return await fn(span);
          } catch (e) {
            span.fail((e as Error)?.message ?? String(e));
            throw e;
          } finally {
            span.end();
          }
        });
      },
      startClient: (name, attrs) => this.#start(scope, name, SpanKind.client, attrs).span,
    };
  }

  #start(
    scope: Scope,
    name: string,
    kind: SpanKind,
    attrs: Attributes | (() => Attributes),
    remote?: Context,
  ): { span: Span; ctx: Context } {
    const parent = remote ?? this.#current.getStore();
    const traceId = parent?.traceId ?? this.#bytes(16);
    const spanId = this.#bytes(8);
    // ParentBased: a child follows its parent; a root is sampled by its trace ID.
    const sampled = parent ? parent.sampled : rootSampled(traceId, this.#fraction);
    const ctx = { traceId, spanId, sampled };
    if (!sampled) return { span: unsampledSpan(ctx), ctx };
    const data: SpanData = {
      scope,
      traceId,
      spanId,
      ...(parent ? { parentSpanId: parent.spanId } : {}),
      parentRemote: remote !== undefined,
      name,
      kind,
      startNs: nowNs(),
      endNs: 0n,
      attributes: typeof attrs === 'function' ? attrs() : { ...attrs },
      events: [],
      status: { code: StatusCode.unset, message: '' },
    };
    return { span: new RecordedSpan(data, this.#sink), ctx };
  }

  #bytes(n: number): Uint8Array {
    if (this.#at + n > this.#pool.length) {
      this.#pool = randomFillSync(Buffer.allocUnsafe(4096));
      this.#at = 0;
    }
    const out = this.#pool.subarray(this.#at, this.#at + n);
    this.#at += n;
    // An all-zero ID is invalid; 2^-64 odds, but the SDK regenerates too.
    return out.some((b) => b !== 0) ? out : this.#bytes(n);
  }
}
