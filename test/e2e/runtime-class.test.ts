// RuntimeClass: a pod runs with its class's handler (containerd's runtime of that name); a
// class whose handler the runtime lacks, or that is gone, keeps the pod from starting with an
// Event that says so, never running it silently with the default runtime.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { clients, crictl, ensureStack, eventually, kubectl, kubectlInput, nodeName, podSpec, seriesValue, withNamespace } from './stack.ts';

before(() => ensureStack());

const runtimeClass = (name: string, handler: string) =>
  `apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: ${name}}\nhandler: ${handler}\n---\n`;
const sandboxesOf = (ns: string, pod: string) =>
  (JSON.parse(crictl('pods', '--namespace', ns, '--name', pod, '-o', 'json')) as { items: { runtimeHandler: string }[] }).items;

async function sandboxFailure(ns: string, pod: string): Promise<string> {
  const { core } = clients();
  const event = await eventually(`FailedCreatePodSandBox on pod ${pod}`, 60_000, async () =>
    (await core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${pod}` })).items.find(
      (e) => e.reason === 'FailedCreatePodSandBox',
    ),
  );
  assert.equal((await core.readNamespacedPod({ name: pod, namespace: ns })).status?.phase, 'Pending');
  assert.equal(sandboxesOf(ns, pod).length, 0, 'no sandbox with the default runtime');
  return event.message ?? '';
}

test('RuntimeClass: the sandbox runs with the class handler; an unknown handler fails with FailedCreatePodSandBox', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    // test-handler is a runc runtime of its own in the stack's containerd (hack/containerd.sh).
    kubectlInput(runtimeClass(`${ns}-test`, 'test-handler') + runtimeClass(`${ns}-missing`, 'no-such-handler'), 'apply', '-f', '-');
    try {
      await core.createNamespacedPod({ namespace: ns, body: podSpec('handled', { runtimeClassName: `${ns}-test` }) });
      await core.createNamespacedPod({ namespace: ns, body: podSpec('unhandled', { runtimeClassName: `${ns}-missing` }) });
      await eventually(
        'pod handled Running',
        60_000,
        async () => (await core.readNamespacedPod({ name: 'handled', namespace: ns })).status?.phase === 'Running',
      );
      assert.deepEqual(
        sandboxesOf(ns, 'handled').map((s) => s.runtimeHandler),
        ['test-handler'],
      );

      assert.match(await sandboxFailure(ns, 'unhandled'), /^Failed to create pod sandbox: .*no-such-handler/);
      const metrics = kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`);
      assert.ok(seriesValue(metrics, 'kubelet_run_podsandbox_errors_total{runtime_handler="no-such-handler"}') >= 1);
      assert.ok(seriesValue(metrics, 'kubelet_run_podsandbox_duration_seconds_count{runtime_handler="test-handler"}') >= 1);
    } finally {
      kubectl('delete', 'runtimeclass', `${ns}-test`, `${ns}-missing`, '--ignore-not-found');
    }
  }));

test('RuntimeClass: a class deleted after the pod was admitted by the apiserver fails the sandbox, naming it', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    // The apiserver refuses pods naming a missing class, so the class goes while the pod waits at a
    // scheduling gate; once the gate is lifted the kubelet is the one to find it gone.
    kubectlInput(runtimeClass(`${ns}-gone`, 'test-handler'), 'apply', '-f', '-');
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('orphan', { runtimeClassName: `${ns}-gone`, schedulingGates: [{ name: 'kubelet-ts.dev/hold' }] }),
    });
    kubectl('delete', 'runtimeclass', `${ns}-gone`);
    kubectl('patch', 'pod', 'orphan', '-n', ns, '--type=json', '-p', '[{"op":"remove","path":"/spec/schedulingGates"}]');
    assert.match(
      await sandboxFailure(ns, 'orphan'),
      new RegExp(`^Failed to create pod sandbox: runtimeclasses.node.k8s.io "${ns}-gone" not found`),
    );
  }));
