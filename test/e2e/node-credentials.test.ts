// What the node's own credentials are and may do: its keys readable by root alone, and,
// with the Node authorizer and the NodeRestriction admission plugin on (as kubeadm sets
// them), no way to touch another node's objects, and no need to: the apiserver's audit log
// (hack/control-plane.sh logs the requests of system:nodes) shows every request kubelet-ts
// made since the stack started within its rights.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, KUBELET_ROOT_DIR, ROOT, clients, ensureStack, eventually, kubectl, nodeName, restartKubelet, seriesValue } from './stack.ts';

before(() => ensureStack());

const KUBELET_KUBECONFIG = `${ROOT}/_output/local/kubelet.kubeconfig`;
const LOGS = `${ROOT}/_output/local/logs`;
const AUDIT_LOG = `${LOGS}/kube-apiserver-audit.log`;

test('key files and the kubeconfig are 0600 and owned by root', () => {
  const pki = '/var/lib/kubelet/pki';
  const files = [
    KUBELET_KUBECONFIG,
    `${pki}/kubelet.key`,
    ...readdirSync(pki)
      .filter((f) => /^kubelet-client-\d.*\.pem$/.test(f))
      .map((f) => `${pki}/${f}`),
  ];
  assert.ok(files.length >= 3, `files: ${files}`);
  for (const f of files) {
    const st = statSync(f);
    assert.equal((st.mode & 0o777).toString(8), '600', f);
    assert.equal(st.uid, 0, f);
  }
});

/** kubectl as the node itself (its client certificate); the error text when refused. */
function asNode(...args: string[]): { ok: boolean; out: string } {
  try {
    return {
      ok: true,
      out: execFileSync(`${BIN}/kubectl`, ['--kubeconfig', KUBELET_KUBECONFIG, ...args], { encoding: 'utf8', stdio: 'pipe' }),
    };
  } catch (e) {
    return { ok: false, out: String((e as { stderr?: string }).stderr ?? e) };
  }
}

test("NodeRestriction: the node's credentials cannot change another node, its lease, or read a secret no pod of it uses", async () => {
  const other = `kts-other-${Date.now().toString(36)}`;
  const { core } = clients();
  await core.createNode({ body: { metadata: { name: other } } });
  kubectl('create', 'secret', 'generic', other, '-n', 'default', '--from-literal=k=v');
  try {
    const me = nodeName();
    const refusals: [string, string[]][] = [
      ['label another node', ['label', 'node', other, 'kts=touched']],
      ['delete another node', ['delete', 'node', other, '--wait=false']],
      ['read a secret no pod of this node uses', ['get', 'secret', other, '-n', 'default']],
      ['create a pod that is not its mirror pod', ['run', other, '-n', 'default', '--image=busybox', '--restart=Never']],
      ['set a node-restriction label on itself', ['label', 'node', me, 'node-restriction.kubernetes.io/x=y']],
    ];
    for (const [what, args] of refusals) {
      const r = asNode(...args);
      assert.ok(!r.ok && /forbidden/i.test(r.out), `${what}: ${r.out}`);
    }
    // Its own Node stays its to read and label.
    assert.ok(asNode('get', 'node', me).ok);
    assert.equal((await core.readNode({ name: other })).metadata?.labels?.kts, undefined);
  } finally {
    await core.deleteNode({ name: other }).catch(() => {});
    kubectl('delete', 'secret', other, '-n', 'default', '--ignore-not-found');
  }
});

interface AuditEvent {
  user: { username: string };
  userAgent?: string;
  verb: string;
  requestURI: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number; message?: string };
  stageTimestamp?: string;
}

const readOnly = new Set(['get', 'list', 'watch']);

