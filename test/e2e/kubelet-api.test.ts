// The kubelet API on :10250 as users reach it: through the apiserver (kubectl logs,
// node proxy) and directly, where only authenticated and authorized callers get in.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { connect, type ConnectionOptions } from 'node:tls';
import { get } from 'node:http';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ADMIN_KUBECONFIG,
  BIN,
  clients,
  ensureStack,
  eventually,
  kubectl,
  nodeName,
  restartKubelet,
  RUNTIME,
  seriesValue,
  withNamespace,
  BUSYBOX,
  KUBELET_ROOT_DIR,
  NODE_IP,
  ROOT,
} from './stack.ts';

before(() => ensureStack());

/** The cluster admin's client certificate, which the kubelet authenticates (its CA is the cluster's). */
const ADMIN_CERT = { cert: `${ROOT}/_output/local/pki/admin.crt`, key: `${ROOT}/_output/local/pki/admin.key` };

/**
 * GET https://NODE_IP:10250/path with an optional bearer token or client certificate;
 * resolves with the status code and body. The path is sent as is (not cleaned, unlike kubectl's).
 */
/**
 * GET https://NODE_IP:10250/path, with a bearer token, a client certificate or these request
 * headers: status, content type and body. A connection of its own each time (no keep-alive
 * agent): a pooled one would outlive the kubelet restarts of the tests between two calls.
 */
function kubeletGet(
  path: string,
  token?: string,
  client?: typeof ADMIN_CERT,
  headers: Record<string, string> = {},
): Promise<{ status: number; type?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const tls = client ? { cert: readFileSync(client.cert), key: readFileSync(client.key) } : {};
    const req = request(
      {
        host: NODE_IP,
        port: 10250,
        path,
        agent: false,
        rejectUnauthorized: false,
        ...tls,
        headers: { ...headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      },
      (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

test('kubectl logs: whole, --tail, --timestamps, -f and --previous', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const pod = (name: string, restartPolicy: string, script: string) =>
      core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name },
          spec: {
            restartPolicy,
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', script] }],
          },
        },
      });
    // stdout and stderr are separate pipes: only a pause orders lines across them.
    await pod('talker', 'Always', 'for i in 1 2 3 4 5; do echo line $i; done; sleep 0.5; echo err >&2; sleep 3600');
    await pod('finisher', 'Never', 'echo first; sleep 3; echo last');
    await pod('crasher', 'Always', 'echo run at $(date +%s); exit 1');

    await eventually('six lines logged', 20_000, async () => kubectl('logs', '-n', ns, 'talker').includes('err'));
    assert.equal(kubectl('logs', '-n', ns, 'talker'), 'line 1\nline 2\nline 3\nline 4\nline 5\nerr\n');
    assert.equal(kubectl('logs', '-n', ns, 'talker', '--tail=2'), 'line 5\nerr\n');
    assert.match(kubectl('logs', '-n', ns, 'talker', '--tail=1', '--timestamps'), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z err\n$/);

    // -f streams as lines are written and returns once the container exits.
    await eventually(
      'finisher running',
      20_000,
      async () => (await core.readNamespacedPod({ name: 'finisher', namespace: ns })).status?.phase === 'Running',
    );
    assert.equal(kubectl('logs', '-f', '-n', ns, 'finisher'), 'first\nlast\n');

    // After a restart, --previous shows the run before the current one.
    await eventually(
      'a restart',
      30_000,
      async () =>
        ((await core.readNamespacedPod({ name: 'crasher', namespace: ns })).status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1,
    );
    assert.match(kubectl('logs', '-n', ns, 'crasher', '--previous'), /^run at \d+\n$/);

    const missing = (() => {
      try {
        kubectl('logs', '-n', ns, 'talker', '-c', 'nope');
        return '';
      } catch (e) {
        return String((e as { stderr?: string }).stderr);
      }
    })();
    assert.match(missing, /nope/, 'an unknown container is named in the error');
  }));

test('node proxy: healthz, and metrics with upstream names that count what the kubelet did', () =>
  withNamespace(async (ns) => {
    assert.equal(kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/healthz`), 'ok');
    const scrape = () => kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`);
    const before = scrape();
    for (const m of [
      'kubelet_node_name',
      'kubelet_running_pods',
      'kubelet_running_containers',
      'kubelet_pod_worker_duration_seconds_bucket',
      'kubelet_pleg_relist_duration_seconds_bucket',
      'kubelet_pleg_relist_interval_seconds_bucket',
      'kubelet_pleg_last_seen_seconds',
      'kubelet_runtime_operations_total',
      'kubelet_runtime_operations_duration_seconds_bucket',
      'kubelet_desired_pods',
      'kubelet_working_pods',
      'kubelet_http_requests_total',
      'kubelet_http_requests_duration_seconds_bucket',
      'kubelet_http_inflight_requests',
      'kubelet_cgroup_version',
      'kubelet_restarted_pods_total{static="true"}',
      'kubelet_lifecycle_handler_http_fallbacks_total',
      'kubelet_node_startup_duration_seconds',
      'kubelet_orphan_pod_cleaned_volumes',
      'kubelet_orphan_pod_cleaned_volumes_errors',
      'kubelet_metrics_provider{provider="cadvisor"} 1',
      'kubelet_pleg_discard_events 0',
      'kubernetes_feature_enabled{name="ExtendWebSocketsToKubelet",stage="BETA"} 1',
      'kubernetes_feature_enabled{name="NodeLogQuery",stage=""} 1',
      'reconstruct_volume_operations_total',
      'force_cleaned_failed_volume_operations_total',
      'process_resident_memory_bytes',
      'process_cpu_seconds_total',
      'process_start_time_seconds',
      'process_open_fds',
      'process_network_receive_bytes_total',
      'process_network_transmit_bytes_total',
      'process_virtual_memory_max_bytes',
    ])
      assert.match(before, new RegExp(`^${m}`, 'm'), m);
    // upstream's featureGate.AddMetrics: a series for every gate of the release's gate set.
    assert.equal(before.match(/^kubernetes_feature_enabled\{/gm)?.length, 242, 'kubernetes_feature_enabled series');

    // One pod with an init container: its start, its containers and the init container's end are counted.
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'counted' },
        spec: {
          terminationGracePeriodSeconds: 1,
          initContainers: [{ name: 'init', image: BUSYBOX, command: ['true'] }],
          // 8 KiB of log, for kubelet_container_log_filesystem_used_bytes.
          containers: [
            { name: 'main', image: BUSYBOX, command: ['sh', '-c', 'head -c 8192 /dev/zero | tr "\\0" x; echo; exec sleep 3600'] },
          ],
        },
      },
    });
    await eventually(
      "pod counted Running and seen so by the kubelet's watch",
      60_000,
      async () => (await core.readNamespacedPod({ name: 'counted', namespace: ns })).status?.containerStatuses?.[0]?.state?.running,
    );
    const grew = (series: string, after: string) => seriesValue(after, series) - seriesValue(before, series);
    const after = await eventually('the start-up SLI observed', 20_000, async () => {
      const m = scrape();
      return grew('kubelet_pod_start_sli_duration_seconds_count', m) >= 1 && m;
    });
    for (const series of [
      'kubelet_pod_start_duration_seconds_count',
      'kubelet_pod_start_total_duration_seconds_count',
      'kubelet_pod_worker_start_duration_seconds_count',
      'kubelet_pod_worker_duration_seconds_count{operation_type="create"}',
      'kubelet_started_pods_total',
      'kubelet_started_containers_total{container_type="init_container"}',
      'kubelet_started_containers_total{container_type="container"}',
      'kubelet_terminated_containers_total{container_type="init_container",exit_code="0",reason="Completed"}',
      'kubelet_run_podsandbox_duration_seconds_count{runtime_handler=""}',
      'kubelet_containers_per_pod_count_count',
      // busybox is on the node, IfNotPresent by its tag: found, no pull.
      'kubelet_image_manager_ensure_image_requests_total{pull_policy="ifnotpresent",present_locally="true",pull_required="false"}',
      'kubelet_cgroup_manager_duration_seconds_count{operation_type="create"}',
      'kubelet_cgroup_manager_duration_seconds_count{operation_type="update"}',
      'kubelet_pod_status_sync_duration_seconds_count',
      'kubelet_http_requests_total{method="GET",path="metrics",server_type="readwrite",long_running="false"}',
    ])
      assert.ok(grew(series, after) >= 1, `${series} grew`);
    assert.ok(seriesValue(after, 'kubelet_desired_pods{static=""}') >= 1, 'the pod is desired');
    assert.ok(seriesValue(after, 'kubelet_working_pods{lifecycle="sync",config="desired",static=""}') >= 1, 'and worked on');
    // Start-up latencies are real durations: seconds, not zero, not hours.
    const sum = (name: string) => grew(`${name}_sum`, after) / grew(`${name}_count`, after);
    for (const name of ['kubelet_pod_start_duration_seconds', 'kubelet_pod_start_total_duration_seconds']) {
      assert.ok(sum(name) > 0 && sum(name) < 60, `${name}: ${sum(name)} s`);
    }
    // The container's log size, labelled by its pod, once the stats have sampled it.
    const uid = (await core.readNamespacedPod({ name: 'counted', namespace: ns })).metadata!.uid!;
    const logSeries = `kubelet_container_log_filesystem_used_bytes{uid="${uid}",namespace="${ns}",pod="counted",container="main"}`;
    const logBytes = await eventually(
      'the log size of the main container',
      30_000,
      async () => seriesValue(scrape(), logSeries) >= 8192 && seriesValue(scrape(), logSeries),
    );
    assert.ok(logBytes < 1 << 20, `${logSeries}: ${logBytes}`);
    // The kubelet's heap trimmed (src/process/heap-trim.ts): at its first look, 30 s after the start, and each time it grew.
    await eventually('the heap trimmed', 45_000, async () => {
      const m = scrape();
      return (
        seriesValue(m, 'kubelet_ts_heap_trim_duration_seconds_count') >= 1 && seriesValue(m, 'kubelet_ts_heap_trim_freed_bytes_total') > 0
      );
    });
    // Its kube-api-access volume is walked as upstream's du is timed.
    await eventually(
      'a du of a volume timed',
      30_000,
      async () => seriesValue(scrape(), 'kubelet_volume_metric_collection_duration_seconds_count{metric_source="du"}') > 0,
    );
  }));

