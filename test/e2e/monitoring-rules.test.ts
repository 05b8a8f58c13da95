// Issue 42 item 5: kube-prometheus-stack's kubelet and container rules (the kubernetes-mixin's,
// rendered from the chart by hack/tools/monitoring-rules.sh) evaluated by Prometheus's own
// `promtool test rules` over real scrapes of kubelet-ts's /metrics and /metrics/cadvisor,
// labelled as the chart's kubelet ServiceMonitor has Prometheus label them
// (test/monitoring/promtool-input.ts). A pod with a 10m CPU limit runs a busy loop, so its
// container is really throttled by CFS. The rounds of scrapes are real; the steps after them
// continue each series as it went (counters at their measured rate, gauges at their last value),
// since CPUThrottlingHigh must hold for 15 minutes before it fires.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { stringify } from 'yaml';
import { parseExposition } from '../../test/monitoring/exposition.ts';
import {
  firingAlertsExpr,
  inputSeries,
  kubeNodeInfoSeries,
  kubePodInfoSeries,
  type PromqlExprTest,
  promtoolTestFile,
  type ScrapeTarget,
} from '../../test/monitoring/promtool-input.ts';
import { BUSYBOX, clients, ensureStack, eventually, NODE_IP, nodeName, podSpec, ROOT, withNamespace } from './stack.ts';

before(() => ensureStack());

const ADMIN_CERT = { cert: `${ROOT}/_output/local/pki/admin.crt`, key: `${ROOT}/_output/local/pki/admin.key` };
/** Seconds between rounds of scrapes, and the test's evaluation interval. */
const INTERVAL_S = 15;
const ROUNDS = 8;
/** 25 minutes of steps in all: CPUThrottlingHigh's increase(...[5m]) then its `for: 15m`, with room. */
const STEPS = (25 * 60) / INTERVAL_S;
// The chart's default thresholds (values.yaml defaultRules.kubelet{Client,Server}CertificateExpiration).
const WARNING_S = 7 * 24 * 3600;
const CRITICAL_S = 24 * 3600;

/** GET https://NODE_IP:10250/path as the cluster admin (Prometheus's own client certificate in a real cluster). */
function kubeletGet(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: NODE_IP,
        port: 10250,
        path,
        rejectUnauthorized: false,
        cert: readFileSync(ADMIN_CERT.cert),
        key: readFileSync(ADMIN_CERT.key),
      },
      (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`GET ${path}: ${res.statusCode} ${body}`))));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The value of a series of name without labels in an exposition (undefined when absent). */
function unlabelled(text: string, name: string): number | undefined {
  return parseExposition(text).find((s) => s.name === name && Object.keys(s.labels).length === 0)?.value;
}

/** The severities of KubeletClient/ServerCertificateExpiration that a TTL of ttl seconds fires. */
function expiringSeverities(ttl: number): string[] {
  return [...(ttl < WARNING_S ? ['warning'] : []), ...(ttl < CRITICAL_S ? ['critical'] : [])];
}