test('the audit log: kubelet-ts was never refused, and wrote only its own Node, Lease and CSINode', () => {
  assert.ok(existsSync(AUDIT_LOG), `${AUDIT_LOG} is missing: the apiserver runs without hack/control-plane.sh's audit policy`);
  const me = `system:node:${nodeName()}`;
  // The log and its rotated backup (--audit-log-maxbackup=1).
  const events = readdirSync(LOGS)
    .filter((f) => f.startsWith('kube-apiserver-audit'))
    .flatMap((f) => readFileSync(`${LOGS}/${f}`, 'utf8').split('\n'))
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent)
    // kubectl run by the test above, with the node's certificate, is not the kubelet.
    .filter((e) => e.user.username === me && !e.userAgent?.startsWith('kubectl'));
  assert.ok(
    events.some((e) => e.verb === 'update' && e.objectRef?.resource === 'leases'),
    `no Lease renewal among the ${events.length} requests of ${me} in the audit log`,
  );
  // Refusals that are not the authorizer's verdict on the kubelet, as upstream's kubelet meets them too:
  // an event in a namespace being deleted (NamespaceLifecycle admission), and a read or watch of an
  // object (or a pod's service account token request) that succeeded within a minute, refused while
  // the node authorizer's graph had not caught up with a pod's binding or deletion, or with the
  // apiserver's restart (the chaos slice's: its graph is rebuilt from informers).
  const when = (e: AuditEvent) => Date.parse(e.stageTimestamp ?? '');
  const ok = (e: AuditEvent) => (e.responseStatus?.code ?? 0) >= 200 && (e.responseStatus?.code ?? 0) < 300;
  // What a request reads: its path and selectors, not where a watch resumes or how long it lasts,
  // nor whether its list comes as a watch's initial events (a refused watch-list falls back to a list).
  const target = (e: AuditEvent) => {
    const u = new URL(e.requestURI, 'https://apiserver');
    for (const p of ['resourceVersion', 'timeoutSeconds', 'watch', 'allowWatchBookmarks', 'sendInitialEvents', 'resourceVersionMatch'])
      u.searchParams.delete(p);
    return `${u.pathname}?${u.searchParams}`;
  };
  const lagging = (e: AuditEvent) =>
    (e.verb === 'get' || e.verb === 'list' || e.verb === 'watch' || (e.verb === 'create' && e.objectRef?.subresource === 'token')) &&
    events.some((o) => target(o) === target(e) && ok(o) && Math.abs(when(o) - when(e)) < 60_000);
  const refused = events.filter(
    (e) => e.responseStatus?.code === 403 && !/because it is being terminated/.test(e.responseStatus.message ?? '') && !lagging(e),
  );
  assert.deepEqual(
    refused.map((e) => `${e.verb} ${e.requestURI}: ${e.responseStatus?.message}`),
    [],
    'requests of kubelet-ts that the apiserver refused',
  );
  const perNode = new Set(['nodes', 'leases', 'csinodes']);
  const foreign = events.filter(
    (e) => !readOnly.has(e.verb) && perNode.has(e.objectRef?.resource ?? '') && e.objectRef?.name !== nodeName(),
  );
  assert.deepEqual(
    foreign.map((e) => `${e.verb} ${e.requestURI}`),
    [],
    "writes to another node's objects",
  );
});

// A kubeconfig whose user is an exec credential plugin (as cloud nodes' kubeconfigs run their
// token commands): the plugin here hands out the node's own client certificate and key as an
// ExecCredential, so the kubelet keeps its identity while every credential comes from the plugin.
test('an exec credential plugin in the kubeconfig: run with KUBERNETES_EXEC_INFO, its certificate used; the node stays Ready', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-exec-plugin-'));
  t.after(() => {
    restartKubelet();
    rmSync(dir, { recursive: true, force: true });
  });
  const plugin = join(dir, 'node-credential');
  writeFileSync(
    plugin,
    `#!/bin/sh
echo "$KUBERNETES_EXEC_INFO" > ${dir}/exec-info
pem=${KUBELET_ROOT_DIR}/pki/kubelet-client-current.pem
cert=$(awk '/BEGIN CERTIFICATE/,/END CERTIFICATE/' $pem | awk '{printf "%s\\\\n", $0}')
key=$(awk '/BEGIN .*PRIVATE KEY/,/END .*PRIVATE KEY/' $pem | awk '{printf "%s\\\\n", $0}')
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"%s","clientKeyData":"%s"}}' "$cert" "$key"
`,
    { mode: 0o755 },
  );
  const kubeconfig = readFileSync(KUBELET_KUBECONFIG, 'utf8').replace(
    /^( +)client-certificate: .*\n +client-key: .*$/m,
    (_m, indent: string) =>
      [
        `${indent}exec:`,
        `${indent}  apiVersion: client.authentication.k8s.io/v1`,
        `${indent}  command: ${plugin}`,
        `${indent}  interactiveMode: Never`,
        `${indent}  provideClusterInfo: true`,
      ].join('\n'),
  );
  assert.match(kubeconfig, /exec:/, 'the kubeconfig rewritten');
  writeFileSync(join(dir, 'kubelet.kubeconfig'), kubeconfig, { mode: 0o600 });
  // No bootstrap kubeconfig: with one, a kubeconfig without a certificate is bootstrapped over (as upstream).
  restartKubelet(undefined, { KTS_KUBELET_FLAGS: `--bootstrap-kubeconfig= --kubeconfig ${join(dir, 'kubelet.kubeconfig')}` });

  const info = JSON.parse(readFileSync(join(dir, 'exec-info'), 'utf8'));
  assert.equal(info.kind, 'ExecCredential');
  assert.equal(info.spec.interactive, false);
  assert.match(info.spec.cluster.server, /^https:\/\//, 'provideClusterInfo: the cluster as the plugin gets it');
  // The Lease renewed through the plugin's credentials after the restart.
  const { coordination } = clients();
  const restarted = new Date();
  await eventually('the Lease renewed after the restart', 30_000, async () => {
    const l = await coordination.readNamespacedLease({ name: nodeName(), namespace: 'kube-node-lease' });
    return new Date(String(l.spec?.renewTime)) > restarted;
  });
  assert.equal(kubectl('get', 'node', nodeName(), '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'), 'True');
  const metrics = kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`);
  assert.ok(seriesValue(metrics, 'rest_client_exec_plugin_call_total{code="0",call_status="no_error"}') >= 1, 'the plugin call counted');
  const ttl = seriesValue(metrics, 'rest_client_exec_plugin_ttl_seconds');
  assert.ok(Number.isFinite(ttl) && ttl > 0, `the certificate's TTL (${ttl} s)`);
});