test("metrics: the volume manager's and storage operations' series, and client-go's request latency, under upstream names", () =>
  withNamespace(async (ns) => {
    const scrape = () => kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`);
    const before = scrape();
    const { core } = clients();
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'settings' }, data: { color: 'blue' } } });
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'with-config' },
        spec: {
          terminationGracePeriodSeconds: 1,
          volumes: [{ name: 'settings', configMap: { name: 'settings' } }],
          containers: [
            { name: 'main', image: BUSYBOX, command: ['sleep', '3600'], volumeMounts: [{ name: 'settings', mountPath: '/settings' }] },
          ],
        },
      },
    });
    await eventually(
      'pod with-config Running',
      60_000,
      async () => (await core.readNamespacedPod({ name: 'with-config', namespace: ns })).status?.containerStatuses?.[0]?.state?.running,
    );
    const after = scrape();
    const cm = 'plugin_name="kubernetes.io/configmap"';
    // upstream's totalVolumesCollector, computed at scrape: the pod's configMap volume is mounted and wanted.
    assert.ok(
      seriesValue(after, `volume_manager_total_volumes{${cm},state="actual_state_of_world"}`) >= 1,
      'configMap in the actual state',
    );
    assert.ok(
      seriesValue(after, `volume_manager_total_volumes{${cm},state="desired_state_of_world"}`) >= 1,
      'configMap in the desired state',
    );
    // pkg/volume/util's histograms: the set-up is a volume_mount that succeeded, and its end-to-end time is observed.
    const grew = (series: string) => seriesValue(after, series) - seriesValue(before, series);
    const mount =
      'storage_operation_duration_seconds_count{volume_plugin="kubernetes.io/configmap",operation_name="volume_mount",status="success",migrated="false"}';
    assert.ok(grew(mount) >= 1, `${mount} grew`);
    assert.ok(
      grew(`volume_operation_total_seconds_count{${cm},operation_name="overall_volume_mount"}`) >= 1,
      'overall_volume_mount observed',
    );
    assert.match(after, /^# HELP storage_operation_duration_seconds \[ALPHA\] Storage operation duration$/m);
    // client-go's latency histogram beside its counter: the kubelet's GETs (the pod, the ConfigMap) timed by verb and host.
    assert.match(after, /^# TYPE rest_client_request_duration_seconds histogram$/m);
    assert.match(after, /^rest_client_request_duration_seconds_bucket\{(?=[^}]*verb="GET")(?=[^}]*le="\+Inf")[^}]*\} [1-9]/m);
    assert.match(after, /^rest_client_request_size_bytes_count\{verb="PATCH",host="[^"]+"\} [1-9]/m, 'status patches sized');
    assert.match(
      after,
      /^rest_client_rate_limiter_duration_seconds_count\{verb="PATCH",host="[^"]+"\} [1-9]/m,
      "status patches through kubeAPIQPS's limiter",
    );
  }));

test('anonymous requests get 401; a service account without node rights gets 403', () =>
  withNamespace(async (ns) => {
    assert.equal((await kubeletGet('/pods')).status, 401);
    const token = kubectl('create', 'token', 'default', '-n', ns).trim();
    const denied = await kubeletGet('/pods', token);
    assert.equal(denied.status, 403);
    assert.match(denied.body, new RegExp(`user=system:serviceaccount:${ns}:default`));
  }));

// Upstream's authorization of the kubelet API (server/auth.go GetRequestAttributes): stats,
// metrics and logs have their own subresource of nodes, everything else is nodes/proxy.
// A token allowed one subresource gets in at its paths and is refused (403) at the others.
test('each path asks for its own subresource: nodes/stats, nodes/metrics, nodes/log, else nodes/proxy', () =>
  withNamespace(async (ns) => {
    // The path, and the subresources a 403 names (/pods tries the fine-grained nodes/pods first).
    const paths = {
      stats: ['/stats/summary', 'stats'],
      metrics: ['/metrics', 'metrics'],
      log: ['/logs/', 'log'],
      proxy: ['/pods', 'pods proxy'],
    };
    for (const sub of Object.keys(paths) as (keyof typeof paths)[]) {
      const who = `node-${sub}-${ns}`;
      kubectl('create', 'serviceaccount', who, '-n', ns);
      kubectl('create', 'clusterrole', who, '--verb=get', `--resource=nodes/${sub}`);
      kubectl('create', 'clusterrolebinding', who, `--clusterrole=${who}`, `--serviceaccount=${ns}:${who}`);
      try {
        const token = kubectl('create', 'token', who, '-n', ns).trim();
        for (const [other, [path, asked]] of Object.entries(paths)) {
          const { status, body } = await kubeletGet(path!, token);
          if (other === sub) assert.equal(status, 200, `${who} at ${path}: ${body.slice(0, 200)}`);
          else {
            assert.equal(status, 403, `${who} at ${path}`);
            assert.ok(body.includes(`resource=nodes, subresource(s)=[${asked}])`), body);
          }
        }
      } finally {
        kubectl('delete', 'clusterrolebinding,clusterrole', who, '--ignore-not-found');
      }
    }
  }));

test('the read-only port is off unless configured (readOnlyPort 0, as a kubeadm node)', async () => {
  const refused = await fetch('http://127.0.0.1:10255/pods', { signal: AbortSignal.timeout(3000) }).then(
    () => false,
    (e: Error & { cause?: { code?: string } }) => e.cause?.code === 'ECONNREFUSED',
  );
  assert.ok(refused, 'nothing listens on 10255');
});

/** kubectl with stdin, returning status and output instead of throwing. */
function kubectlRun(input: string, ...args: string[]) {
  return spawnSync(`${BIN}/kubectl`, ['--kubeconfig', ADMIN_KUBECONFIG, ...args], { input, encoding: 'utf8', timeout: 60_000 });
}

async function runningPod(ns: string, name: string, script: string) {
  const { core } = clients();
  await core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name },
      spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', script] }] },
    },
  });
  await eventually(
    `${name} Running`,
    20_000,
    async () => (await core.readNamespacedPod({ name, namespace: ns })).status?.phase === 'Running',
  );
}

/** The kubelet's count of the WebSocket streams it translated (ExtendWebSocketsToKubelet), for one subresource. */
const webSocketStreams = (subresource: string) =>
  seriesValue(
    kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`),
    `kubelet_websocket_streaming_requests_total{subresource="${subresource}"}`,
  );