test('kube-prometheus-stack kubelet rules on scrapes of kubelet-ts (promtool test rules): CPUThrottlingHigh, certificate expiry, container_* recording rules, KubeletDown and the other Kubelet* alerts silent', () =>
  withNamespace(async (ns) => {
    const dir = mkdtempSync(join(tmpdir(), 'kts-monitoring-rules-'));
    const rules = join(dir, 'kubelet-rules.yaml');
    const built = spawnSync('bash', [`${ROOT}/hack/tools/monitoring-rules.sh`, rules], { encoding: 'utf8', timeout: 60 * 60_000 });
    assert.equal(built.status, 0, `hack/tools/monitoring-rules.sh failed:\n${built.stderr.split('\n').slice(-15).join('\n')}`);
    const promtool = execFileSync('bash', [`${ROOT}/hack/tools/monitoring-rules.sh`, '--print-promtool'], { encoding: 'utf8' }).trim();

    const { core } = clients();
    const body = podSpec('busy', {
      containers: [
        {
          name: 'busy',
          image: BUSYBOX,
          command: ['sh', '-c', 'while :; do :; done'],
          resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '10m', memory: '16Mi' } },
        },
      ],
    });
    await core.createNamespacedPod({ namespace: ns, body });
    const pod = await eventually('pod busy Running', 120_000, async () => {
      const p = await core.readNamespacedPod({ name: 'busy', namespace: ns });
      return p.status?.phase === 'Running' ? p : undefined;
    });
    // The busy loop's throttling must show in cAdvisor's counters before the first round.
    await eventually('container_cpu_cfs_throttled_periods_total of busy', 60_000, async () =>
      (await kubeletGet('/metrics/cadvisor')).includes(`container_cpu_cfs_throttled_periods_total{container="busy"`),
    );

    const rounds: ScrapeTarget[][] = [];
    for (let r = 0; r < ROUNDS; r++) {
      if (r > 0) await new Promise((res) => setTimeout(res, INTERVAL_S * 1000));
      const [metrics, cadvisor] = await Promise.all([kubeletGet('/metrics'), kubeletGet('/metrics/cadvisor')]);
      rounds.push([
        { path: '/metrics', text: metrics },
        { path: '/metrics/cadvisor', text: cadvisor },
      ]);
    }
    const lastMetrics = rounds.at(-1)?.[0]?.text ?? '';
    const clientTTL = unlabelled(lastMetrics, 'kubelet_certificate_manager_client_ttl_seconds');
    const serverTTL = unlabelled(lastMetrics, 'kubelet_certificate_manager_server_ttl_seconds');
    assert.ok(clientTTL !== undefined, 'kubelet_certificate_manager_client_ttl_seconds in /metrics (rotateCertificates)');
    // The local stack serves a self-signed certificate, not one from serverTLSBootstrap: upstream
    // has no serving certificate manager then, and no TTL series (the alert has nothing to read).
    assert.equal(serverTTL, undefined, 'no kubelet_certificate_manager_server_ttl_seconds without serverTLSBootstrap');

    const node = nodeName();
    const series = [
      ...inputSeries(rounds, { node, instance: `${NODE_IP}:10250` }, STEPS - ROUNDS),
      // What kube-state-metrics would add: the rules join on it (KubeletDown, the container_* recording rules).
      ...kubeNodeInfoSeries(node, STEPS),
      ...kubePodInfoSeries([{ namespace: ns, pod: 'busy', node, uid: pod.metadata?.uid ?? '' }], STEPS),
    ];
    const evalTime = `${(STEPS - 1) * INTERVAL_S}s`;
    const severities = (ttl: number) => expiringSeverities(ttl).map((s) => ({ labels: `{severity="${s}"}`, value: 1 }));
    const exprTests: PromqlExprTest[] = [
      {
        expr: firingAlertsExpr('CPUThrottlingHigh', { namespace: ns }, ['namespace', 'pod', 'container']),
        eval_time: evalTime,
        exp_samples: [{ labels: `{container="busy",namespace="${ns}",pod="busy"}`, value: 1 }],
      },
      {
        expr: firingAlertsExpr('KubeletClientCertificateExpiration', {}, ['severity']),
        eval_time: evalTime,
        exp_samples: severities(clientTTL),
      },
      {
        expr: firingAlertsExpr('KubeletServerCertificateExpiration', {}, ['severity']),
        eval_time: evalTime,
        exp_samples: [],
      },
      {
        // k8s.rules.container_cpu_usage_seconds_total: the busy container's CPU, with its node from kube_pod_info.
        expr: `count by (namespace, pod, container, node) (node_namespace_pod_container:container_cpu_usage_seconds_total:sum_rate5m{namespace="${ns}"} > 0)`,
        eval_time: evalTime,
        exp_samples: [{ labels: `{container="busy",namespace="${ns}",node="${node}",pod="busy"}`, value: 1 }],
      },
      {
        // The rest of kubernetes-system-kubelet stays quiet on a healthy node (PLEG, pod start-up
        // latency, too many pods, certificate renewal errors).
        expr: `count by (alertname, severity) (ALERTS{alertstate="firing",alertname=~"Kubelet.*",alertname!~"Kubelet(Client|Server)CertificateExpiration"})`,
        eval_time: evalTime,
        exp_samples: [],
      },
    ];
    const testFile = join(dir, 'kubelet-ts.test.yaml');
    writeFileSync(
      testFile,
      stringify(
        promtoolTestFile({
          ruleFiles: [rules],
          interval: `${INTERVAL_S}s`,
          series,
          alertRuleTests: [{ eval_time: evalTime, alertname: 'KubeletDown', exp_alerts: [] }],
          promqlExprTests: exprTests,
        }),
        { lineWidth: 0 },
      ),
    );
    const r = spawnSync(promtool, ['test', 'rules', testFile], { encoding: 'utf8', timeout: 10 * 60_000 });
    assert.equal(r.status, 0, `promtool test rules ${testFile} (client TTL ${clientTTL} s):\n${r.stdout}\n${r.stderr}`.slice(0, 20_000));
  }));
