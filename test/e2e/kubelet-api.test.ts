// The kubelet API on :10250 as users reach it: through the apiserver (kubectl logs,
// node proxy) and directly, where only authenticated and authorized callers get in.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { get } from 'node:http';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_KUBECONFIG, BIN, clients, ensureStack, eventually, kubectl, nodeName, withNamespace, BUSYBOX, NODE_IP } from './stack.ts';

before(() => ensureStack());

/** GET https://NODE_IP:10250/path with an optional bearer token; resolves with the status code and body. */
function kubeletGet(path: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: NODE_IP, port: 10250, path, rejectUnauthorized: false, headers: token ? { Authorization: `Bearer ${token}` } : {} }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('kubectl logs: whole, --tail, --timestamps, -f and --previous', () => withNamespace(async (ns) => {
  const { core } = clients();
  const pod = (name: string, restartPolicy: string, script: string) => core.createNamespacedPod({ namespace: ns, body: {
    metadata: { name }, spec: { restartPolicy, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', script] }] },
  } });
  // stdout and stderr are separate pipes: only a pause orders lines across them.
  await pod('talker', 'Always', 'for i in 1 2 3 4 5; do echo line $i; done; sleep 0.5; echo err >&2; sleep 3600');
  await pod('finisher', 'Never', 'echo first; sleep 3; echo last');
  await pod('crasher', 'Always', 'echo run at $(date +%s); exit 1');

  await eventually('six lines logged', 20_000, async () => kubectl('logs', '-n', ns, 'talker').includes('err'));
  assert.equal(kubectl('logs', '-n', ns, 'talker'), 'line 1\nline 2\nline 3\nline 4\nline 5\nerr\n');
  assert.equal(kubectl('logs', '-n', ns, 'talker', '--tail=2'), 'line 5\nerr\n');
  assert.match(kubectl('logs', '-n', ns, 'talker', '--tail=1', '--timestamps'), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z err\n$/);

  // -f streams as lines are written and returns once the container exits.
  await eventually('finisher running', 20_000, async () => (await core.readNamespacedPod({ name: 'finisher', namespace: ns })).status?.phase === 'Running');
  assert.equal(kubectl('logs', '-f', '-n', ns, 'finisher'), 'first\nlast\n');

  // After a restart, --previous shows the run before the current one.
  await eventually('a restart', 30_000, async () => ((await core.readNamespacedPod({ name: 'crasher', namespace: ns })).status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1);
  assert.match(kubectl('logs', '-n', ns, 'crasher', '--previous'), /^run at \d+\n$/);

  const missing = (() => { try { kubectl('logs', '-n', ns, 'talker', '-c', 'nope'); return ''; } catch (e) { return String((e as { stderr?: string }).stderr); } })();
  assert.match(missing, /nope/, 'an unknown container is named in the error');
}));

test('node proxy: healthz and metrics with upstream names', async () => {
  assert.equal(kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/healthz`), 'ok');
  const metrics = kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`);
  for (const m of ['kubelet_node_name', 'kubelet_running_pods', 'kubelet_pleg_relist_duration_seconds_bucket', 'kubelet_runtime_operations_total']) {
    assert.match(metrics, new RegExp(`^${m}`, 'm'), m);
  }
});

test('anonymous requests get 401; a service account without node rights gets 403', () => withNamespace(async (ns) => {
  assert.equal((await kubeletGet('/pods')).status, 401);
  const token = kubectl('create', 'token', 'default', '-n', ns).trim();
  const denied = await kubeletGet('/pods', token);
  assert.equal(denied.status, 403);
  assert.match(denied.body, new RegExp(`user=system:serviceaccount:${ns}:default`));
}));

/** kubectl with stdin, returning status and output instead of throwing. */
function kubectlRun(input: string, ...args: string[]) {
  return spawnSync(`${BIN}/kubectl`, ['--kubeconfig', ADMIN_KUBECONFIG, ...args], { input, encoding: 'utf8', timeout: 60_000 });
}

async function runningPod(ns: string, name: string, script: string) {
  const { core } = clients();
  await core.createNamespacedPod({ namespace: ns, body: {
    metadata: { name }, spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', script] }] },
  } });
  await eventually(`${name} Running`, 20_000, async () => (await core.readNamespacedPod({ name, namespace: ns })).status?.phase === 'Running');
}

test('kubectl exec: output, exit code, stdin; kubectl cp both ways', () => withNamespace(async (ns) => {
  await runningPod(ns, 'box', 'sleep 3600');
  const r = kubectlRun('', 'exec', '-n', ns, 'box', '--', 'sh', '-c', 'echo out; echo err >&2; exit 7');
  assert.equal(r.status, 7, r.stderr);
  assert.equal(r.stdout, 'out\n');
  assert.match(r.stderr, /err\n/);
  assert.equal(kubectlRun('piped through stdin\n', 'exec', '-i', '-n', ns, 'box', '--', 'cat').stdout, 'piped through stdin\n');

  const dir = mkdtempSync(join(tmpdir(), 'kts-cp-'));
  writeFileSync(join(dir, 'up.txt'), 'copied up\n');
  kubectl('cp', join(dir, 'up.txt'), `${ns}/box:/tmp/up.txt`);
  assert.equal(kubectl('exec', '-n', ns, 'box', '--', 'cat', '/tmp/up.txt'), 'copied up\n');
  kubectl('cp', `${ns}/box:/tmp/up.txt`, join(dir, 'down.txt'));
  assert.equal(readFileSync(join(dir, 'down.txt'), 'utf8'), 'copied up\n');
}));

test('kubectl port-forward reaches an httpd in the pod', () => withNamespace(async (ns) => {
  await runningPod(ns, 'web', 'mkdir -p /www && echo served by busybox > /www/index.html && httpd -f -p 8080 -h /www');
  const port = 18000 + Math.floor(Math.random() * 1000);
  const pf = spawn(`${BIN}/kubectl`, ['--kubeconfig', ADMIN_KUBECONFIG, 'port-forward', '-n', ns, 'pod/web', `${port}:8080`], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const body = await eventually('a response through the forwarded port', 20_000, () => new Promise<string | undefined>((resolve) => {
      get(`http://127.0.0.1:${port}/index.html`, (res) => { let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => resolve(b)); })
        .on('error', () => resolve(undefined));
    }), 300);
    assert.equal(body, 'served by busybox\n');
  } finally {
    pf.kill();
  }
}));

test('metrics/resource through the node proxy: node, pod and container CPU and memory, as metrics-server reads them', () => withNamespace(async (ns) => {
  await runningPod(ns, 'busy', 'while true; do :; done');
  const text = await eventually('the pod in metrics/resource', 30_000, async () => {
    const t = kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics/resource`);
    return t.includes(`pod="busy"`) ? t : undefined;
  }, 1000);
  assert.match(text, /^node_cpu_usage_seconds_total \d+(\.\d+)? \d{13}$/m);
  assert.match(text, /^node_memory_working_set_bytes \d+ \d{13}$/m);
  const cpu = Number(new RegExp(`^container_cpu_usage_seconds_total\\{container="main",namespace="${ns}",pod="busy"\\} ([\\d.e+-]+) \\d{13}$`, 'm').exec(text)?.[1]);
  assert.ok(cpu > 0, `a busy container uses CPU (got ${cpu})`);
  assert.match(text, new RegExp(`^container_memory_working_set_bytes\\{container="main",namespace="${ns}",pod="busy"\\} [1-9]\\d* \\d{13}$`, 'm'));
  assert.match(text, new RegExp(`^pod_cpu_usage_seconds_total\\{namespace="${ns}",pod="busy"\\} `, 'm'));
  assert.match(text, /^scrape_error 0$/m);
}));
