// Static pods from /etc/kubernetes/manifests (staticPodPath in `make up`): run without
// the apiserver, shown through a mirror pod that the kubelet keeps in place.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { clients, crictl, ensureStack, eventually, kubectl, nodeName, withNamespace, BUSYBOX } from './stack.ts';

before(() => ensureStack());

const manifest = (ns: string, message: string) => `apiVersion: v1
kind: Pod
metadata:
  name: static-web
  namespace: ${ns}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: ${BUSYBOX}
    command: ["sh", "-c", "echo ${message}; sleep 3600"]
`;

test('a static pod: mirror created, mirror deleted and recreated without a restart, file edited, file removed', () => withNamespace(async (ns) => {
  const { core } = clients();
  const file = `/etc/kubernetes/manifests/e2e-${ns}.yaml`;
  const name = `static-web-${nodeName()}`;
  const running = (what: string, check: (p: Awaited<ReturnType<typeof core.readNamespacedPod>>) => boolean = () => true) =>
    eventually(what, 30_000, async () => {
      const p = await core.readNamespacedPod({ name, namespace: ns }).catch(() => undefined);
      return p?.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready && check(p) ? p : undefined;
    }, 250);
  try {
    writeFileSync(file, manifest(ns, 'first'));
    const first = await running('the mirror pod Running');
    assert.ok(first.metadata!.annotations!['kubernetes.io/config.mirror'], 'marked as a mirror');
    assert.equal(first.metadata!.annotations!['kubernetes.io/config.source'], 'file');
    assert.deepEqual([first.metadata!.ownerReferences![0]!.kind, first.metadata!.ownerReferences![0]!.name], ['Node', nodeName()]);
    assert.equal(kubectl('logs', '-n', ns, name), 'first\n');

    // Deleting the mirror does not touch the static pod: a new mirror shows the same container.
    await core.deleteNamespacedPod({ name, namespace: ns });
    const again = await running('a new mirror', (p) => p.metadata!.uid !== first.metadata!.uid);
    assert.equal(again.status!.containerStatuses![0]!.containerID, first.status!.containerStatuses![0]!.containerID);
    assert.equal(again.status!.containerStatuses![0]!.restartCount, 0);

    // An edit replaces the pod.
    writeFileSync(file, manifest(ns, 'second'));
    const edited = await running('the edited pod', (p) => p.metadata!.annotations!['kubernetes.io/config.mirror'] !== first.metadata!.annotations!['kubernetes.io/config.mirror']);
    assert.notEqual(edited.status!.containerStatuses![0]!.containerID, first.status!.containerStatuses![0]!.containerID);
    await eventually('the new log', 10_000, async () => kubectl('logs', '-n', ns, name) === 'second\n');
    const uid = edited.metadata!.annotations!['kubernetes.io/config.mirror']!;

    // Removing the file stops the pod and removes its mirror.
    rmSync(file);
    await eventually('the mirror gone', 30_000, async () => !(await core.readNamespacedPod({ name, namespace: ns }).catch(() => undefined)), 250);
    await eventually('no container left', 30_000, async () => crictl('ps', '-a', '-q', '--label', `io.kubernetes.pod.uid=${uid}`).trim() === '', 250);
  } finally {
    rmSync(file, { force: true });
  }
}));

test('an invalid manifest is logged and ignored; other static pods run on', () => withNamespace(async (ns) => {
  const bad = `/etc/kubernetes/manifests/e2e-bad-${ns}.yaml`;
  const good = `/etc/kubernetes/manifests/e2e-${ns}.yaml`;
  try {
    writeFileSync(bad, 'apiVersion: v1\nkind: Pod\nmetadata: {name: Not_Valid}\nspec: {containers: []}\n');
    writeFileSync(good, manifest(ns, 'fine'));
    await eventually('the valid static pod Running', 30_000, async () =>
      (await clients().core.readNamespacedPod({ name: `static-web-${nodeName()}`, namespace: ns }).catch(() => undefined))?.status?.phase === 'Running', 250);
  } finally {
    rmSync(bad, { force: true });
    rmSync(good, { force: true });
  }
}));
