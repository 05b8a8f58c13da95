import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NO_TRACER, TracerProvider, parseTraceparent } from './tracer.ts';
import type { SpanData } from './span.ts';

const collect = () => {
  const spans: SpanData[] = [];
  return { spans, sink: { add: (s: SpanData) => void spans.push(s) } };
};
const hex = (b?: Uint8Array) => (b ? Buffer.from(b).toString('hex') : undefined);
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

test('a span started inside another is its child across awaits; each call out carries its traceparent', async () => {
  const { spans, sink } = collect();
  const tracer = new TracerProvider(1, sink).tracer({ name: 'k8s.io/kubernetes/pkg/kubelet' });
  let sent = '';
  await tracer.inSpan('syncPod', { 'k8s.pod.name': 'web' }, async () => {
    await new Promise((r) => setTimeout(r, 5));
    const call = tracer.startClient('runtime.v1.RuntimeService/RunPodSandbox', () => ({ 'rpc.system.name': 'grpc' }));
    sent = call.traceparent;
    call.end();
  });
  assert.deepEqual(
    spans.map((s) => s.name),
    ['runtime.v1.RuntimeService/RunPodSandbox', 'syncPod'],
  );
  const [call, sync] = spans as [SpanData, SpanData];
  assert.equal(hex(call.traceId), hex(sync.traceId));
  assert.equal(hex(call.parentSpanId), hex(sync.spanId));
  assert.equal(sync.parentSpanId, undefined);
  assert.equal(call.kind, 3);
  assert.equal(sync.kind, 1);
  const [, trace, span, flags] = sent.match(TRACEPARENT)!;
  assert.equal(trace, hex(call.traceId));
  assert.equal(span, hex(call.spanId));
  assert.equal(flags, '01');
  assert.ok(sync.endNs >= sync.startNs + 4_000_000n, 'the span covers the awaited work');
});

test('two syncs at once are two traces', async () => {
  const { spans, sink } = collect();
  const tracer = new TracerProvider(1, sink).tracer({ name: 's' });
  const step = (name: string) =>
    tracer.inSpan(name, {}, async () => {
      await new Promise((r) => setTimeout(r, 2));
      tracer.startClient(`${name}/call`, () => ({})).end();
    });
  await Promise.all([step('a'), step('b')]);
  const byName = new Map(spans.map((s) => [s.name, s]));
  assert.equal(hex(byName.get('a/call')!.parentSpanId), hex(byName.get('a')!.spanId));
  assert.equal(hex(byName.get('b/call')!.parentSpanId), hex(byName.get('b')!.spanId));
  assert.notEqual(hex(byName.get('a')!.traceId), hex(byName.get('b')!.traceId));
});

test('a throw is recorded (exception event, error status) and rethrown', async () => {
  const { spans, sink } = collect();
  const tracer = new TracerProvider(1, sink).tracer({ name: 's' });
  await assert.rejects(
    tracer.inSpan('syncPod', {}, async () => {
      throw new Error('no sandbox');
    }),
    /no sandbox/,
  );
  assert.deepEqual(spans[0]!.status, { code: 2, message: 'no sandbox' });
  assert.deepEqual(spans[0]!.events[0]!.attributes, { 'exception.type': 'error', 'exception.message': 'no sandbox' });
});

test('rate 0: nothing recorded, but the children of an unsampled root still carry its context (flag 00)', async () => {
  const { spans, sink } = collect();
  const tracer = new TracerProvider(0, sink).tracer({ name: 's' });
  let parentCtx = '';
  let childCtx = '';
  await tracer.inSpan('syncPod', {}, async (span) => {
    parentCtx = span.traceparent;
    const call = tracer.startClient('call', () => ({}));
    childCtx = call.traceparent;
    assert.equal(call.recording, false);
    call.end();
  });
  assert.equal(spans.length, 0);
  assert.match(childCtx, TRACEPARENT);
  assert.ok(childCtx.endsWith('-00'));
  assert.equal(childCtx.split('-')[1], parentCtx.split('-')[1], 'the same trace');
});

test('no tracing: nothing is made or sent', async () => {
  const call = NO_TRACER.startClient('call', () => ({}));
  assert.equal(call.traceparent, '');
  assert.equal(await NO_TRACER.inSpan('x', {}, async () => 7), 7);
});

test("traceparent as W3C TraceContext reads it: version 00's four fields; a later version's extra ones ignored; anything else no parent", () => {
  const T = '0af7651916cd43dd8448eb211c80319c';
  const S = 'b7ad6b7169203331';
  const cases: [string, string | undefined, boolean | undefined][] = [
    ['sampled', `00-${T}-${S}-01`, true],
    ['not sampled', `00-${T}-${S}-00`, false],
    ['a later version with more', `01-${T}-${S}-03-extra`, true],
    ['version 00 with more', `00-${T}-${S}-01-extra`, undefined],
    ['version ff', `ff-${T}-${S}-01`, undefined],
    ['a zero trace ID', `00-${'0'.repeat(32)}-${S}-01`, undefined],
    ['a zero span ID', `00-${T}-${'0'.repeat(16)}-01`, undefined],
    ['upper case', `00-${T.toUpperCase()}-${S}-01`, undefined],
    ['none', undefined, undefined],
  ];
  for (const [name, header, sampled] of cases) {
    const ctx = parseTraceparent(header);
    assert.equal(ctx?.sampled, sampled, name);
    if (ctx) assert.equal(Buffer.from(ctx.traceId).toString('hex'), T, name);
  }
});
