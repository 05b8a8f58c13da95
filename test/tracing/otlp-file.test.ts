import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { SpanKind, childrenOf, parseSpans } from './otlp-file.ts';

// What the collector's file exporter (hack/tools/otelcol, v0.161.0) wrote for two exports of
// kubelet-ts's own tracer and OTLP exporter: a syncPod with two CRI calls under it (one failed)
// and a kubelet API server span, each export a line.
const FILE = readFileSync(new URL('../fixtures/fileexporter/traces.jsonl', import.meta.url), 'utf8');

test('parseSpans: every span of every line, with its resource and scope', () => {
  const spans = parseSpans(FILE);
  assert.equal(spans.length, 8);
  for (const s of spans) assert.deepEqual(s.resource, { 'service.name': 'kubelet', 'host.name': 'node-a' });
  const sync = spans.find((s) => s.name === 'syncPod')!;
  assert.deepEqual(sync, {
    resource: { 'service.name': 'kubelet', 'host.name': 'node-a' },
    scope: 'k8s.io/kubernetes/pkg/kubelet',
    traceId: '6795f6d7f0a1849fbc2337e7efa3b8fd',
    spanId: 'd9da8d503efa8fbc',
    parentSpanId: '',
    name: 'syncPod',
    kind: SpanKind.internal,
    attributes: {
      'k8s.pod.uid': '0b6f7a4e-3c1d-4e8a-9f2b-5d6c7e8f9a0b',
      'k8s.pod': 'ns1/traced',
      'k8s.pod.update_type': 'create',
      'k8s.namespace.name': 'ns1',
    },
    status: { code: 0, message: '' },
  });
  // Two syncPod traces and two server spans.
  assert.equal(new Set(spans.map((s) => s.traceId)).size, 4);
});

test('parseSpans: kinds, typed attribute values and statuses as the OTLP JSON encodes them', () => {
  const spans = parseSpans(FILE);
  const run = spans.find((s) => s.name === 'runtime.v1.RuntimeService/RunPodSandbox')!;
  assert.equal(run.kind, SpanKind.client);
  assert.equal(run.scope, 'go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc');
  assert.equal(run.attributes['rpc.system.name'], 'grpc');
  assert.equal(run.attributes['rpc.response.status_code'], 'OK');
  assert.deepEqual(run.status, { code: 0, message: '' });
  const create = spans.find((s) => s.name === 'runtime.v1.RuntimeService/CreateContainer')!;
  assert.equal(create.attributes.ok, true);
  assert.equal(create.attributes.ratio, 0.5);
  assert.deepEqual(create.status, { code: 2, message: 'not found' });
  const server = spans.find((s) => s.name === '/exec/{podNamespace}/{podID}/{containerName}')!;
  assert.equal(server.kind, SpanKind.server);
  // intValue is a decimal string in the file.
  assert.equal(server.attributes['http.response.status_code'], 302);
  assert.equal(server.attributes['http.route'], '/exec/{podNamespace}/{podID}/{containerName}');
});

test('parseSpans: a partial last line (the exporter flushes its buffer every second) waits', () => {
  const [first, second] = FILE.split('\n');
  assert.equal(parseSpans(`${first}\n${second!.slice(0, 100)}`).length, 4);
  assert.equal(parseSpans(first!).length, 0);
  assert.deepEqual(parseSpans(''), []);
});

test('childrenOf: the spans of the same trace whose parent is the span', () => {
  const spans = parseSpans(FILE);
  const [sync1, sync2] = spans.filter((s) => s.name === 'syncPod');
  assert.deepEqual(
    childrenOf(spans, sync1!).map((s) => s.spanId),
    ['9a47f0226c0ad334', '16b177f18458dac1'],
  );
  assert.deepEqual(
    childrenOf(spans, sync2!).map((s) => s.name),
    ['runtime.v1.RuntimeService/RunPodSandbox', 'runtime.v1.RuntimeService/CreateContainer'],
  );
  assert.deepEqual(childrenOf(spans, spans.find((s) => s.name.startsWith('/exec/'))!), []);
});
