// KubeletConfiguration `tracing` against a real collector, as an operator sets it up: Jaeger v2
// (hack/build-addons.sh jaeger, from the Go module proxy) takes the kubelet's OTLP spans on
// localhost:4317, and its query API shows what its UI would: a pod's start as upstream's
// kubelet traces it, a syncPod span with the pod's attributes and the CRI calls it made as its
// children, under service "kubelet" and the node's host.name; a `kubectl exec` as the kubelet
// API's server span with the runtime's Exec under it. With no sampling rate, nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { openSync } from 'node:fs';
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

const QUERY = 'http://127.0.0.1:16686';
let jaeger: ChildProcess | undefined;

before(async () => {
  ensureStack();
  // make test builds it in the background (Makefile E2E_BG_BUILD); this waits for that build.
  runHack('build-addons.sh', 'Jaeger could not be built', 40 * 60_000, false, ['jaeger']);
  // Its store is in memory: the traces looked at must be this run's.
  if (await fetch(`${QUERY}/api/services`).catch(() => undefined))
    throw new Error(`something already answers on ${QUERY} (a Jaeger left running?): stop it first`);
  const log = openSync(`${ROOT}/_output/local/logs/jaeger.log`, 'w');
  jaeger = spawn(`${CACHE}/jaeger-${pinned('JAEGER_VERSION')}/bin/jaeger`, [], { stdio: ['ignore', log, log] });
  await eventually('Jaeger answering on :16686 (see _output/local/logs/jaeger.log)', 60_000, async () => {
    if (jaeger?.exitCode !== null) throw new Error(`jaeger exited with ${jaeger?.exitCode}: see _output/local/logs/jaeger.log`);
    return (await fetch(`${QUERY}/api/services`).catch(() => undefined))?.ok;
  });
});

after(async () => {
  restartKubelet();
  if (jaeger?.exitCode === null) {
    const exited = new Promise((r) => jaeger!.once('exit', r));
    jaeger.kill();
    await exited;
  }
});

interface JaegerSpan {
  spanID: string;
  operationName: string;
  references: { refType: string; spanID: string }[];
  tags: { key: string; value: unknown }[];
  processID: string;
}
interface JaegerTrace {
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string; tags: { key: string; value: unknown }[] }>;
}

const tagsOf = (s: { tags: { key: string; value: unknown }[] }) => Object.fromEntries(s.tags.map((t) => [t.key, t.value]));

/** The syncPod traces of the pod NAMESPACE/NAME. */
async function syncPodTraces(pod: string): Promise<JaegerTrace[]> {
  const q = new URLSearchParams({ service: 'kubelet', operation: 'syncPod', tags: JSON.stringify({ 'k8s.pod': pod }), limit: '50' });
  const r = await fetch(`${QUERY}/api/traces?${q}`);
  if (!r.ok) return [];
  return ((await r.json()) as { data: JaegerTrace[] | null }).data ?? [];
}

async function runPod(ns: string, name: string) {
  const { core } = clients();
  await core.createNamespacedPod({ namespace: ns, body: podSpec(name) });
  await eventually(`${name} Running`, 60_000, async () => {
    const p = await core.readNamespacedPod({ name, namespace: ns });
    return p.status?.phase === 'Running';
  });
}

test("tracing at a million per million: a pod's start is a syncPod trace in Jaeger, the CRI calls its children", () =>
  withNamespace(async (ns) => {
    restartKubelet('tracing: {endpoint: "localhost:4317", samplingRatePerMillion: 1000000}\n');
    await runPod(ns, 'traced');
    // Batches go every 5 s.
    const trace = await eventually('the pod\'s "create" syncPod trace in Jaeger', 60_000, async () =>
      (await syncPodTraces(`${ns}/traced`)).find((t) =>
        t.spans.some((s) => s.operationName === 'syncPod' && tagsOf(s)['k8s.pod.update_type'] === 'create'),
      ),
    );
    const sync = trace.spans.find((s) => s.operationName === 'syncPod' && tagsOf(s)['k8s.pod.update_type'] === 'create')!;
    const attrs = tagsOf(sync);
    assert.equal(attrs['k8s.pod'], `${ns}/traced`);
    assert.equal(attrs['k8s.namespace.name'], ns);
    assert.match(String(attrs['k8s.pod.uid']), /^[0-9a-f-]{36}$/);
    assert.equal(attrs['otel.scope.name'], 'k8s.io/kubernetes/pkg/kubelet');
    assert.equal(tagsOf(sync)['span.kind'], 'internal');
    const process = trace.processes[sync.processID]!;
    assert.equal(process.serviceName, 'kubelet');
    assert.equal(tagsOf(process)['host.name'], nodeName());
    const children = trace.spans.filter((s) => s.references.some((r) => r.refType === 'CHILD_OF' && r.spanID === sync.spanID));
    const names = new Set(children.map((s) => s.operationName));
    for (const call of ['RunPodSandbox', 'CreateContainer', 'StartContainer'])
      assert.ok(names.has(`runtime.v1.RuntimeService/${call}`), `${call} under syncPod: ${[...names].join(', ')}`);
    const run = children.find((s) => s.operationName === 'runtime.v1.RuntimeService/RunPodSandbox')!;
    const runTags = tagsOf(run);
    assert.equal(runTags['span.kind'], 'client');
    assert.equal(runTags['rpc.system.name'], 'grpc');
    assert.equal(runTags['rpc.response.status_code'], 'OK');

    // kubectl exec: the kubelet API's server span for upstream's route, the runtime's Exec under it.
    assert.equal(kubectl('exec', '-n', ns, 'traced', '--', 'echo', 'hi').trim(), 'hi');
    const route = '/exec/{podNamespace}/{podID}/{containerName}';
    const exec = await eventually('the exec server span in Jaeger', 60_000, async () => {
      const q = new URLSearchParams({
        service: 'kubelet',
        operation: route,
        tags: JSON.stringify({ 'url.path': `/exec/${ns}/traced/main` }),
      });
      const r = await fetch(`${QUERY}/api/traces?${q}`);
      return r.ok ? ((await r.json()) as { data: JaegerTrace[] | null }).data?.[0] : undefined;
    });
    const server = exec.spans.find((s) => s.operationName === route)!;
    assert.equal(tagsOf(server)['span.kind'], 'server');
    assert.equal(tagsOf(server)['http.route'], route);
    assert.ok(
      exec.spans.some((s) => s.operationName === 'runtime.v1.RuntimeService/Exec' && s.references.some((r) => r.spanID === server.spanID)),
      `Exec under the server span: ${exec.spans.map((s) => s.operationName).join(', ')}`,
    );
  }));

test('tracing with no sampling rate: roots are never sampled, nothing reaches Jaeger', () =>
  withNamespace(async (ns) => {
    restartKubelet('tracing: {endpoint: "localhost:4317"}\n');
    await runPod(ns, 'untraced');
    // Two export intervals, then still nothing.
    await new Promise((r) => setTimeout(r, 12_000));
    assert.deepEqual(await syncPodTraces(`${ns}/untraced`), []);
  }));
