// Hollow nodes against one apiserver (issue #47 item 2), both kinds one after the other:
// kubelet-ts's hollow mode (src/hollow, all nodes in one process; `ts-json` the same with
// contentType application/json instead of the protobuf default) and upstream's kubemark (one
// process a node), each kind on a throwaway control plane of its own (hack/hollow.sh control-plane:
// etcd :23791, apiserver :17443, made anew for each kind so that the apiserver's memory is the
// kind's alone), never the local stack's. Per kind: resident memory and CPU per node, the
// apiserver's CPU per node and its memory, the requests a node makes a minute at idle and over a
// churn of PODS_PER_NODE pods a node (one Deployment spread over the kind's nodes, created, all
// Running, deleted, all gone), from the audit log (the nodes' own) and apiserver_request_total
// (every client, the driver's polls too), and the watch events the apiserver sent (to every watcher).
//   make bench-hollow NODES=10 [KINDS=ts,ts-json,kubemark] [IDLE_SECONDS=120] [PODS_PER_NODE=5] [SETTLE_SECONDS=30]
// Figures go to stdout and _output/bench/hollow-N.json; everything it started is stopped and removed.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, sleep, usage } from './lib.ts';
import { watchEventsByResource } from './watch-events.ts';
import { HOLLOW_LABEL } from '../../src/hollow/plan.ts';
import { apiserverRequests, delta, figuresTable, type KindFigures, perNodeMinute, rateRows } from './hollow-figures.ts';
import { type RequestCounts, requestsBy, total } from './audit.ts';

const NODES = Number(process.env.NODES ?? 10);
type Kind = 'ts' | 'ts-json' | 'kubemark';
const KINDS = (process.env.KINDS ?? 'ts,kubemark').split(',').filter(Boolean) as Kind[];
/** Per kind: its nodes' label value and name prefix (hack/hollow.sh's). */
const KIND: Record<Kind, { value: KindFigures['kind']; prefix: string }> = {
  ts: { value: 'kubelet-ts', prefix: 'hollow-ts-' },
  'ts-json': { value: 'kubelet-ts-json', prefix: 'hollow-tsj-' },
  kubemark: { value: 'kubemark', prefix: 'hollow-km-' },
};
const IDLE_MS = Number(process.env.IDLE_SECONDS ?? 120) * 1000;
const SETTLE_MS = Number(process.env.SETTLE_SECONDS ?? 30) * 1000;
const PODS_PER_NODE = Number(process.env.PODS_PER_NODE ?? 5);
const BIN = join(ROOT, '_output/bin');
const HOLLOW = join(ROOT, 'hack/hollow.sh');

const dir = mkdtempSync('/tmp/hollow-bench-');
/** The kind's control plane's directory (hack/hollow.sh control-plane up), set before each kind. */
let cp = '';
const kubeconfig = () => join(cp, 'admin.kubeconfig');
const kubectl = (...args: string[]) =>
  execFileSync(join(BIN, 'kubectl'), ['--kubeconfig', kubeconfig(), ...args], { encoding: 'utf8', maxBuffer: 256 << 20 });
const hollow = (...args: string[]) => execFileSync('bash', [HOLLOW, ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
const log = (msg: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

/** The apiserver's request counts and watch events now, from one /metrics. */
const metrics = (): { requests: RequestCounts; watchEvents: number } => {
  const text = kubectl('get', '--raw', '/metrics');
  return { requests: apiserverRequests(text), watchEvents: [...watchEventsByResource(text).values()].reduce((a, b) => a + b, 0) };
};
const auditLines = () => readFileSync(join(cp, 'logs/audit.log'), 'utf8').split('\n').filter(Boolean);

function pidsOf(kindDir: string): number[] {
  return readdirSync(join(kindDir, 'pids')).map((f) => Number(readFileSync(join(kindDir, 'pids', f), 'utf8')));
}
const sumUsage = (pids: number[]) =>
  pids.map(usage).reduce((a, u) => ({ cpuSeconds: a.cpuSeconds + u.cpuSeconds, rssMB: a.rssMB + u.rssMB }), { cpuSeconds: 0, rssMB: 0 });

async function until(what: string, ok: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!ok()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(2000);
  }
  return (Date.now() - started) / 1000;
}

function readyNodes(value: string): number {
  const nodes = JSON.parse(kubectl('get', 'nodes', '-l', `${HOLLOW_LABEL}=${value}`, '-o', 'json')).items as {
    status?: { conditions?: { type: string; status: string }[] };
  }[];
  return nodes.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
}

function podPhases(app: string): { running: number; all: number } {
  const pods = JSON.parse(kubectl('get', 'pods', '-l', `app=${app}`, '-o', 'json')).items as { status?: { phase?: string } }[];
  return { running: pods.filter((p) => p.status?.phase === 'Running').length, all: pods.length };
}

function deployment(app: string, value: string, replicas: number): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: app },
    spec: {
      replicas,
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app } },
        spec: {
          nodeSelector: { [HOLLOW_LABEL]: value },
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: 'kubernetes.io/hostname',
              whenUnsatisfiable: 'DoNotSchedule',
              labelSelector: { matchLabels: { app } },
            },
          ],
          containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10.1' }],
        },
      },
    },
  });
}