// kubectl speaks WebSocket v5 first; the Node declares ExtendWebSocketsToKubelet, so the
// apiserver passes it through and the kubelet translates it to the runtime's SPDY.
test('kubectl exec over WebSocket: output, exit code, stdin and its close, a TTY and its size; kubectl cp both ways', () =>
  withNamespace(async (ns) => {
    await runningPod(ns, 'box', 'sleep 3600');
    const before = webSocketStreams('exec');
    const r = kubectlRun('', 'exec', '-n', ns, 'box', '--', 'sh', '-c', 'echo out; echo err >&2; exit 7');
    assert.equal(r.status, 7, r.stderr);
    assert.equal(r.stdout, 'out\n');
    assert.match(r.stderr, /err\n/);
    assert.equal(kubectlRun('piped through stdin\n', 'exec', '-i', '-n', ns, 'box', '--', 'cat').stdout, 'piped through stdin\n');
    assert.equal(webSocketStreams('exec') - before, 2, 'both translated by the kubelet');
    // A terminal (script(1) gives kubectl one): the size kubectl sends reaches the container's
    // TTY (a moment after the start, as upstream's resize queue delivers it).
    const tty = spawnSync(
      'script',
      [
        '-qec',
        `stty cols 123 rows 45; ${BIN}/kubectl --kubeconfig ${ADMIN_KUBECONFIG} exec -it -n ${ns} box -- sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do s=$(stty size 2>/dev/null); [ -n "$s" ] && [ "$s" != "0 0" ] && break; sleep 0.3; done; echo "size $s on $(tty)"; exit 3'`,
        '/dev/null',
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.match(tty.stdout, /size 45 123 on \/dev\/pts\/\d+/, tty.stdout + tty.stderr);
    assert.equal(tty.status, 3, 'the exit code through the TTY session');

    const dir = mkdtempSync(join(tmpdir(), 'kts-cp-'));
    writeFileSync(join(dir, 'up.txt'), 'copied up\n');
    kubectl('cp', join(dir, 'up.txt'), `${ns}/box:/tmp/up.txt`);
    assert.equal(kubectl('exec', '-n', ns, 'box', '--', 'cat', '/tmp/up.txt'), 'copied up\n');
    kubectl('cp', `${ns}/box:/tmp/up.txt`, join(dir, 'down.txt'));
    assert.equal(readFileSync(join(dir, 'down.txt'), 'utf8'), 'copied up\n');
  }));

test('kubectl port-forward reaches an httpd in the pod, tunnelled over WebSocket; kubectl attach', () =>
  withNamespace(async (ns) => {
    await runningPod(ns, 'web', 'mkdir -p /www && echo served by busybox > /www/index.html && httpd -f -p 8080 -h /www');
    const forwards = webSocketStreams('portforward');
    const port = 18000 + Math.floor(Math.random() * 1000);
    const pf = spawn(`${BIN}/kubectl`, ['--kubeconfig', ADMIN_KUBECONFIG, 'port-forward', '-n', ns, 'pod/web', `${port}:8080`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const body = await eventually(
        'a response through the forwarded port',
        20_000,
        () =>
          new Promise<string | undefined>((resolve) => {
            get(`http://127.0.0.1:${port}/index.html`, (res) => {
              let b = '';
              res.on('data', (c) => (b += c));
              res.on('end', () => resolve(b));
            }).on('error', () => resolve(undefined));
          }),
        300,
      );
      assert.equal(body, 'served by busybox\n');
      assert.equal(webSocketStreams('portforward') - forwards, 1, 'its SPDY tunnelled by the kubelet');
    } finally {
      pf.kill();
    }

    // kubectl run -i attaches to the new container: stdin in, output back, the exit code.
    const attaches = webSocketStreams('attach');
    const run = kubectlRun(
      'hello\n',
      'run',
      '-n',
      ns,
      'attached',
      `--image=${BUSYBOX}`,
      '--restart=Never',
      '-i',
      '--',
      'sh',
      '-c',
      'read x; echo "got $x"; exit 4',
    );
    assert.match(run.stdout, /got hello/, run.stderr);
    assert.equal(run.status, 4, run.stderr);
    assert.equal(webSocketStreams('attach') - attaches, 1, 'translated by the kubelet');
  }));

test('metrics/resource through the node proxy: node, pod and container CPU and memory, as metrics-server reads them', () =>
  withNamespace(async (ns) => {
    await runningPod(ns, 'busy', 'while true; do :; done');
    const text = await eventually(
      'the pod in metrics/resource',
      30_000,
      async () => {
        const t = kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics/resource`);
        return t.includes(`pod="busy"`) ? t : undefined;
      },
      1000,
    );
    assert.match(text, /^node_cpu_usage_seconds_total \d+(\.\d+)? \d{13}$/m);
    assert.match(text, /^node_memory_working_set_bytes \d+ \d{13}$/m);
    const cpu = Number(
      new RegExp(`^container_cpu_usage_seconds_total\\{container="main",namespace="${ns}",pod="busy"\\} ([\\d.e+-]+) \\d{13}$`, 'm').exec(
        text,
      )?.[1],
    );
    assert.ok(cpu > 0, `a busy container uses CPU (got ${cpu})`);
    assert.match(
      text,
      new RegExp(`^container_memory_working_set_bytes\\{container="main",namespace="${ns}",pod="busy"\\} [1-9]\\d* \\d{13}$`, 'm'),
    );
    assert.match(text, new RegExp(`^pod_cpu_usage_seconds_total\\{namespace="${ns}",pod="busy"\\} `, 'm'));
    // Swap as upstream reports it (0 on a node without swap), and the start time untimestamped.
    assert.match(text, /^node_swap_usage_bytes \d+ \d{13}$/m);
    assert.match(text, new RegExp(`^container_swap_usage_bytes\\{container="main",namespace="${ns}",pod="busy"\\} \\d+ \\d{13}$`, 'm'));
    assert.match(text, new RegExp(`^container_start_time_seconds\\{container="main",namespace="${ns}",pod="busy"\\} [\\d.e+]+$`, 'm'));
    assert.match(text, /^resource_scrape_error 0$/m);
  }));

/** A pod that burns a little CPU, then sleeps: its figures are non-zero but it costs the node nothing. */
async function smallPod(ns: string, name: string) {
  const { core } = clients();
  const pod = await core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'main',
            image: BUSYBOX,
            command: ['sh', '-c', 'i=0; while [ $i -lt 50000 ]; do i=$((i+1)); done; echo counted; sleep 3600'],
          },
        ],
      },
    },
  });
  await eventually(
    `${name} Running`,
    30_000,
    async () => (await core.readNamespacedPod({ name, namespace: ns })).status?.phase === 'Running',
  );
  return pod.metadata!.uid!;
}

const proxy = (path: string) => kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy${path}`);

test('stats/summary through the node proxy: the node, and the test pod with its memory working set and CPU time', () =>
  withNamespace(async (ns) => {
    const uid = await smallPod(ns, 'stats');
    // Stats are sampled every ~10 s: the pod shows up within two samples.
    const summary = await eventually(
      'the pod in /stats/summary',
      40_000,
      async () => {
        const s = JSON.parse(proxy('/stats/summary'));
        return s.pods.some((p: any) => p.podRef.uid === uid && p.containers.length) ? s : undefined;
      },
      2000,
    );
    const node = summary.node;
    assert.equal(node.nodeName, nodeName());
    assert.match(node.startTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.ok(node.cpu.usageCoreNanoSeconds > 0, 'node CPU time');
    assert.ok(node.memory.workingSetBytes > 0 && node.memory.availableBytes > 0, 'node memory');
    assert.ok(node.fs.capacityBytes > node.fs.availableBytes && node.fs.inodes > 0, 'node fs (the kubelet root dir)');
    assert.ok(node.runtime.imageFs.usedBytes > 0 && node.runtime.imageFs.capacityBytes > 0, 'image fs from CRI and statfs');
    assert.ok(node.rlimit.maxpid > 0 && node.rlimit.curproc > 0, 'rlimit');

    const pod = summary.pods.find((p: any) => p.podRef.uid === uid);
    assert.deepEqual(pod.podRef, { name: 'stats', namespace: ns, uid });
    const main = pod.containers.find((c: any) => c.name === 'main');
    assert.ok(main, 'the container is listed');
    assert.ok(main.memory.workingSetBytes > 0, `container working set (got ${main.memory.workingSetBytes})`);
    assert.ok(main.cpu.usageCoreNanoSeconds > 0, `container CPU time (got ${main.cpu.usageCoreNanoSeconds})`);
    assert.ok(main.rootfs.capacityBytes > 0 && main.logs.usedBytes > 0, 'container rootfs and logs');
    assert.ok(pod.memory.workingSetBytes > 0 && pod.cpu.usageCoreNanoSeconds > 0, 'pod cgroup figures');
    assert.ok(pod['ephemeral-storage'].usedBytes > 0, 'ephemeral storage');
    assert.equal(pod.network.name, 'eth0', 'the pod network namespace');

    // usageNanoCores needs two samples; the node has had them by now or within one more.
    await eventually('node usageNanoCores', 25_000, async () => JSON.parse(proxy('/stats/summary')).node.cpu.usageNanoCores > 0, 2000);

    const small = JSON.parse(proxy('/stats/summary?only_cpu_and_memory=true'));
    // (And swap, as upstream's GetCPUAndMemoryStats.)
    for (const k of Object.keys(small.node))
      assert.ok(['nodeName', 'systemContainers', 'startTime', 'cpu', 'memory', 'swap'].includes(k), `only CPU and memory: ${k}`);
    assert.ok(small.node.cpu && small.node.memory);
    assert.ok(small.pods.find((p: any) => p.podRef.uid === uid).containers[0].memory.workingSetBytes > 0);
    assert.equal(
      (await kubeletGet('/stats/summary?only_cpu_and_memory=perhaps', undefined, ADMIN_CERT)).status,
      400,
      'a malformed query is a 400',
    );
  }));

test("stats/summary: a pod's volumes with their usage, emptyDir in its ephemeral storage; PSI and swap as upstream shapes them", () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const pod = await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'filler' },
        spec: {
          terminationGracePeriodSeconds: 1,
          volumes: [
            { name: 'scratch', emptyDir: {} },
            { name: 'shm', emptyDir: { medium: 'Memory' } },
          ],
          containers: [
            {
              name: 'main',
              image: BUSYBOX,
              command: [
                'sh',
                '-c',
                'dd if=/dev/zero of=/scratch/f bs=1M count=20 && dd if=/dev/zero of=/shm/f bs=1M count=5 && sleep 3600',
              ],
              volumeMounts: [
                { name: 'scratch', mountPath: '/scratch' },
                { name: 'shm', mountPath: '/shm' },
              ],
            },
          ],
        },
      },
    });
    const MiB = 2 ** 20;
    const stats = await eventually(
      "the emptyDir's 20 MiB in the pod's volume stats",
      60_000,
      async () => {
        const p = JSON.parse(proxy('/stats/summary')).pods.find((x: any) => x.podRef.uid === pod.metadata!.uid);
        return p?.volume?.find((v: any) => v.name === 'scratch')?.usedBytes >= 20 * MiB ? p : undefined;
      },
      2000,
    );
    const scratch = stats.volume.find((v: any) => v.name === 'scratch');
    assert.ok(scratch.capacityBytes > scratch.availableBytes && scratch.inodesUsed >= 2, JSON.stringify(scratch));
    const shm = stats.volume.find((v: any) => v.name === 'shm');
    assert.ok(shm && shm.usedBytes >= 5 * MiB, `the tmpfs volume is listed with its own usage: ${JSON.stringify(shm)}`);
    // The disk-backed emptyDir counts in ephemeral storage, the memory-backed one does not.
    assert.ok(
      stats['ephemeral-storage'].usedBytes >= 20 * MiB && stats['ephemeral-storage'].usedBytes < 25 * MiB,
      JSON.stringify(stats['ephemeral-storage']),
    );

    const node = JSON.parse(proxy('/stats/summary')).node;
    for (const part of ['cpu', 'memory']) assert.deepEqual(Object.keys(node[part].psi).sort(), ['full', 'some'], `node ${part}.psi`);
    assert.deepEqual(Object.keys(node.io.psi.some).sort(), ['avg10', 'avg300', 'avg60', 'total']);
    assert.equal(typeof node.swap.swapUsageBytes, 'number');
  }));

test('volumeStatsAggPeriod: -1s: no volume stats in /stats/summary (upstream calculates none), the containers still measured', (t) =>
  withNamespace(async (ns) => {
    t.after(() => restartKubelet());
    restartKubelet('volumeStatsAggPeriod: -1s\n');
    const { core } = clients();
    const pod = await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'unmeasured' },
        spec: {
          terminationGracePeriodSeconds: 1,
          volumes: [{ name: 'scratch', emptyDir: {} }],
          containers: [
            {
              name: 'main',
              image: BUSYBOX,
              command: ['sh', '-c', 'dd if=/dev/zero of=/scratch/f bs=1M count=20 && sleep 3600'],
              volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
            },
          ],
        },
      },
    });
    const inSummary = async () => JSON.parse(proxy('/stats/summary')).pods.find((x: any) => x.podRef.uid === pod.metadata!.uid);
    await eventually('the pod and its container in /stats/summary', 60_000, async () => (await inSummary())?.containers.length > 0, 2000);
    // With the default period the test above sees the emptyDir measured within a minute: give it 45 s.
    await new Promise((r) => setTimeout(r, 45_000));
    const p = await inSummary();
    assert.ok(p.containers.length > 0, 'the containers are still measured');
    assert.equal(p.volume?.length ?? 0, 0, `no volume stats: ${JSON.stringify(p.volume)}`);
  }));

