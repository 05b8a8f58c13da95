// Static pods from /etc/kubernetes/manifests (staticPodPath in `make up`) and from a
// staticPodURL: run without the apiserver, shown through a mirror pod that the kubelet
// keeps in place.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BIN,
  NODE_IP,
  ROOT,
  clients,
  crictl,
  ensureStack,
  eventually,
  removeKubeletDir,
  deleteTestNode,
  kubectl,
  nodeName,
  seriesValue,
  withNamespace,
  BUSYBOX,
} from './stack.ts';

before(() => ensureStack());

const KUBELET_LOG = join(ROOT, '_output/local/logs/kubelet-ts.log');

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

test('a static pod: mirror created, mirror deleted and recreated without a restart, file edited, file removed', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const file = `/etc/kubernetes/manifests/e2e-${ns}.yaml`;
    const name = `static-web-${nodeName()}`;
    const running = (what: string, check: (p: Awaited<ReturnType<typeof core.readNamespacedPod>>) => boolean = () => true) =>
      eventually(
        what,
        30_000,
        async () => {
          const p = await core.readNamespacedPod({ name, namespace: ns }).catch(() => undefined);
          return p?.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready && check(p) ? p : undefined;
        },
        250,
      );
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
      const edited = await running(
        'the edited pod',
        (p) => p.metadata!.annotations!['kubernetes.io/config.mirror'] !== first.metadata!.annotations!['kubernetes.io/config.mirror'],
      );
      assert.notEqual(edited.status!.containerStatuses![0]!.containerID, first.status!.containerStatuses![0]!.containerID);
      await eventually('the new log', 10_000, async () => kubectl('logs', '-n', ns, name) === 'second\n');
      const uid = edited.metadata!.annotations!['kubernetes.io/config.mirror']!;

      // Removed and written back with the same content (so the same UID): the pod is stopped,
      // then started again, its container's restart count 1 (upstream's restartRequested).
      const restarts = () =>
        seriesValue(kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`), 'kubelet_restarted_pods_total{static="true"}');
      const restartsBefore = restarts();
      rmSync(file);
      writeFileSync(file, manifest(ns, 'second'));
      await running('the pod started again', (p) => p.status!.containerStatuses![0]!.restartCount === 1);
      assert.equal(restarts() - restartsBefore, 1, 'kubelet_restarted_pods_total{static="true"} counts it');

      // Removing the file stops the pod within its grace period (sh ignores SIGTERM: 1 s); the
      // mirror shows it until then, and goes after.
      rmSync(file);
      const removedAt = Date.now();
      for (let t = 0; t < 5; t++) {
        const p = await core.readNamespacedPod({ name, namespace: ns }).catch(() => undefined);
        if (Date.now() - removedAt < 800) assert.ok(p, `the mirror pod is kept while the static pod stops (${Date.now() - removedAt} ms)`);
        await new Promise((r) => setTimeout(r, 100));
      }
      await eventually(
        'the mirror gone',
        30_000,
        async () => !(await core.readNamespacedPod({ name, namespace: ns }).catch(() => undefined)),
        250,
      );
      await eventually(
        'no container left',
        30_000,
        async () => crictl('ps', '-a', '-q', '--label', `io.kubernetes.pod.uid=${uid}`).trim() === '',
        250,
      );
    } finally {
      rmSync(file, { force: true });
    }
  }));

test('an invalid manifest is logged and ignored; other static pods run on', () =>
  withNamespace(async (ns) => {
    const bad = `/etc/kubernetes/manifests/e2e-bad-${ns}.yaml`;
    const good = `/etc/kubernetes/manifests/e2e-${ns}.yaml`;
    const from = statSync(KUBELET_LOG).size;
    try {
      writeFileSync(bad, `apiVersion: v1\nkind: Pod\nmetadata: {name: Not_Valid, namespace: ${ns}}\nspec: {containers: []}\n`);
      writeFileSync(good, manifest(ns, 'fine'));
      await eventually(
        'the valid static pod Running',
        30_000,
        async () =>
          (
            await clients()
              .core.readNamespacedPod({ name: `static-web-${nodeName()}`, namespace: ns })
              .catch(() => undefined)
          )?.status?.phase === 'Running',
        250,
      );
      // Logged: the kubelet's error line names the file and what is wrong with it (upstream's
      // "Could not process manifest file" of its file source), once.
      const said = `"Could not process manifest file, ignoring it" path=${JSON.stringify(bad)} err=`;
      const lines = await eventually(`${said} in the kubelet's log`, 10_000, async () => {
        const l = readFileSync(KUBELET_LOG).subarray(from).toString('utf8').split('\n');
        const found = l.filter((x) => x.includes(said));
        return found.length ? found : undefined;
      });
      assert.equal(lines.length, 1, lines.join('\n'));
      assert.match(lines[0]!, /^E\d{4} /, 'an error line');
      assert.ok(
        lines[0]!.includes(JSON.stringify(`${bad}: metadata.name "Not_Valid" is not a valid DNS-1123 subdomain`).slice(0, -1)),
        `the reason in ${lines[0]}`,
      );
      // Ignored: no pod of it, in the apiserver or in the runtime; the namespace has the valid one alone.
      const pods = await clients().core.listNamespacedPod({ namespace: ns });
      assert.deepEqual(
        pods.items.map((p) => p.metadata!.name),
        [`static-web-${nodeName()}`],
      );
      assert.equal(crictl('pods', '-q', '--namespace', ns).trim().split('\n').filter(Boolean).length, 1, 'one sandbox in the namespace');
    } finally {
      rmSync(bad, { force: true });
      rmSync(good, { force: true });
    }
  }));