async function measure(
  kind: Kind,
  base: number,
): Promise<{ figures: KindFigures; idleRows: [string, number][]; churnRows: [string, number][] }> {
  const { value, prefix } = KIND[kind];
  const apiserver = [Number(readFileSync(join(cp, 'pids/kube-apiserver'), 'utf8'))];
  const kindDir = join(dir, kind);
  const p = join(cp, 'pki');
  const before = sumUsage(apiserver);
  log(`${kind}: starting ${NODES} hollow nodes (apiserver RSS ${before.rssMB.toFixed(0)} MB)`);
  hollow('start', kind, String(NODES), kindDir, kubeconfig(), join(p, 'ca.crt'), join(p, 'ca.key'), String(base));
  try {
    const readyS = await until(`${NODES} ${kind} nodes Ready`, () => readyNodes(value) === NODES, 300_000);
    log(`${kind}: ${NODES} nodes Ready in ${readyS.toFixed(0)} s; settling ${SETTLE_MS / 1000} s`);
    await sleep(SETTLE_MS);
    const pids = pidsOf(kindDir);
    const u0 = sumUsage(pids);
    const a0 = sumUsage(apiserver);
    const m0 = metrics();
    const t0 = Date.now();
    await sleep(IDLE_MS);
    const u1 = sumUsage(pids);
    const a1 = sumUsage(apiserver);
    const m1 = metrics();
    const t1 = Date.now();
    const idleOwn = requestsBy(auditLines(), `system:node:${prefix}`, t0, t1, true);
    const idleAll = delta(m0.requests, m1.requests);
    log(
      `${kind}: idle ${((t1 - t0) / 1000).toFixed(0)} s: RSS ${(u1.rssMB / NODES).toFixed(1)} MB a node; churning ${PODS_PER_NODE} pods a node`,
    );

    const app = `churn-${value}`;
    execFileSync(join(BIN, 'kubectl'), ['--kubeconfig', kubeconfig(), 'apply', '-f', '-'], {
      input: deployment(app, value, NODES * PODS_PER_NODE),
    });
    const allRunningSeconds = await until(
      `${NODES * PODS_PER_NODE} ${kind} pods Running`,
      () => podPhases(app).running === NODES * PODS_PER_NODE,
      600_000,
    );
    kubectl('delete', 'deployment', app, '--wait=false');
    await until(`${kind} pods gone`, () => podPhases(app).all === 0, 600_000);
    const u2 = sumUsage(pids);
    const a2 = sumUsage(apiserver);
    const m2 = metrics();
    const t2 = Date.now();
    const churnOwn = requestsBy(auditLines(), `system:node:${prefix}`, t1, t2, true);
    const churnAll = delta(m1.requests, m2.requests);
    log(`${kind}: churn ${((t2 - t1) / 1000).toFixed(0)} s (all Running after ${allRunningSeconds.toFixed(0)} s)`);
    const figures: KindFigures = {
      kind: value,
      nodes: NODES,
      rssPerNodeMB: u1.rssMB / NODES,
      cpuIdle: perNodeMinute(u1.cpuSeconds - u0.cpuSeconds, NODES, t1 - t0),
      cpuChurn: perNodeMinute(u2.cpuSeconds - u1.cpuSeconds, NODES, t2 - t1),
      apiserverCpu: {
        idle: perNodeMinute(a1.cpuSeconds - a0.cpuSeconds, NODES, t1 - t0),
        churn: perNodeMinute(a2.cpuSeconds - a1.cpuSeconds, NODES, t2 - t1),
      },
      apiserverRssMB: { before: before.rssMB, idle: a1.rssMB, churn: a2.rssMB, perNode: (a1.rssMB - before.rssMB) / NODES },
      watchEvents: {
        idle: perNodeMinute(m1.watchEvents - m0.watchEvents, NODES, t1 - t0),
        churn: perNodeMinute(m2.watchEvents - m1.watchEvents, NODES, t2 - t1),
      },
      idle: { nodes: perNodeMinute(total(idleOwn), NODES, t1 - t0), all: perNodeMinute(total(idleAll), NODES, t1 - t0) },
      churn: { nodes: perNodeMinute(total(churnOwn), NODES, t2 - t1), all: perNodeMinute(total(churnAll), NODES, t2 - t1) },
      churnRequestsPerPod: total(churnOwn) / (NODES * PODS_PER_NODE),
      podsPerNode: PODS_PER_NODE,
      allRunningSeconds,
    };
    return { figures, idleRows: rateRows(idleOwn, NODES, t1 - t0), churnRows: rateRows(churnOwn, NODES, t2 - t1) };
  } finally {
    hollow('stop', kindDir);
    kubectl('delete', 'nodes', '-l', `${HOLLOW_LABEL}=${value}`, '--wait=false');
  }
}

async function main() {
  const results = [];
  let base = 20250;
  try {
    for (const kind of KINDS) {
      cp = join(dir, `cp-${kind}`);
      log(`${kind}: a throwaway control plane in ${cp}`);
      hollow('control-plane', 'up', cp);
      try {
        // The service account the churn's pods need exists once the controller-manager made it.
        await until('the default service account', () => kubectl('get', 'serviceaccounts', '-o', 'name').includes('default'), 120_000);
        results.push(await measure(kind, base));
      } finally {
        hollow('control-plane', 'down', cp);
      }
      base += 2 * NODES;
    }
  } finally {
    if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
  }
  const out = [figuresTable(results.map((r) => r.figures)), ''];
  for (const r of results) {
    out.push(`${r.figures.kind}, ${NODES} nodes: the nodes' own requests per node per minute (audit log)`);
    out.push(`  idle:  ${r.idleRows.map(([k, v]) => `${k} ${v}`).join(', ')}`);
    out.push(`  churn: ${r.churnRows.map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
  mkdirSync(join(ROOT, '_output/bench'), { recursive: true });
  writeFileSync(join(ROOT, `_output/bench/hollow-${NODES}.json`), JSON.stringify({ date: new Date().toISOString(), results }, null, 2));
}

main().catch((e: unknown) => {
  process.stderr.write(`bench-hollow: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