test('metrics/cadvisor through the node proxy: container_memory_working_set_bytes of the test pod with cadvisor labels', () =>
  withNamespace(async (ns) => {
    await smallPod(ns, 'cadv');
    const line = new RegExp(
      `^container_memory_working_set_bytes\\{container="main",id="/kubepods/[^"]+",image="${BUSYBOX}",name="[0-9a-f]{64}",namespace="${ns}",pod="cadv"\\} ([0-9.e+]+) \\d{13}$`,
      'm',
    );
    const text = await eventually(
      'the pod in /metrics/cadvisor',
      40_000,
      async () => {
        const t = proxy('/metrics/cadvisor');
        return line.test(t) ? t : undefined;
      },
      2000,
    );
    assert.ok(Number(line.exec(text)![1]) > 0, 'a non-zero working set');
    assert.match(text, /^# TYPE container_cpu_usage_seconds_total counter$/m);
    assert.match(
      text,
      new RegExp(`^container_cpu_usage_seconds_total\\{container="main",cpu="total",[^}]*namespace="${ns}",pod="cadv"\\} `, 'm'),
    );
    assert.match(
      text,
      /^container_memory_working_set_bytes\{container="",id="\/",image="",name="",namespace="",pod=""\} \d+ \d{13}$/m,
      'the node (root cgroup)',
    );
    // The container's memory as cadvisor adds to it: kernel usage and the file LRUs.
    for (const name of ['kernel_usage', 'total_active_file_bytes', 'total_inactive_file_bytes'])
      assert.match(text, new RegExp(`^container_memory_${name}\\{container="main",[^}]*pod="cadv"\\} \\d+ \\d{13}$`, 'm'), name);
    // cadvisor's machine collector: the Node's identity on its series, the CPU topology's counts.
    const node = await clients().core.readNode({ name: nodeName() });
    const info = node.status!.nodeInfo!;
    const ml = `boot_id="${info.bootID}",machine_id="${info.machineID}",system_uuid="${info.systemUUID}"`;
    assert.match(text, new RegExp(`^machine_cpu_cores\\{${ml}\\} ${node.status!.capacity!.cpu}$`, 'm'));
    assert.match(text, new RegExp(`^machine_cpu_physical_cores\\{${ml}\\} [1-9]\\d*$`, 'm'));
    assert.match(text, new RegExp(`^machine_cpu_sockets\\{${ml}\\} [1-9]\\d*$`, 'm'));
    assert.match(text, new RegExp(`^machine_swap_bytes\\{${ml}\\} \\d+$`, 'm'));
    const literal = (v: string) => v.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    assert.match(
      text,
      new RegExp(
        `^cadvisor_version_info\\{[^}]*kernelVersion="${literal(info.kernelVersion)}",osVersion="${literal(info.osImage)}"\\} 1$`,
        'm',
      ),
    );
    assert.match(text, /^container_scrape_error 0$/m);
    assert.match(proxy('/metrics/probes'), /^# TYPE prober_probe_total counter$/m, 'probe metrics have their endpoint');
  }));

// cAdvisor's filesystem series: the root container has every filesystem mounted at the kubelet's
// start (statfs and /proc/diskstats); with --container-hints, the "pods" system container has
// the kubelet root dir's filesystem, which its hint names.
test("metrics/cadvisor: the node's filesystems on the root container, and a --container-hints mount on /kubepods", async (t) => {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' '));
  const sourceOf = (mountpoint: string) => {
    const f = mounts.findLast((m) => m[4] === mountpoint)!;
    return f[f.indexOf('-', 6) + 2]!;
  };
  const dir = mkdtempSync(join(tmpdir(), 'kts-hints-'));
  t.after(() => {
    restartKubelet();
    rmSync(dir, { recursive: true, force: true });
  });
  const hints = join(dir, 'container_hints.json');
  writeFileSync(
    hints,
    JSON.stringify({ all_hosts: [{ full_path: '/kubepods', mounts: [{ host_dir: KUBELET_ROOT_DIR, container_dir: '/data' }] }] }),
  );
  restartKubelet(undefined, { KTS_KUBELET_FLAGS: `--container-hints=${hints}` });
  const series = (name: string, id: string, device: string) =>
    `${name}{container="",device="${device}",id="${id}",image="",name="",namespace="",pod=""}`;
  const rootDev = sourceOf('/');
  const text = await eventually('the filesystem series', 40_000, async () => {
    const t = proxy('/metrics/cadvisor');
    return t.includes(series('container_fs_limit_bytes', '/kubepods', sourceOf(KUBELET_ROOT_DIR))) ? t : undefined;
  });
  const bytes = (path: string) => {
    const s = statfsSync(path);
    return { limit: s.blocks * s.bsize, inodes: s.files };
  };
  assert.equal(seriesValue(text, series('container_fs_limit_bytes', '/', rootDev)), bytes('/').limit, "the root's disk, as statfs says");
  assert.equal(seriesValue(text, series('container_fs_inodes_total', '/', rootDev)), bytes('/').inodes);
  assert.ok(seriesValue(text, series('container_fs_usage_bytes', '/', rootDev)) > 0);
  if (/^\/dev\/(s|v|xv)d[a-z]+\d*$/.test(rootDev))
    assert.ok(seriesValue(text, series('container_fs_reads_total', '/', rootDev)) > 0, "the disk's reads from /proc/diskstats");
  assert.match(text, /^container_fs_limit_bytes\{[^}]*device="\/dev\/shm",id="\/"/m, 'a tmpfs, by its mount point');
  const pods = series('container_fs_limit_bytes', '/kubepods', sourceOf(KUBELET_ROOT_DIR));
  assert.equal(seriesValue(text, pods), bytes(KUBELET_ROOT_DIR).limit, "the hint's host directory's filesystem");
  assert.equal(text.match(/^container_fs_limit_bytes\{[^}]*id="\/kubepods"/gm)?.length, 1, 'only the hinted one on /kubepods');
});