test('staticPodURL: a kubelet runs the pods a URL serves, with mirror pods; an edit replaces, an empty answer removes', async () => {
  const { core } = clients();
  // A second kubelet-ts beside the stack's (own node name, ports and dirs, same containerd),
  // configured with staticPodURL: a hostNetwork pod needs no CNI config of its own.
  let body = '';
  const server = createServer((_req, res) => res.end(body));
  await new Promise<void>((r) => server.listen(0, NODE_IP, r));
  const node = `url-${Math.random().toString(36).slice(2, 7)}`;
  const dir = mkdtempSync(join(tmpdir(), 'kts-url-'));
  const served = (msg: string) =>
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'from-url', namespace: 'default' },
      spec: {
        hostNetwork: true,
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', `echo ${msg}; sleep 3600`] }],
      },
    });
  body = served('first');
  writeFileSync(
    join(dir, 'config.yaml'),
    `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfailCgroupV1: false\n` +
      `staticPodURL: http://${NODE_IP}:${(server.address() as AddressInfo).port}/pods\nhttpCheckFrequency: 1s\n` +
      `authentication: {x509: {clientCAFile: ${ROOT}/_output/local/pki/ca.crt}}\n`,
  );
  const proc = spawn(
    `${BIN}/node`,
    [
      `${ROOT}/dist/cli/main.js`,
      '--bootstrap-kubeconfig',
      `${ROOT}/_output/local/bootstrap-kubelet.conf`,
      '--kubeconfig',
      join(dir, 'kubelet.conf'),
      '--config',
      join(dir, 'config.yaml'),
      '--hostname-override',
      node,
      '--node-ip',
      NODE_IP,
      '--port',
      '10350',
      '--healthz-port',
      '10348',
      '--root-dir',
      join(dir, 'root'),
      '--cni-conf-dir',
      join(dir, 'cni'),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const mirror = (check: (p: Awaited<ReturnType<typeof core.readNamespacedPod>>) => boolean) =>
    eventually(
      'the mirror pod',
      60_000,
      async () => {
        if (proc.exitCode !== null) throw new Error(`kubelet-ts exited ${proc.exitCode}:\n${out.slice(-2000)}`);
        const p = await core.readNamespacedPod({ name: `from-url-${node}`, namespace: 'default' }).catch(() => undefined);
        return p && check(p) ? p : undefined;
      },
      500,
    );
  try {
    const first = await mirror((p) => p.status?.phase === 'Running');
    assert.ok(first.metadata!.annotations!['kubernetes.io/config.mirror'], 'a mirror pod');
    assert.equal(first.metadata!.annotations!['kubernetes.io/config.source'], 'http');
    assert.equal(first.metadata!.ownerReferences?.[0]?.name, node);
    assert.match(kubectl('logs', '-n', 'default', `from-url-${node}`), /first/);
    body = served('second');
    await mirror(
      (p) =>
        p.status?.phase === 'Running' &&
        p.metadata!.annotations!['kubernetes.io/config.mirror'] !== first.metadata!.annotations!['kubernetes.io/config.mirror'],
    );
    assert.match(kubectl('logs', '-n', 'default', `from-url-${node}`), /second/);
    body = '';
    await eventually(
      'the mirror pod gone',
      60_000,
      async () => !(await core.readNamespacedPod({ name: `from-url-${node}`, namespace: 'default' }).catch(() => undefined)),
      500,
    );
    await eventually(
      'its containers gone',
      30_000,
      async () => !crictl('ps', '-q', '--name', '^main$', '--label', `io.kubernetes.pod.name=from-url-${node}`).trim(),
    );
  } finally {
    if (proc.exitCode === null) {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
    }
    server.close();
    await deleteTestNode(node);
    removeKubeletDir(dir);
  }
});
