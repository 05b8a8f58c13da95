// The command line's promise to operators: a bad start is one line and a non-zero exit.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseLabels } from './flags.ts';
import { CADVISOR, CONFIG_FILE } from './upstream-flags.ts';

const main = new URL('./main.ts', import.meta.url).pathname;
const run = (...args: string[]) => spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 20_000 });
const dir = mkdtempSync(join(tmpdir(), 'kts-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  'apiVersion: v1\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n',
);

// pflag's lines for deprecated flags given come first, as upstream's; the failure is one line.
const deprecation = /^Flag --\S+ has been deprecated, /;
function assertOneLineFailure(r: ReturnType<typeof run>, re: RegExp) {
  assert.equal(r.status, 1, r.stderr);
  const lines = r.stderr.split('\n').filter((l) => l && !deprecation.test(l));
  assert.equal(lines.length, 1, `one line, got:\n${r.stderr}`);
  assert.match(`${lines[0]}\n`, re);
}

test('a missing kubeconfig exits 1 naming it', () =>
  assertOneLineFailure(
    run('--kubeconfig', '/nonexistent/kubelet.conf'),
    /^kubelet-ts: error: cannot read --kubeconfig \/nonexistent\/kubelet.conf/,
  ));

test('an unreachable runtime exits 1 naming the socket', () =>
  assertOneLineFailure(
    run('--kubeconfig', kubeconfig, '--fail-cgroupv1=false', '--container-runtime-endpoint', `unix://${dir}/none.sock`),
    /cannot reach the container runtime at unix:\/\/.*none\.sock/,
  ));

test('an invalid config field exits 1 naming the field', () => {
  const cfg = join(dir, 'config.yaml');
  writeFileSync(cfg, 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: lots\n');
  assertOneLineFailure(run('--kubeconfig', kubeconfig, '--config', cfg), /maxPods: expected an integer/);
});

test("the credential provider flags: a bad config or bin dir exits 1 with upstream's words", () => {
  const cfg = join(dir, 'credential-providers.yaml');
  writeFileSync(
    cfg,
    'apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders: [{name: p, matchImages: [], apiVersion: credentialprovider.kubelet.k8s.io/v1}]\n',
  );
  assertOneLineFailure(
    run('--kubeconfig', kubeconfig, '--image-credential-provider-config', cfg, '--image-credential-provider-bin-dir', dir),
    /^kubelet-ts: error: failed to validate credential provider config: \[providers\.matchImages: Required value: at least 1 item in matchImages is required, providers\.defaultCacheDuration: Required value\]$/m,
  );
  assertOneLineFailure(
    run('--kubeconfig', kubeconfig, '--image-credential-provider-config', cfg),
    /^kubelet-ts: error: plugin binary directory {2}did not exist$/m,
  );
});

test('the credential provider flags: a valid config and bin dir are taken (the start goes on to the runtime)', () => {
  const bin = join(dir, 'credential-bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'p'), '#!/bin/sh\n', { mode: 0o755 });
  const cfg = join(dir, 'credential-providers-ok.yaml');
  writeFileSync(
    cfg,
    'apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders: [{name: p, matchImages: [r.io], defaultCacheDuration: 1m, apiVersion: credentialprovider.kubelet.k8s.io/v1}]\n',
  );
  assertOneLineFailure(
    run(
      '--kubeconfig',
      kubeconfig,
      '--fail-cgroupv1=false',
      '--container-runtime-endpoint',
      `unix://${dir}/none.sock`,
      '--image-credential-provider-config',
      cfg,
      '--image-credential-provider-bin-dir',
      bin,
    ),
    /cannot reach the container runtime at unix:\/\/.*none\.sock/,
  );
});

test('an unknown flag exits 1', () => assertOneLineFailure(run('--no-such-flag'), /Unknown argument/));

test("start-up does not load undici (node:http's ESM facade would, see src/apiserver/client.ts)", () => {
  const hook = `process.on('exit', () => console.log(process.moduleLoadList.some((m) => m.includes('undici'))))`;
  const r = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(hook)}`, main, '--kubeconfig', '/nonexistent'],
    {
      encoding: 'utf8',
      timeout: 20_000,
    },
  );
  assert.match(r.stderr, /cannot read --kubeconfig/, 'got as far as reading the kubeconfig: all modules loaded');
  assert.equal(r.stdout.trim(), 'false');
});

test('--node-labels parses as upstream', () => {
  assert.deepEqual(parseLabels('a=1,node-role.kubernetes.io/worker='), { a: '1', 'node-role.kubernetes.io/worker': '' });
});

test("--version prints 'Kubernetes vX.Y.Z', the line kubeadm's preflight reads", () => {
  const r = run('--version');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout.trim(), /^Kubernetes v\d+\.\d+\.\d+$/);
});

test('an unknown --network-plugin exits 1 naming the choices', () =>
  assertOneLineFailure(run('--kubeconfig', kubeconfig, '--network-plugin', 'weave'), /network-plugin.*Choices: "cni", "kubenet"/));

test('an upstream flag kubelet-ts does not do exits 1 naming it and why', () =>
  assertOneLineFailure(
    run('--kubeconfig', kubeconfig, '--experimental-mounter-path', '/bin/mount'),
    /^kubelet-ts: error: --experimental-mounter-path: a mounter for NFS, CIFS, Ceph and GlusterFS mounts/,
  ));

test("--container-hints: a file that is not cAdvisor's hints stops the start in one line; no file is no hints", () => {
  const dir = mkdtempSync(join(tmpdir(), 'hints-'));
  try {
    writeFileSync(join(dir, 'bad.json'), '{"all_hosts": {"full_path": "/a"}}');
    assertOneLineFailure(
      run('--kubeconfig', kubeconfig, '--container-hints', join(dir, 'bad.json')),
      new RegExp(`^kubelet-ts: error: --container-hints ${dir}/bad\\.json: all_hosts is not a list\n$`),
    );
    // Past the hints, as far as the kubeconfig.
    assertOneLineFailure(run('--kubeconfig', '/nonexistent', '--container-hints', join(dir, 'none.json')), /cannot read --kubeconfig/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("cAdvisor's housekeeping intervals: pflag's line for a bad duration, one line for a zero one", () => {
  assertOneLineFailure(
    run('--kubeconfig', kubeconfig, '--housekeeping-interval', 'soon'),
    /^kubelet-ts: error: invalid argument "soon" for "--housekeeping-interval" flag: time: invalid duration "soon"\n$/,
  );
  assertOneLineFailure(
    run('--kubeconfig', kubeconfig, '--global-housekeeping-interval', '0s'),
    /^kubelet-ts: error: --housekeeping-interval and --global-housekeeping-interval must be greater than 0\n$/,
  );
});

test('--exit-on-lock-contention without --lock-file exits 1 as upstream', () =>
  assertOneLineFailure(
    run('--kubeconfig', kubeconfig, '--exit-on-lock-contention'),
    /^kubelet-ts: error: cannot exit on lock file contention: no lock file specified\n$/,
  ));

test('--config-dir: *.conf drop-ins in lexical order over --config, subdirectories too; flags over all', () => {
  const cfg = join(dir, 'base.yaml');
  const drop = join(dir, 'conf.d');
  const head = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';
  mkdirSync(join(drop, 'sub'), { recursive: true });
  writeFileSync(cfg, `${head}maxPods: 10\n`);
  writeFileSync(join(drop, '10-a.conf'), `${head}maxPods: 20\nenableContentionProfiling: true\n`);
  writeFileSync(join(drop, 'sub', '20-b.conf'), `${head}maxPods: lots\n`);
  writeFileSync(join(drop, '30-c.yaml'), 'not a drop-in');
  // The subdirectory's file is read (and refused, naming it).
  assertOneLineFailure(
    run('--kubeconfig', '/nonexistent', '--config', cfg, '--config-dir', drop),
    /conf\.d\/sub\/20-b\.conf: maxPods: expected an integer/,
  );
  writeFileSync(join(drop, 'sub', '20-b.conf'), `${head}maxPods: 0\n`);
  // A flag mends it; the ignored field the drop-in set then stops the start, named, before the kubeconfig is read.
  assertOneLineFailure(
    run('--kubeconfig', '/nonexistent', '--config', cfg, '--config-dir', drop, '--max-pods=30'),
    /^kubelet-ts: error: KubeletConfiguration fields not in effect in kubelet-ts, set away from upstream's defaults: enableContentionProfiling/,
  );
  writeFileSync(join(drop, '10-a.conf'), `${head}maxPods: 20\n`);
  assertOneLineFailure(
    run('--kubeconfig', '/nonexistent', '--config', cfg, '--config-dir', drop, '--max-pods=30'),
    /cannot read --kubeconfig/,
  );
});

test("failCgroupV1 (true by default) stops the start on a cgroup v1 host with upstream's line; a v2 host goes on", () =>
  assertOneLineFailure(
    run('--kubeconfig', kubeconfig, '--container-runtime-endpoint', `unix://${dir}/none.sock`),
    existsSync('/sys/fs/cgroup/cgroup.controllers')
      ? /cannot reach the container runtime/
      : /kubelet is configured to not run on a host using cgroup v1/,
  ));

test("cAdvisor's unread flags are taken as upstream takes them, with pflag's deprecation line; a bad duration is refused", () => {
  const r = run(
    '--kubeconfig',
    kubeconfig,
    '--fail-cgroupv1=false',
    '--container-runtime-endpoint',
    `unix://${dir}/none.sock`,
    '--storage-driver-db=cadvisor',
    '--event-storage-event-limit=default=0',
  );
  const lines = r.stderr.trim().split('\n');
  // --fail-cgroupv1 is a config flag upstream did not deprecate.
  assert.deepEqual(lines.slice(0, 3), [
    `Flag --container-runtime-endpoint has been deprecated, ${CONFIG_FILE}`,
    `Flag --storage-driver-db has been deprecated, ${CADVISOR}`,
    `Flag --event-storage-event-limit has been deprecated, ${CADVISOR}`,
  ]);
  // Past the flags: the start went on to the runtime.
  assert.match(lines.at(-1)!, /cannot reach the container runtime/);
  assertOneLineFailure(
    run('--kubeconfig', kubeconfig, '--storage-driver-buffer-duration', 'soon'),
    /^kubelet-ts: error: invalid argument "soon" for "--storage-driver-buffer-duration" flag: time: invalid duration "soon"\n$/,
  );
});

test("--containerd naming another socket than the runtime endpoint exits 1 saying so, after pflag's deprecation line", () => {
  const r = run('--kubeconfig', kubeconfig, '--containerd', '/run/k3s/containerd/containerd.sock');
  assert.equal(r.status, 1);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 2, r.stderr);
  assert.match(lines[0]!, /^Flag --containerd has been deprecated, /);
  assert.match(
    lines[1]!,
    /^kubelet-ts: error: --containerd: \/run\/k3s\/containerd\/containerd.sock is not the runtime's socket \(\/run\/containerd\/containerd.sock\)/,
  );
});