test("cAdvisor's application metrics: an image's io.cadvisor.metric.* labels scraped into /metrics/cadvisor and the Summary", () =>
  withNamespace(async (ns) => {
    // hack/build-images.sh's application: a Prometheus page and a status page on 127.0.0.1:19100.
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'app' },
        spec: {
          hostNetwork: true,
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'web', image: 'localhost/kts-app-metrics:1', imagePullPolicy: 'Never' }],
        },
      },
    });
    const labels = `container="web",id="[^"]*",image="localhost/kts-app-metrics:1",name="[0-9a-f]{64}",namespace="${ns}",pod="app"`;
    const text = await eventually('the application metrics in /metrics/cadvisor', 60_000, async () => {
      const t = proxy('/metrics/cadvisor');
      return new RegExp(`^app_temperature\\{${labels}\\} 21.5$`, 'm').test(t) && /^rate\{/m.test(t) ? t : undefined;
    });
    assert.match(text, /^# HELP app_requests_total Custom application metric\.$/m);
    assert.match(text, /^# TYPE app_requests_total gauge$/m);
    // The page's labels prefixed app_, after the container's.
    assert.match(text, new RegExp(`^app_requests_total\\{app_code="200",app_path="/",${labels}\\} 42$`, 'm'));
    // The generic collector's: its float metric as read, its int one 0 (cAdvisor shows FloatValue).
    assert.match(text, new RegExp(`^rate\\{${labels}\\} 0.25$`, 'm'));
    assert.match(text, new RegExp(`^active\\{${labels}\\} 0$`, 'm'));
    type Udm = { name: string; type: string; units: string; value: number; time: string | null };
    const udm = await eventually('userDefinedMetrics in the Summary', 30_000, async () => {
      const summary = JSON.parse(proxy('/stats/summary'));
      const pod = summary.pods.find((p: { podRef: { namespace: string } }) => p.podRef.namespace === ns);
      const m: Udm[] | undefined = pod?.containers.find((c: { name: string }) => c.name === 'web')?.userDefinedMetrics;
      return m?.length === 4 && m.every((x) => x.time) ? m : undefined;
    });
    assert.deepEqual(udm.map((m) => [m.name, m.type, m.units, m.value]).sort(), [
      ['active', 'gauge', 'connections', 7],
      ['app_requests_total', 'cumulative', '', 42],
      ['app_temperature', 'gauge', '', 21.5],
      ['rate', 'gauge', 'requests/s', 0.25],
    ]);
  }));

