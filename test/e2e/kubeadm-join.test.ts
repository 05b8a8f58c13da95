// Joining a node the way an operator does with kubeadm's token discovery, using
// `kubelet-ts join`. The joining kubelet runs beside the stack's own (other node name,
// ports and directories) on the same containerd.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT, BIN, clients, ensureStack, eventually, kubectl, NODE_IP, removeKubeletDir, deleteTestNode } from './stack.ts';
import { caCertHash } from '../../src/join/discovery.ts';

before(() => ensureStack());

const token = () => readFileSync(`${ROOT}/_output/local/bootstrap-token`, 'utf8').trim();
const pin = () => caCertHash(readFileSync(`${ROOT}/_output/local/pki/ca.crt`, 'utf8'));
const main = `${ROOT}/dist/cli/main.js`;

function joinArgs(dir: string, name: string, hash: string) {
  return [
    'join',
    `${NODE_IP}:6443`,
    '--token',
    token(),
    '--discovery-token-ca-cert-hash',
    hash,
    '--hostname-override',
    name,
    '--node-ip',
    NODE_IP,
    '--port',
    '10350',
    '--healthz-port',
    '10348',
    '--root-dir',
    join(dir, 'root'),
    '--kubeconfig',
    join(dir, 'kubelet.conf'),
    '--bootstrap-kubeconfig',
    join(dir, 'bootstrap-kubelet.conf'),
    '--config',
    join(dir, 'config.yaml'),
    '--cni-conf-dir',
    join(dir, 'cni'),
  ];
}

test('join with a wrong CA hash is refused with one clear line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-join-'));
  const r = spawnSync(`${BIN}/node`, [main, ...joinArgs(dir, 'never-joins', `sha256:${'0'.repeat(64)}`)], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(r.status, 1);
  assert.match(
    r.stderr,
    /^kubelet-ts: error: the cluster CA's public key hash sha256:[0-9a-f]{64} matches none of --discovery-token-ca-cert-hash/,
  );
  assert.equal(r.stderr.trim().split('\n').length, 1);
});

