// `make bench` (after the pods bench) or `make bench-api`: the kubelet API under load.
// With 30 busybox pods running on the node, 50 clients call the kubelet's port directly (the
// admin client certificate, kept-alive connections) as fast as answers come, one endpoint per
// phase; prints latency percentiles, throughput and the kubelet CPU time each phase cost.
// With --upstream (make bench), the same runs against the upstream kubelet's node started by
// hack/upstream-kubelet.sh, one kubelet measured while the other idles.
// The clients are hack/tools/apiload (Go, built here) rather than TypeScript: with 50 clients
// in Node.js on the same 2 cores, the load generator was the bottleneck and its pauses showed
// up as the kubelet's latency (p99 45-140 ms against 12-18 ms, in the same minutes).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { admin, benchNamespace, createBusyboxPods, ROOT, usage, waitRunning } from './lib.ts';

const { core } = admin();

const PODS = Number(process.env.BENCH_PODS ?? 30);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 50);
const SECONDS = Number(process.env.BENCH_API_SECONDS ?? 20);
const IP = process.env.KTS_IP ?? '172.30.255.10';
const NODE = (process.env.NODE_NAME ?? hostname()).toLowerCase();
const PATHS = (process.env.BENCH_API_PATHS ?? '/stats/summary,/pods').split(',');
const APILOAD = `${ROOT}/_output/bin/apiload`;
const PIDS = `${ROOT}/_output/local/pids`;

interface Target {
  label: string;
  node: string;
  url: string;
  pidFile: string;
}
const TARGETS: Target[] = [
  { label: 'kubelet-ts', node: NODE, url: `https://${IP}:10250`, pidFile: `${PIDS}/kubelet-ts.child.pid` },
  ...(process.argv.includes('--upstream')
    ? [{ label: 'upstream kubelet', node: `${NODE}-upstream`, url: `https://${IP}:10450`, pidFile: `${PIDS}/kubelet-upstream.pid` }]
    : []),
];

interface Load {
  requests: number;
  errors: number;
  perSecond: number;
  bytes: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  firstError?: string;
}
interface Phase extends Load {
  cpuSeconds: number;
  rssMB: number;
}

function buildLoadGenerator() {
  execFileSync('go', ['build', '-trimpath', '-o', APILOAD, '.'], {
    cwd: `${ROOT}/hack/tools/apiload`,
    env: { ...process.env, GOTOOLCHAIN: 'local' },
    stdio: 'inherit',
  });
}

function phase(t: Target, path: string, pid: number): Phase {
  const before = usage(pid);
  const out = execFileSync(
    APILOAD,
    [
      '-url',
      `${t.url}${path}`,
      '-clients',
      String(CLIENTS),
      '-seconds',
      String(SECONDS),
      '-cert',
      `${ROOT}/_output/local/pki/admin.crt`,
      '-key',
      `${ROOT}/_output/local/pki/admin.key`,
    ],
    { encoding: 'utf8' },
  );
  const after = usage(pid);
  const r = JSON.parse(out) as Load;
  if (r.errors) throw new Error(`${t.label}: ${r.errors} of ${r.requests} requests to ${path} failed: ${r.firstError}`);
  return { ...r, cpuSeconds: after.cpuSeconds - before.cpuSeconds, rssMB: after.rssMB };
}

async function run(t: Target): Promise<Map<string, Phase>> {
  const ns = await benchNamespace('bench-api');
  try {
    await createBusyboxPods(ns, PODS, 'sleep 3600', { restartPolicy: 'Always', nodeName: t.node });
    await waitRunning(ns, PODS);
    const pid = Number(readFileSync(t.pidFile, 'utf8'));
    console.error(`bench-api: ${t.label}, ${PODS} pods running on ${t.node}, ${CLIENTS} clients, ${SECONDS} s per endpoint`);
    return new Map(PATHS.map((p) => [p, phase(t, p, pid)]));
  } finally {
    await core.deleteNamespace({ name: ns });
  }
}

async function main() {
  buildLoadGenerator();
  const results: [Target, Map<string, Phase>][] = [];
  for (const t of TARGETS) results.push([t, await run(t)]);
  const rows: [string, (p: Phase) => string][] = [
    ['p50', (p) => `${p.p50.toFixed(1)} ms`],
    ['p90', (p) => `${p.p90.toFixed(1)} ms`],
    ['p99', (p) => `${p.p99.toFixed(1)} ms`],
    ['max', (p) => `${p.max.toFixed(0)} ms`],
    ['throughput', (p) => `${p.perSecond.toFixed(0)} req/s`],
    ['response', (p) => `${(p.bytes / 1024).toFixed(0)} KiB`],
    ['kubelet CPU (per request)', (p) => `${p.cpuSeconds.toFixed(1)} s (${((p.cpuSeconds * 1000) / p.requests).toFixed(2)} ms)`],
    ['kubelet RSS after', (p) => `${p.rssMB.toFixed(0)} MB`],
  ];
  console.log(`${PODS} busybox pods running, ${CLIENTS} clients back to back for ${SECONDS} s per endpoint`);
  for (const path of PATHS) {
    const head = [`\`${path}\``, ...results.map(([t]) => t.label)];
    const lines = [head, head.map(() => '---'), ...rows.map(([label, f]) => [label, ...results.map(([, m]) => f(m.get(path)!))])];
    console.log(`\n${lines.map((l) => `| ${l.join(' | ')} |`).join('\n')}`);
  }
}

main().catch((e) => {
  console.error(`bench failed: ${(e as Error).message}`);
  process.exit(1);
});