test('runningpods lists the test pod as the runtime runs it', () =>
  withNamespace(async (ns) => {
    const uid = await smallPod(ns, 'runner');
    const list = JSON.parse(proxy('/runningpods/'));
    assert.equal(list.kind, 'PodList');
    const pod = list.items.find((p: any) => p.metadata.uid === uid);
    assert.deepEqual(pod, { metadata: { name: 'runner', namespace: ns, uid }, spec: { containers: [{ name: 'main', image: BUSYBOX }] } });
  }));

test('configz: the effective KubeletConfiguration with staticPodPath and Go durations', () => {
  const { kubeletconfig } = JSON.parse(proxy('/configz'));
  assert.equal(kubeletconfig.kind, 'KubeletConfiguration');
  assert.equal(typeof kubeletconfig.staticPodPath, 'string');
  assert.ok(kubeletconfig.staticPodPath.length > 0, 'staticPodPath is set on this stack');
  assert.match(kubeletconfig.syncFrequency, /^(\d+h)?(\d+m)?\d+(\.\d+)?s$/);
  assert.equal(kubeletconfig.port, 10250);
});

// The text serializers draw one of ":", ": ", "=" or " " to join a field and its value.
const SEP = '(?::|: |=| )';

test('statusz and flagz (ComponentStatusz, ComponentFlagz: beta, on): the text, the v1beta1 documents, 406 for a bare JSON', async () => {
  // kubectl get --raw asks for "application/json, */*": JSON without a kind is refused, */* gives the text.
  const text = proxy('/statusz');
  assert.match(
    text,
    /^\nkubelet statusz\nWarning: This endpoint is not meant to be machine parseable, has no formatting compatibility guarantees and is for debugging purposes only\.\n/,
  );
  assert.match(text, new RegExp(`^Binary version${SEP} 1\\.36\\.3$`, 'm'));
  assert.match(text, new RegExp(`^Emulation version${SEP} 1\\.36$`, 'm'));
  assert.match(text, new RegExp(`^Up${SEP} \\d+ hr \\d\\d min \\d\\d sec$`, 'm'));
  const paths = text.match(new RegExp(`^Paths${SEP} (\\S.*)$`, 'm'))?.[1]?.split(' ');
  for (const p of ['/configz', '/healthz', '/metrics', '/flagz']) assert.ok(paths?.includes(p), `${p} in ${paths}`);

  const doc = await kubeletGet('/statusz', undefined, ADMIN_CERT, { Accept: 'application/json;as=Statusz;v=v1beta1;g=config.k8s.io' });
  assert.equal(doc.status, 200);
  assert.equal(doc.type, 'application/json;g=config.k8s.io;v=v1beta1;as=Statusz');
  const statusz = JSON.parse(doc.body);
  assert.deepEqual(
    { ...statusz, startTime: undefined, uptimeSeconds: undefined, goVersion: undefined },
    {
      kind: 'Statusz',
      apiVersion: 'config.k8s.io/v1beta1',
      metadata: { name: 'kubelet' },
      binaryVersion: '1.36.3',
      emulationVersion: '1.36',
      paths,
      startTime: undefined,
      uptimeSeconds: undefined,
      goVersion: undefined,
    },
  );
  assert.match(statusz.startTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.ok(Number.isInteger(statusz.uptimeSeconds) && statusz.uptimeSeconds >= 0);

  const bare = await kubeletGet('/statusz', undefined, ADMIN_CERT, { Accept: 'application/json' });
  assert.equal(bare.status, 406);
  assert.equal(
    JSON.parse(bare.body).message,
    'only the following media types are accepted: application/json, application/yaml, text/plain',
  );

  // hack/kubelet.sh starts the kubelet with --network-plugin kubenet --v 2 and --hostname-override.
  const flagz = proxy('/flagz');
  assert.match(flagz, /^\nkubelet flagz\nWarning: /);
  assert.match(flagz, new RegExp(`^network-plugin${SEP}kubenet$`, 'm'));
  assert.match(flagz, new RegExp(`^v${SEP}2$`, 'm'));
  assert.match(flagz, new RegExp(`^hostname-override${SEP}${nodeName()}$`, 'm'));
  const flags = JSON.parse(
    (await kubeletGet('/flagz', undefined, ADMIN_CERT, { Accept: 'application/json;as=Flagz;v=v1beta1;g=config.k8s.io' })).body,
  );
  assert.equal(flags.kind, 'Flagz');
  assert.equal(flags.flags['network-plugin'], 'kubenet');
  assert.equal(flags.flags['read-only-port'], '10255', 'a flag not given shows its default');
});

// upstream's getCgroupDriverFromCRI: containerd 2 answers CRI RuntimeConfig and its driver wins over
// the config's; containerd 1.6 answers UNIMPLEMENTED and the config's stands, counted in
// kubelet_cri_losing_support with the release that drops that fallback.
test("cgroup driver: the runtime's when it says one (configz shows it), else the config's with kubelet_cri_losing_support", (t) => {
  const driver = () => JSON.parse(proxy('/configz')).kubeletconfig.cgroupDriver;
  const losing = () =>
    kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`).match(/^kubelet_cri_losing_support\{.*$/gm) ?? [];
  assert.equal(driver(), 'cgroupfs');
  if (RUNTIME === 'containerd1') {
    assert.deepEqual(losing(), ['kubelet_cri_losing_support{version="1.37.0"} 1']);
    return;
  }
  assert.deepEqual(losing(), [], 'containerd 2 answers RuntimeConfig');
  // The config says systemd, the runtime cgroupfs: the runtime's driver is the one in effect.
  t.after(() => restartKubelet());
  restartKubelet('cgroupDriver: systemd\n');
  assert.equal(driver(), 'cgroupfs');
  const log = readFileSync(`${ROOT}/_output/local/logs/kubelet-ts.log`, 'utf8');
  assert.match(
    log.slice(log.lastIndexOf('Container runtime initialized')),
    /Using cgroup driver setting received from the CRI runtime.*cgroupfs/,
  );
});

test('logs: /var/log listed through the node proxy; paths that leave it are refused', async () => {
  const listing = proxy('/logs/');
  assert.match(listing, /^<!doctype html>/);
  assert.match(listing, /<a href="pods\/">pods\/<\/a>/, 'the pod logs directory is listed');
  // kubectl cleans "/logs/../etc/passwd" to "/etc/passwd" (404); sent as is, the kubelet refuses it.
  for (const path of ['/logs/../etc/passwd', '/logs/%2e%2e/%2e%2e/etc/passwd']) {
    const r = await kubeletGet(path, undefined, ADMIN_CERT);
    assert.equal(r.status, 400, path);
    assert.doesNotMatch(r.body, /root:/, path);
  }
  const viaProxy = spawnSync(
    `${BIN}/kubectl`,
    ['--kubeconfig', ADMIN_KUBECONFIG, 'get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/logs/../etc/passwd`],
    { encoding: 'utf8' },
  );
  assert.notEqual(viaProxy.status, 0);
  assert.doesNotMatch(viaProxy.stdout, /root:/);
  assert.equal((await kubeletGet('/logs/', undefined, ADMIN_CERT)).status, 200, 'the admin certificate is let in');
  assert.equal((await kubeletGet('/logs/')).status, 401, 'anonymous is not');
});