test('kubelet-ts join: discovery, TLS bootstrap, a Ready node with the cluster kubelet config', async () => {
  const { core } = clients();
  const dir = mkdtempSync(join(tmpdir(), 'kts-join-'));
  const name = `joiner-${Math.random().toString(36).slice(2, 7)}`;
  const proc = spawn(`${BIN}/node`, [main, ...joinArgs(dir, name, pin())], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  try {
    const node = await eventually(
      `node ${name} Ready`,
      60_000,
      async () => {
        if (proc.exitCode !== null) throw new Error(`kubelet-ts join exited ${proc.exitCode}:\n${out}`);
        const n = await core.readNode({ name }).catch(() => undefined);
        return n?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? n : undefined;
      },
      500,
    );
    assert.equal(node.metadata!.labels!['kubernetes.io/hostname'], name);
    // The written KubeletConfiguration is the cluster's (kube-system/kubelet-config).
    const cm = await core.readNamespacedConfigMap({ name: 'kubelet-config', namespace: 'kube-system' });
    assert.equal(readFileSync(join(dir, 'config.yaml'), 'utf8'), cm.data!.kubelet);
    const boot = parse(readFileSync(join(dir, 'bootstrap-kubelet.conf'), 'utf8'));
    assert.equal(boot.users[0].user.token, token());
    assert.match(readFileSync(join(dir, 'kubelet.conf'), 'utf8'), /client-certificate: .*root\/pki\/kubelet-client-current\.pem/);
    assert.match(out, /Cluster info signature and CA pin verified/);
  } finally {
    if (proc.exitCode === null) {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
    }
    await deleteTestNode(name);
    removeKubeletDir(dir);
  }
});

/** The flags systemd would pass through manifests/10-kubeadm.conf, with kubeadm's env file and extra args. */
function dropInArgs(extra: string): string[] {
  const env: Record<string, string> = { KUBELET_EXTRA_ARGS: extra };
  const dropIn = readFileSync(`${ROOT}/manifests/10-kubeadm.conf`, 'utf8');
  for (const m of dropIn.matchAll(/^Environment="(\w+)=(.*)"$/gm)) env[m[1]!] = m[2]!;
  for (const m of readFileSync('/var/lib/kubelet/kubeadm-flags.env', 'utf8').matchAll(/^(\w+)="(.*)"$/gm)) env[m[1]!] = m[2]!;
  const exec = /^ExecStart=\/usr\/bin\/kubelet-ts (.*)$/m.exec(dropIn)![1]!;
  return exec
    .replace(/\$(\w+)/g, (_, k: string) => env[k] ?? '')
    .split(/\s+/)
    .filter(Boolean);
}

test("the real kubeadm join works with kubelet-ts as the node's kubelet, started as the systemd drop-in would", async () => {
  const { core } = clients();
  const name = `kadm-${Math.random().toString(36).slice(2, 7)}`;
  const written = [
    '/etc/kubernetes/bootstrap-kubelet.conf',
    '/etc/kubernetes/kubelet.conf',
    '/etc/kubernetes/pki',
    '/var/lib/kubelet/config.yaml',
    '/var/lib/kubelet/instance-config.yaml',
    '/var/lib/kubelet/kubeadm-flags.env',
  ];
  assert.ok(!existsSync('/etc/kubernetes/kubelet.conf'), 'no other kubelet owns /etc/kubernetes/kubelet.conf');
  const dir = mkdtempSync(join(tmpdir(), 'kts-kadm-'));
  const kubeadm = spawn(
    `${BIN}/kubeadm`,
    [
      'join',
      `${NODE_IP}:6443`,
      '--token',
      token(),
      '--discovery-token-ca-cert-hash',
      pin(),
      '--node-name',
      name,
      '--ignore-preflight-errors=all',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let kadmOut = '',
    kubeletOut = '';
  kubeadm.stdout.on('data', (d) => (kadmOut += d));
  kubeadm.stderr.on('data', (d) => (kadmOut += d));
  let kubelet: ReturnType<typeof spawn> | undefined;
  try {
    // kubeadm writes its files, then waits for a kubelet to complete the TLS bootstrap.
    await eventually(
      'kubeadm to write the kubelet files',
      60_000,
      async () => {
        if (kubeadm.exitCode !== null) throw new Error(`kubeadm join exited ${kubeadm.exitCode}:\n${kadmOut}`);
        return existsSync('/var/lib/kubelet/kubeadm-flags.env') && existsSync('/etc/kubernetes/bootstrap-kubelet.conf');
      },
      200,
    );
    // A second kubelet on this host: its own directories and ports.
    const args = dropInArgs(`--root-dir=${dir}/root --cni-conf-dir=${dir}/cni --port=10350 --healthz-port=10348 --node-ip=${NODE_IP}`);
    assert.ok(args.includes(`--hostname-override=${name}`), `kubeadm-flags.env passed through: ${args.join(' ')}`);
    kubelet = spawn(`${BIN}/node`, [main, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    kubelet.stdout!.on('data', (d) => (kubeletOut += d));
    kubelet.stderr!.on('data', (d) => (kubeletOut += d));
    const code = await new Promise<number | null>((r) => kubeadm.once('exit', r));
    assert.equal(code, 0, `kubeadm join failed:\n${kadmOut}\nkubelet-ts:\n${kubeletOut}`);
    assert.match(kadmOut, /This node has joined the cluster/);
    await eventually(
      `node ${name} Ready`,
      60_000,
      async () => {
        const n = await core.readNode({ name }).catch(() => undefined);
        return n?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      },
      500,
    );
  } finally {
    if (kubeadm.exitCode === null) kubeadm.kill();
    if (kubelet && kubelet.exitCode === null) {
      kubelet.kill('SIGTERM');
      await new Promise((r) => kubelet!.once('exit', r));
    }
    for (const f of written) rmSync(f, { recursive: true, force: true });
    await deleteTestNode(name);
    removeKubeletDir(dir);
  }
});

test('serverTLSBootstrap: the kubelet serves :10250 with a certificate from an approved kubelet-serving CSR', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-tls-'));
  const name = `tls-${Math.random().toString(36).slice(2, 7)}`;
  const ca = readFileSync(`${ROOT}/_output/local/pki/ca.crt`, 'utf8');
  writeFileSync(
    join(dir, 'config.yaml'),
    `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nserverTLSBootstrap: true\nfailCgroupV1: false\n` +
      `authentication: {x509: {clientCAFile: ${ROOT}/_output/local/pki/ca.crt}}\n`,
  );
  const proc = spawn(
    `${BIN}/node`,
    [
      main,
      '--bootstrap-kubeconfig',
      `${ROOT}/_output/local/bootstrap-kubelet.conf`,
      '--kubeconfig',
      join(dir, 'kubelet.conf'),
      '--config',
      join(dir, 'config.yaml'),
      '--hostname-override',
      name,
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
  try {
    // As an operator would: approve the node's serving CSR.
    const csr = await eventually(
      'a kubelet-serving CSR from the node',
      60_000,
      async () => {
        if (proc.exitCode !== null) throw new Error(`kubelet-ts exited ${proc.exitCode}:\n${out}`);
        const list = JSON.parse(kubectl('get', 'csr', '-o', 'json')) as {
          items: { metadata: { name: string }; spec: { signerName: string; username: string } }[];
        };
        return list.items.find((c) => c.spec.signerName === 'kubernetes.io/kubelet-serving' && c.spec.username === `system:node:${name}`)
          ?.metadata.name;
      },
      500,
    );
    kubectl('certificate', 'approve', csr);
    // The same listener now presents the issued certificate, valid for the node IP under the cluster CA.
    const peer = await eventually(
      'the issued serving certificate',
      30_000,
      () =>
        new Promise<{ subject: string; issuer: string } | undefined>((resolve) => {
          const sock = connect({ host: NODE_IP, port: 10350, ca, rejectUnauthorized: true }, () => {
            const c = sock.getPeerX509Certificate();
            sock.destroy();
            resolve(c ? { subject: c.subject, issuer: c.issuer } : undefined);
          });
          sock.on('error', () => resolve(undefined));
        }),
      500,
    );
    assert.match(peer.subject, new RegExp(`CN=system:node:${name}`));
    assert.match(peer.issuer, /CN=kubernetes/);

    // What a Prometheus scrape reads (kube-prometheus-stack's KubeletServerCertificateExpiration):
    // the serving certificate manager's series, and no client certificate series, as upstream
    // with serverTLSBootstrap and without rotateCertificates.
    const metrics = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          host: NODE_IP,
          port: 10350,
          path: '/metrics',
          ca,
          agent: false,
          cert: readFileSync(`${ROOT}/_output/local/pki/admin.crt`),
          key: readFileSync(`${ROOT}/_output/local/pki/admin.key`),
        },
        (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`GET /metrics: ${res.statusCode} ${body}`))));
        },
      );
      req.on('error', reject);
      req.end();
    });
    const ttl = Number(/^kubelet_certificate_manager_server_ttl_seconds (\S+)$/m.exec(metrics)?.[1]);
    // Whole seconds to the issued certificate's end: the stack's signer issues for 3 minutes (hack/lib.sh).
    assert.ok(Number.isInteger(ttl) && ttl > 60 && ttl <= 180, `kubelet_certificate_manager_server_ttl_seconds ${ttl}`);
    assert.match(metrics, /^kubelet_server_expiration_renew_errors 0$/m);
    assert.match(metrics, /^kubelet_certificate_manager_server_rotation_seconds_count 0$/m);
    assert.doesNotMatch(metrics, /kubelet_certificate_manager_client_/);
  } finally {
    if (proc.exitCode === null) {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
    }
    await deleteTestNode(name);
    removeKubeletDir(dir);
  }
});
