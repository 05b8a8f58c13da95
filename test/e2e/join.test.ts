// Joining a node the way an operator does with kubeadm's token discovery, using
// `kubelet-ts join`. The joining kubelet runs beside the stack's own (other node name,
// ports and directories) on the same containerd.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT, BIN, clients, ensureStack, eventually, NODE_IP } from './stack.ts';
import { caCertHash } from '../../src/join/discovery.ts';

before(() => ensureStack());

const token = () => readFileSync(`${ROOT}/_output/local/bootstrap-token`, 'utf8').trim();
const pin = () => caCertHash(readFileSync(`${ROOT}/_output/local/pki/ca.crt`, 'utf8'));
const main = `${ROOT}/dist/cli/main.js`;

function joinArgs(dir: string, name: string, hash: string) {
  return ['join', `${NODE_IP}:6443`, '--token', token(), '--discovery-token-ca-cert-hash', hash,
    '--hostname-override', name, '--node-ip', NODE_IP, '--port', '10350', '--healthz-port', '10348',
    '--root-dir', join(dir, 'root'), '--kubeconfig', join(dir, 'kubelet.conf'), '--bootstrap-kubeconfig', join(dir, 'bootstrap-kubelet.conf'),
    '--config', join(dir, 'config.yaml'), '--cni-conf-dir', join(dir, 'cni')];
}

test('join with a wrong CA hash is refused with one clear line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-join-'));
  const r = spawnSync(`${BIN}/node`, [main, ...joinArgs(dir, 'never-joins', `sha256:${'0'.repeat(64)}`)], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^kubelet-ts: error: the cluster CA's public key hash sha256:[0-9a-f]{64} matches none of --discovery-token-ca-cert-hash/);
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
    const node = await eventually(`node ${name} Ready`, 60_000, async () => {
      if (proc.exitCode !== null) throw new Error(`kubelet-ts join exited ${proc.exitCode}:\n${out}`);
      const n = await core.readNode({ name }).catch(() => undefined);
      return n?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? n : undefined;
    }, 500);
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
    await core.deleteNode({ name }).catch(() => {});
  }
});