test('stats/summary: kubeletCgroups moves the kubelet into that cgroup, reported as the system container "kubelet"', async (t) => {
  t.after(() => {
    // The kubelet as the stack runs it, then the cgroups it left (empty once it is gone).
    restartKubelet();
    for (const h of readdirSync('/sys/fs/cgroup')) {
      try {
        rmdirSync(`/sys/fs/cgroup/${h}/kubelet-ts-e2e`);
      } catch {
        /* not in this hierarchy, or removed through a link to it */
      }
    }
  });
  restartKubelet('kubeletCgroups: /kubelet-ts-e2e\n');
  // The kubelet, and any child it has running at the moment (they inherit its cgroup). The
  // restart returns a second after the start: the kubelet may not have moved itself yet.
  const cmdline = (pid: string) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      return ''; // a child that has exited since
    }
  };
  const procs = () => {
    try {
      return readFileSync('/sys/fs/cgroup/memory/kubelet-ts-e2e/cgroup.procs', 'utf8').trim().split('\n');
    } catch {
      return []; // not made yet
    }
  };
  await eventually(
    'the kubelet in the cgroup',
    30_000,
    async () => procs().some((pid) => /dist\/cli\/main\.js/.test(cmdline(pid))),
    200,
  ).catch((e: Error) => assert.fail(`${e.message}: ${procs().map(cmdline)}`));
  const kubelet = await eventually(
    'the kubelet system container with its CPU time',
    30_000,
    async () => {
      const c = JSON.parse(proxy('/stats/summary')).node.systemContainers?.find((x: { name: string }) => x.name === 'kubelet');
      return c?.cpu?.usageCoreNanoSeconds > 0 && c?.memory?.workingSetBytes > 0 ? c : undefined;
    },
    2000,
  );
  assert.ok(Date.now() - Date.parse(kubelet.startTime) < 120_000, `started with this kubelet: ${kubelet.startTime}`);
});

