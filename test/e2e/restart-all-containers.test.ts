// RestartAllContainers (RestartAllContainersOnContainerExits with ContainerRestartRules, both
// beta and on in 1.36 on the apiserver and the kubelet, which declares the feature on its Node):
// a container's restartPolicyRules entry with action RestartAllContainers on an exit code makes
// the kubelet restart the whole pod in place when that container exits with it. Every init
// container, sidecar and app container is stopped, removed and run again once, in the same
// sandbox with the same volumes; each status counts one restart whose last termination says
// why. src/runtime/restart-policy.ts decides; upstream's e2e is "Pod Extended
// (RestartAllContainers)" (test/e2e/node/pods.go).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { BUSYBOX, clients, crictl, ensureStack, eventually, kubectl, podSpec, withNamespace } from './stack.ts';

before(() => ensureStack());

/** A container that notes each of its starts in the pod's emptyDir, then runs script. */
const noting = (name: string, script: string, over: object = {}) => ({
  name,
  image: BUSYBOX,
  command: ['sh', '-c', `echo ${name} >> /data/starts; ${script}`],
  volumeMounts: [{ name: 'data', mountPath: '/data' }],
  ...over,
});

test('a container exits with the code of its RestartAllContainers rule: every container of the pod runs again once, in the same sandbox', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    // The source exits 42 once, when told to (/data/go), and after the restart only sleeps: its
    // mark in the emptyDir, which the in-place restart keeps, tells it it ran before.
    const source = noting(
      'source',
      'if [ -f /data/done ]; then exec sleep 3600; fi; until [ -f /data/go ]; do sleep 1; done; touch /data/done; exit 42',
      {
        restartPolicy: 'Never',
        restartPolicyRules: [{ action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [42] } }],
      },
    );
    const body = podSpec('whole', {
      restartPolicy: 'Never',
      initContainers: [noting('init', 'true'), noting('sidecar', 'exec sleep 3600', { restartPolicy: 'Always' })],
      containers: [source, noting('regular', 'exec sleep 3600')],
      volumes: [{ name: 'data', emptyDir: {} }],
    });
    await core.createNamespacedPod({ namespace: ns, body });
    const read = () => core.readNamespacedPod({ name: 'whole', namespace: ns });
    const all = (p: V1Pod): V1ContainerStatus[] => [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])];
    const byName = (p: V1Pod) => new Map(all(p).map((c) => [c.name, c]));
    // As the status lists them: init containers in the spec's order, the others by name.
    const names = ['init', 'sidecar', 'regular', 'source'];

    const before = await eventually('the pod Running, every container started', 60_000, async () => {
      const p = await read();
      return p.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.ready) ? p : undefined;
    });
    assert.deepEqual(
      all(before).map((c) => [c.name, c.restartCount]),
      names.map((n) => [n, 0]),
    );
    const restarting = before.status!.conditions!.find((c) => c.type === 'AllContainersRestarting');
    assert.equal(restarting?.status, 'False', 'the pod can restart all its containers: the condition is there, False');
    const sandboxes = () => crictl('pods', '-q', '--label', `io.kubernetes.pod.uid=${before.metadata!.uid}`).trim().split('\n');
    const sandbox = sandboxes();
    assert.equal(sandbox.length, 1);

    kubectl('-n', ns, 'exec', 'whole', '-c', 'regular', '--', 'touch', '/data/go');

    // Every container removed and started again: each counts one restart, the termination
    // before it that of the restart of all containers, and runs (the init container ran to
    // completion again first).
    const after = await eventually(
      'every container restarted once and running again',
      90_000,
      async () => {
        const p = await read();
        const s = byName(p);
        const done =
          p.status?.phase === 'Running' &&
          names.every((n) => s.get(n)?.restartCount === 1) &&
          s.get('init')?.state?.terminated?.exitCode === 0 &&
          ['sidecar', 'source', 'regular'].every((n) => s.get(n)?.state?.running && s.get(n)?.ready);
        return done ? p : undefined;
      },
      500,
    );
    const was = byName(before);
    for (const c of all(after)) {
      assert.notEqual(c.containerID, was.get(c.name)!.containerID, `${c.name}: a new container`);
      assert.equal(c.lastState?.terminated?.reason, 'RestartingAllContainers', `${c.name}: its last termination`);
    }
    assert.equal(after.status!.conditions!.find((c) => c.type === 'AllContainersRestarting')?.status, 'False', 'the restart is over');
    assert.equal(after.status!.podIP, before.status!.podIP, 'the same pod IP');
    assert.deepEqual(sandboxes(), sandbox, 'the same sandbox');
    // What ran, from the emptyDir the restart kept: each container twice, the init container
    // before the others each time.
    const starts = kubectl('-n', ns, 'exec', 'whole', '-c', 'regular', '--', 'cat', '/data/starts').trim().split('\n');
    assert.deepEqual([...starts].sort(), [...names, ...names].sort(), `each container started twice: ${starts.join(' ')}`);
    assert.deepEqual([starts[0], starts[4]], ['init', 'init'], `the init container first each time: ${starts.join(' ')}`);

    // No second round.
    await new Promise((r) => setTimeout(r, 5000));
    const later = await read();
    assert.deepEqual(
      all(later).map((c) => [c.name, c.restartCount, c.containerID]),
      all(after).map((c) => [c.name, c.restartCount, c.containerID]),
    );
  }));
