// The encoder checked against the module upstream's exporter writes with
// (go.opentelemetry.io/proto/otlp, read by hack/tools/kube/otlp-check): every field lands where the
// module has it, none unknown. No Go: the test fails, it does not skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { encodeExportRequest } from './otlp.ts';
import type { SpanData } from './span.ts';

const GO = process.env.GO ?? '/usr/local/go/bin/go';
const TOOLS = new URL('../../hack/tools/kube', import.meta.url).pathname;

function decodeWithModule(bytes: Uint8Array): Record<string, any> {
  assert.ok(existsSync(GO), `go is needed to check the OTLP encoder: no go at ${GO} (set GO=/path/to/go)`);
  return JSON.parse(execFileSync(GO, ['run', './otlp-check'], { cwd: TOOLS, input: bytes, encoding: 'utf8', timeout: 300_000 }));
}

const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');
const parent: SpanData = {
  scope: { name: 'k8s.io/kubernetes/pkg/kubelet' },
  traceId: Buffer.from('0af7651916cd43dd8448eb211c80319c', 'hex'),
  spanId: Buffer.from('b7ad6b7169203331', 'hex'),
  parentRemote: false,
  name: 'syncPod',
  kind: 1,
  startNs: 1_764_800_000_123_456_789n,
  endNs: 1_764_800_001_000_000_000n,
  attributes: { 'k8s.pod.name': 'web-0', 'k8s.pod.update_type': 'create' },
  events: [],
  status: { code: 2, message: 'failed to start' },
};
const child: SpanData = {
  ...parent,
  scope: { name: 'go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc', version: '0.65.0' },
  spanId: Buffer.from('00f067aa0ba902b7', 'hex'),
  parentSpanId: parent.spanId,
  name: 'runtime.v1.RuntimeService/RunPodSandbox',
  kind: 3,
  attributes: { 'rpc.system.name': 'grpc', 'rpc.message.id': 1, ratio: 0.5, ok: true },
  events: [{ timeNs: 1_764_800_000_200_000_000n, name: 'message', attributes: { 'rpc.message.type': 'SENT' } }],
  status: { code: 0, message: '' },
};

test('ExportTraceServiceRequest: the module reads every field kubelet-ts writes', () => {
  const got = decodeWithModule(encodeExportRequest({ 'service.name': 'kubelet', 'host.name': 'node-1' }, [parent, child]));
  const rs = got.resourceSpans[0];
  assert.deepEqual(rs.resource.attributes, [
    { key: 'service.name', value: { stringValue: 'kubelet' } },
    { key: 'host.name', value: { stringValue: 'node-1' } },
  ]);
  assert.equal(rs.scopeSpans.length, 2, 'one ScopeSpans a scope');
  const [kubelet, grpc] = rs.scopeSpans;
  assert.deepEqual(kubelet.scope, { name: 'k8s.io/kubernetes/pkg/kubelet' });
  assert.deepEqual(grpc.scope, { name: 'go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc', version: '0.65.0' });
  const p = kubelet.spans[0];
  assert.equal(p.traceId, b64('0af7651916cd43dd8448eb211c80319c'));
  assert.equal(p.spanId, b64('b7ad6b7169203331'));
  assert.equal(p.parentSpanId, undefined);
  assert.equal(p.name, 'syncPod');
  assert.equal(p.kind, 'SPAN_KIND_INTERNAL');
  assert.equal(p.startTimeUnixNano, '1764800000123456789');
  assert.equal(p.endTimeUnixNano, '1764800001000000000');
  assert.deepEqual(p.status, { message: 'failed to start', code: 'STATUS_CODE_ERROR' });
  assert.equal(p.flags, 0x101);
  const c = grpc.spans[0];
  assert.equal(c.parentSpanId, b64('b7ad6b7169203331'));
  assert.equal(c.kind, 'SPAN_KIND_CLIENT');
  assert.deepEqual(c.attributes, [
    { key: 'rpc.system.name', value: { stringValue: 'grpc' } },
    { key: 'rpc.message.id', value: { intValue: '1' } },
    { key: 'ratio', value: { doubleValue: 0.5 } },
    { key: 'ok', value: { boolValue: true } },
  ]);
  assert.deepEqual(c.events, [
    { timeUnixNano: '1764800000200000000', name: 'message', attributes: [{ key: 'rpc.message.type', value: { stringValue: 'SENT' } }] },
  ]);
  assert.equal(c.status, undefined, 'an unset status is left out');
});