// Upstream's server.go: tlsCipherSuites (Go's names) for TLS 1.2, TLS 1.3 not configurable,
// and tlsMinVersion; what a hardened node (the CIS benchmark's strong ciphers) sets.
test('tlsCipherSuites and tlsMinVersion: the kubelet API refuses handshakes they leave out', async (t) => {
  t.after(() => restartKubelet());
  /** The protocol and cipher agreed, or "refused: CODE". */
  const handshake = (o: ConnectionOptions) =>
    new Promise<string>((resolve) => {
      const s = connect({ host: NODE_IP, port: 10250, rejectUnauthorized: false, ...o }, () => {
        resolve(`${s.getProtocol()} ${s.getCipher().name} ${s.getPeerX509Certificate()?.publicKey.asymmetricKeyType}`);
        s.destroy();
      });
      s.on('error', (e: NodeJS.ErrnoException) => resolve(`refused: ${e.code}`));
    });
  // The serving certificate's key names the suites that can serve it.
  const rsa = (await handshake({})).endsWith(' rsa');
  const [aes128, aes256, goAes256] = rsa
    ? ['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES256-GCM-SHA384', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384']
    : ['ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'];
  restartKubelet(`tlsCipherSuites: [${goAes256}]\n`);
  // Up again once the allowed suite connects; only then is a refusal the server's.
  await eventually(`TLS 1.2 with ${aes256}`, 60_000, async () =>
    (await handshake({ maxVersion: 'TLSv1.2', ciphers: aes256 })).startsWith('TLSv1.2'),
  );
  assert.match(await handshake({ maxVersion: 'TLSv1.2', ciphers: aes128 }), /^refused/, `${aes128} is not in tlsCipherSuites`);
  assert.match(await handshake({ minVersion: 'TLSv1.3' }), /^TLSv1\.3 /, 'TLS 1.3 keeps its own suites');

  restartKubelet('tlsMinVersion: VersionTLS13\n');
  await eventually('TLS 1.3', 60_000, async () => (await handshake({ minVersion: 'TLSv1.3' })).startsWith('TLSv1.3'));
  assert.match(await handshake({ maxVersion: 'TLSv1.2' }), /^refused/, 'TLS 1.2 under tlsMinVersion VersionTLS13');
});

/** The TLS handshake with :10250 ("TLSv1.3 ..."), or "refused: CODE". */
const tlsHandshake = (o: ConnectionOptions) =>
  new Promise<string>((resolve) => {
    const s = connect({ host: NODE_IP, port: 10250, rejectUnauthorized: false, ...o }, () => {
      resolve(`${s.getProtocol()} ${s.getCipher().name}`);
      s.destroy();
    });
    s.on('error', (e: NodeJS.ErrnoException) => resolve(`refused: ${e.code}`));
  });

test('tlsCurvePreferences: the kubelet API offers only those groups', async (t) => {
  t.after(() => restartKubelet());
  // 23 is Go's CurveP256.
  restartKubelet('tlsCurvePreferences: [23]\n');
  await eventually('TLS with P-256', 60_000, async () => (await tlsHandshake({ ecdhCurve: 'P-256' })).startsWith('TLS'));
  assert.match(await tlsHandshake({ ecdhCurve: 'X25519' }), /^refused/, 'X25519 is not in tlsCurvePreferences');
});

test('enableServer: false: nothing on :10250; the read-only port and healthz still answer, the node stays Ready', async (t) => {
  t.after(() => restartKubelet());
  restartKubelet('enableServer: false\nreadOnlyPort: 10255\n');
  await eventually('the read-only port up', 60_000, async () =>
    fetch(`http://${NODE_IP}:10255/healthz`, { signal: AbortSignal.timeout(3000) }).then(
      (r) => r.status === 200,
      () => false,
    ),
  );
  assert.equal(await tlsHandshake({}), 'refused: ECONNREFUSED', 'nothing listens on 10250');
  const healthz = await fetch('http://127.0.0.1:10248/healthz', { signal: AbortSignal.timeout(3000) });
  assert.equal(healthz.status, 200);
  const ready = kubectl('get', 'node', nodeName(), '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}');
  assert.equal(ready, 'True');
});

test("mergeDefaultEvictionSettings: the file's evictionHard keeps the default signals it leaves out (/configz)", async (t) => {
  t.after(() => restartKubelet());
  // imagefs.available stays off (this host's disk, hack/kubelet.sh says why); memory set; the rest are upstream's defaults.
  restartKubelet('mergeDefaultEvictionSettings: true\nevictionHard: {memory.available: 150Mi, imagefs.available: "0%"}\n');
  await eventually('the merged evictionHard in /configz', 60_000, async () => {
    try {
      const hard = (JSON.parse(proxy('/configz')) as { kubeletconfig: { evictionHard: Record<string, string> } }).kubeletconfig
        .evictionHard;
      assert.deepEqual(hard, {
        'memory.available': '150Mi',
        'imagefs.available': '0%',
        'nodefs.available': '10%',
        'nodefs.inodesFree': '5%',
        'imagefs.inodesFree': '5%',
      });
      return true;
    } catch (e) {
      if (e instanceof assert.AssertionError) throw e;
      return false; // the kubelet is not serving yet
    }
  });
});

test('enableDebuggingHandlers: false closes kubectl logs and exec (405), the pod keeps running', (t) =>
  withNamespace(async (ns) => {
    await smallPod(ns, 'closed');
    t.after(() => restartKubelet());
    restartKubelet('enableDebuggingHandlers: false\n');
    for (const args of [
      ['logs', 'closed'],
      ['exec', 'closed', '--', 'true'],
    ]) {
      const r = spawnSync(`${BIN}/kubectl`, ['--kubeconfig', ADMIN_KUBECONFIG, '-n', ns, ...args], { encoding: 'utf8' });
      assert.notEqual(r.status, 0, args.join(' '));
      assert.match(r.stderr, /Debug endpoints are disabled|MethodNotAllowed|405/, args.join(' '));
    }
    assert.equal(kubectl('-n', ns, 'get', 'pod', 'closed', '-o', 'jsonpath={.status.phase}'), 'Running');
  }));

test('ExtendWebSocketsToKubelet=false: not declared, so the apiserver translates kubectl exec itself; the kubelet splices SPDY', (t) =>
  withNamespace(async (ns) => {
    await runningPod(ns, 'web', 'mkdir -p /www && echo plain > /www/index.html && httpd -f -p 8080 -h /www');
    t.after(() => restartKubelet());
    restartKubelet(undefined, { KTS_FEATURE_GATES: 'ExtendWebSocketsToKubelet=false' });
    await eventually(
      'the Node without ExtendWebSocketsToKubelet',
      30_000,
      async () => !kubectl('get', 'node', nodeName(), '-o', 'jsonpath={.status.declaredFeatures}').includes('ExtendWebSocketsToKubelet'),
    );
    const r = kubectlRun('in\n', 'exec', '-i', '-n', ns, 'web', '--', 'sh', '-c', 'cat; exit 5');
    assert.equal(r.stdout, 'in\n', r.stderr);
    assert.equal(r.status, 5, r.stderr);
    assert.equal(webSocketStreams('exec'), 0, 'none taken over WebSocket by the kubelet');
    assert.equal(
      seriesValue(
        kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`),
        'kubernetes_feature_enabled{name="ExtendWebSocketsToKubelet",stage="BETA"}',
      ),
      0,
      'kubernetes_feature_enabled shows it off',
    );
  }));

// /debug/pprof/ and /debug/flags/v (enableProfilingHandler, enableDebugFlagsHandler, both on by
// default): what an operator does to profile a kubelet and raise its verbosity, through the
// node proxy; the profiles read back by go tool pprof.
test('debug handlers: a CPU and a heap profile go tool pprof reads, cmdline, Go\'s "Unknown profile"; PUT /debug/flags/v sets the verbosity', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-pprof-'));
  const pprofTop = (file: string) => {
    const r = spawnSync('/usr/local/go/bin/go', ['tool', 'pprof', '-top', file], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, `go tool pprof ${file}: ${r.stderr}`);
    return r.stdout;
  };
  const raw = (path: string, file: string) => {
    const r = spawnSync(`${BIN}/kubectl`, ['--kubeconfig', ADMIN_KUBECONFIG, 'get', '--raw', `/api/v1/nodes/${nodeName()}/proxy${path}`], {
      timeout: 120_000,
      maxBuffer: 64 << 20,
    });
    assert.equal(r.status, 0, `${path}: ${r.stderr}`);
    writeFileSync(join(dir, file), r.stdout);
    return r.stdout;
  };
  try {
    assert.match(proxy('/debug/pprof/'), /href=["']profile\?debug=1["']/);
    assert.match(raw('/debug/pprof/cmdline', 'cmdline').toString(), /\0--config[=\0]/);
    // Load while the CPU profile runs: the kubelet serves its pod list.
    const load = spawn('bash', [
      '-c',
      `for i in $(seq 200); do ${BIN}/kubectl --kubeconfig ${ADMIN_KUBECONFIG} get --raw /api/v1/nodes/${nodeName()}/proxy/pods >/dev/null; done`,
    ]);
    raw('/debug/pprof/profile?seconds=5', 'cpu.pb.gz');
    load.kill();
    assert.match(pprofTop(join(dir, 'cpu.pb.gz')), /Type: cpu/);
    raw('/debug/pprof/heap', 'heap0.pb.gz');
    raw('/debug/pprof/heap', 'heap.pb.gz');
    assert.match(pprofTop(join(dir, 'heap.pb.gz')), /Type: inuse_space/);
    const goroutine = spawnSync(
      `${BIN}/kubectl`,
      ['--kubeconfig', ADMIN_KUBECONFIG, 'get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/debug/pprof/goroutine`],
      { encoding: 'utf8' },
    );
    assert.notEqual(goroutine.status, 0, 'no goroutine profile in Node.js');
    assert.match(goroutine.stderr, /NotFound|404|not found/i);

    const before = JSON.parse(proxy('/configz')).kubeletconfig.logging?.verbosity ?? 0;
    const put = (v: string) => {
      writeFileSync(join(dir, 'v'), v);
      return spawnSync(
        `${BIN}/kubectl`,
        ['--kubeconfig', ADMIN_KUBECONFIG, 'replace', '--raw', `/api/v1/nodes/${nodeName()}/proxy/debug/flags/v`, '-f', join(dir, 'v')],
        { encoding: 'utf8' },
      );
    };
    const set = put('6');
    assert.equal(set.status, 0, set.stderr);
    assert.match(set.stdout, /successfully set klog.logging.verbosity to 6/);
    const bad = put('lots');
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /invalid syntax|BadRequest|400/);
    assert.equal(put(String(before)).status, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
