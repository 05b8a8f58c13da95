// KubeletConfiguration `tracing` against a real collector, as an operator sets it up: the
// OpenTelemetry Collector (hack/build-addons.sh otelcol, from the Go module proxy: its OTLP
// receiver and file exporter, test/e2e/otelcol.yaml) takes the kubelet's OTLP spans on
// localhost:4317 and writes them as OTLP JSON to a file, where the test finds what a trace
// viewer would show: a pod's start as upstream's kubelet traces it, a syncPod span with the
// pod's attributes and the CRI calls it made as its children, under service "kubelet" and the
// node's host.name; a `kubectl exec` as the kubelet API's server span with the runtime's Exec
// under it. With no sampling rate, nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { SpanKind, childrenOf, parseSpans } from '../tracing/otlp-file.ts';
import {
  CACHE,
  ROOT,
  clients,
  ensureStack,
  eventually,
  kubectl,
  nodeName,
  pinned,
  podSpec,
  restartKubelet,
  runHack,
  withNamespace,
} from './stack.ts';

// Where the config's receiver listens: the kubelet's `endpoint` localhost:4317.
const RECEIVER = { host: '127.0.0.1', port: 4317 };
// Left after the run, to read; the exporter truncates it when it starts.
const SPANS = `${ROOT}/_output/local/otelcol-spans.jsonl`;
const LOG = `${ROOT}/_output/local/logs/otelcol.log`;
let collector: ChildProcess | undefined;

/** Something accepts connections on the receiver's address. */
const listening = () =>
  new Promise<boolean>((resolve) => {
    const socket = connect(RECEIVER)
      .once('connect', () => {
        socket.destroy();
        resolve(true);
      })
      .once('error', () => resolve(false));
  });

before(async () => {
  ensureStack();
  // make test builds it in the background (Makefile E2E_BG_BUILD); this waits for that build.
  runHack('build-addons.sh', 'the OpenTelemetry Collector could not be built', 40 * 60_000, false, ['otelcol']);
  if (await listening()) throw new Error('something already listens on 127.0.0.1:4317 (a collector left running?): stop it first');
  // Removed first, so that a collector that fails to start leaves no spans of an earlier run.
  rmSync(SPANS, { force: true });
  const log = openSync(LOG, 'w');
  collector = spawn(`${CACHE}/otelcol-${pinned('OTELCOL_VERSION')}/bin/otelcol`, ['--config', `${ROOT}/test/e2e/otelcol.yaml`], {
    stdio: ['ignore', log, log],
    env: { ...process.env, KTS_OTLP_FILE: SPANS },
  });
  await eventually('the collector listening on :4317 (see _output/local/logs/otelcol.log)', 60_000, async () => {
    if (collector?.exitCode !== null) throw new Error(`otelcol exited with ${collector?.exitCode}: see _output/local/logs/otelcol.log`);
    // The exporter opens its file before the receiver listens.
    return (await listening()) && existsSync(SPANS);
  });
});

after(async () => {
  restartKubelet();
  if (collector?.exitCode === null) {
    const exited = new Promise((r) => collector!.once('exit', r));
    collector.kill();
    await exited;
  }
});

/** Every span the collector has written so far. */
const spans = () => parseSpans(readFileSync(SPANS, 'utf8'));

/** The syncPod spans of the pod NAMESPACE/NAME. */
const syncPodSpans = (pod: string) => spans().filter((s) => s.name === 'syncPod' && s.attributes['k8s.pod'] === pod);

async function runPod(ns: string, name: string) {
  const { core } = clients();
  await core.createNamespacedPod({ namespace: ns, body: podSpec(name) });
  await eventually(`${name} Running`, 60_000, async () => {
    const p = await core.readNamespacedPod({ name, namespace: ns });
    return p.status?.phase === 'Running';
  });
}

test("tracing at a million per million: a pod's start is a syncPod span in the collector's file, the CRI calls its children", () =>
  withNamespace(async (ns) => {
    restartKubelet('tracing: {endpoint: "localhost:4317", samplingRatePerMillion: 1000000}\n');
    await runPod(ns, 'traced');
    // Batches go every 5 s. A span's children end before it, so they are written no later.
    const sync = await eventually('the pod\'s "create" syncPod span in the collector\'s file', 60_000, async () =>
      syncPodSpans(`${ns}/traced`).find((s) => s.attributes['k8s.pod.update_type'] === 'create'),
    );
    assert.equal(sync.attributes['k8s.namespace.name'], ns);
    assert.match(String(sync.attributes['k8s.pod.uid']), /^[0-9a-f-]{36}$/);
    assert.equal(sync.scope, 'k8s.io/kubernetes/pkg/kubelet');
    assert.equal(sync.kind, SpanKind.internal);
    assert.equal(sync.resource['service.name'], 'kubelet');
    assert.equal(sync.resource['host.name'], nodeName());
    const children = childrenOf(spans(), sync);
    const names = new Set(children.map((s) => s.name));
    for (const call of ['RunPodSandbox', 'CreateContainer', 'StartContainer'])
      assert.ok(names.has(`runtime.v1.RuntimeService/${call}`), `${call} under syncPod: ${[...names].join(', ')}`);
    const run = children.find((s) => s.name === 'runtime.v1.RuntimeService/RunPodSandbox')!;
    assert.equal(run.kind, SpanKind.client);
    assert.equal(run.attributes['rpc.system.name'], 'grpc');
    assert.equal(run.attributes['rpc.response.status_code'], 'OK');
    // Unset: otelgrpc sets an error status only on a failed call.
    assert.deepEqual(run.status, { code: 0, message: '' });

    // kubectl exec: the kubelet API's server span for upstream's route, the runtime's Exec under it.
    assert.equal(kubectl('exec', '-n', ns, 'traced', '--', 'echo', 'hi').trim(), 'hi');
    const route = '/exec/{podNamespace}/{podID}/{containerName}';
    const server = await eventually("the exec server span in the collector's file", 60_000, async () =>
      spans().find((s) => s.name === route && s.attributes['url.path'] === `/exec/${ns}/traced/main`),
    );
    assert.equal(server.kind, SpanKind.server);
    assert.equal(server.attributes['http.route'], route);
    const trace = spans().filter((s) => s.traceId === server.traceId);
    assert.ok(
      childrenOf(trace, server).some((s) => s.name === 'runtime.v1.RuntimeService/Exec'),
      `Exec under the server span: ${trace.map((s) => s.name).join(', ')}`,
    );
  }));

test("tracing with no sampling rate: roots are never sampled, nothing reaches the collector's file", () =>
  withNamespace(async (ns) => {
    restartKubelet('tracing: {endpoint: "localhost:4317"}\n');
    await runPod(ns, 'untraced');
    // Two export intervals, then still nothing.
    await new Promise((r) => setTimeout(r, 12_000));
    assert.deepEqual(syncPodSpans(`${ns}/untraced`), []);
  }));
