// `make bench-cluster` (issue #17, item 4): many nodes against one apiserver. The same number
// of workers joins the local cluster (hack/cluster) twice in one run, first with kubelet-ts,
// then with the upstream kubelet of the pin, each by `kubeadm join` as an operator joins a
// worker (hack/cluster/node.sh join). For each set: the cluster apiserver's CPU and every
// kubelet's requests (rest_client_requests_total, which both export) at idle, then with PODS
// pods on each node (a Deployment spread over the set, a readiness probe every 10 s on each),
// over their lives (create to all Ready to deleted) and at steady state; and each kubelet's
// CPU and resident memory. The nodes are removed after each set, so each set has the machine
// alone. Prints one table; docs/benchmarks.md records runs with the machine they ran on.
// The steady window opens at the same time after the Deployment for both sets (--steady-after),
// so the burst's aftermath in the controllers and etcd weighs the same on both (run P's window
// opened when the last pod was Ready: 78 s after for kubelet-ts, 189 s for upstream).
//   node test/bench/cluster.ts [--nodes 5] [--pods 10] [--idle 2m] [--steady-after 4m] [--steady 2m]
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { parseArgs, promisify } from 'node:util';
import { parseDuration } from '../../src/apiserver/duration.ts';
import { ROOT, pct, sleep, usage } from './lib.ts';
import { type RequestCounts, total } from './audit.ts';
import { apiserverRequests, delta, differingRates, restClientRequests } from './hollow-figures.ts';
import { atMost, type Verdict } from './targets.ts';

const execFileP = promisify(execFile);
const KUBECONFIG = `${ROOT}/_output/cluster/admin.conf`;
const PIDS = `${ROOT}/_output/cluster/pids`;
const CP_ADDRESS = '172.30.254.11';
const LABEL = 'kubelet-ts.dev/bench';
// What the upstream kubelet's setupKernelTunables sets on the host: put back after its set.
const SYSCTLS = [
  'vm.overcommit_memory',
  'vm.panic_on_oom',
  'kernel.panic',
  'kernel.panic_on_oops',
  'kernel.keys.root_maxkeys',
  'kernel.keys.root_maxbytes',
];

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: process.env.BENCH_NODES ?? '5' },
    pods: { type: 'string', default: process.env.BENCH_PODS_PER_NODE ?? '10' },
    idle: { type: 'string', default: '2m' },
    'steady-after': { type: 'string', default: '4m' },
    steady: { type: 'string', default: '2m' },
  },
});
const NODES = Number(values.nodes);
const PODS = Number(values.pods);
const duration = (flag: string, text: string) => parseDuration(text) ?? fail(`--${flag} ${text}: not a duration (2m, 90s)`);
const IDLE_MS = duration('idle', values.idle!);
const STEADY_AFTER_MS = duration('steady-after', values['steady-after']!);
const STEADY_MS = duration('steady', values.steady!);
// Workers after the cluster's own (kts-w1, kts-w2): kts-w3 ... (hack/cluster/lib.sh node_ip).
const names = Array.from({ length: NODES }, (_, i) => `kts-w${i + 3}`);

function fail(msg: string): never {
  console.error(`bench-cluster: ${msg}`);
  process.exit(1);
}
const log = (msg: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await execFileP(`${ROOT}/_output/bin/kubectl`, ['--kubeconfig', KUBECONFIG, ...args], { maxBuffer: 64 << 20 });
  return stdout;
}

async function node(...args: string[]): Promise<void> {
  await execFileP('bash', [`${ROOT}/hack/cluster/node.sh`, ...args], { maxBuffer: 64 << 20 }).catch((e) => {
    throw new Error(
      `hack/cluster/node.sh ${args.join(' ')} failed: ${String(e.stderr ?? e.message)
        .trim()
        .split('\n')
        .slice(-3)
        .join(' | ')}`,
    );
  });
}

async function until(what: string, timeoutMs: number, ok: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await ok().catch(() => false))) {
    if (Date.now() > end) throw new Error(`${what}: not after ${timeoutMs / 1000} s`);
    await sleep(2000);
  }
}

/** The cluster's kube-apiserver (a static pod on kts-cp), found by its advertised address. */
function apiserverPid(): number {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (cmd[0]?.endsWith('kube-apiserver') && cmd.includes(`--advertise-address=${CP_ADDRESS}`)) return Number(d);
    } catch {
      /* gone meanwhile */
    }
  }
  throw new Error(`the cluster's kube-apiserver (--advertise-address=${CP_ADDRESS}) is not running: make up`);
}

const kubeletPid = (n: string) => Number(readFileSync(`${PIDS}/${n}-kubelet.child.pid`, 'utf8'));

/**
 * Everything measured at one moment: apiserver CPU and requests (every client's, by verb and
 * resource), each node's requests (by method and code) and kubelet usage.
 */
interface Reading {
  at: number;
  apiserverCpu: number;
  apiserverRequests: RequestCounts;
  requests: Map<string, RequestCounts>;
  kubelets: Map<string, { cpuSeconds: number; rssMB: number }>;
}

async function read(): Promise<Reading> {
  const requests = new Map<string, RequestCounts>();
  await Promise.all(
    names.map(async (n) => requests.set(n, restClientRequests(await kubectl('get', '--raw', `/api/v1/nodes/${n}/proxy/metrics`)))),
  );
  return {
    at: Date.now(),
    apiserverCpu: usage(apiserverPid()).cpuSeconds,
    apiserverRequests: apiserverRequests(await kubectl('get', '--raw', '/metrics')),
    requests,
    kubelets: new Map(names.map((n) => [n, usage(kubeletPid(n))])),
  };
}

/** The counts of all the nodes together. */
function summed(counts: RequestCounts[]): RequestCounts {
  const out: RequestCounts = new Map();
  for (const c of counts) for (const [k, v] of c) out.set(k, (out.get(k) ?? 0) + v);
  return out;
}

/**
 * Between two readings: apiserver CPU seconds a minute, requests per node (and a minute), kubelet
 * CPU a minute, RSS; and the requests themselves, the apiserver's by verb and resource and the
 * nodes' by method and code, to tell what a kind asks more of.
 */
function between(a: Reading, b: Reading) {
  const minutes = (b.at - a.at) / 60_000;
  const nodesRequests = delta(summed([...a.requests.values()]), summed([...b.requests.values()]));
  const cpu = names.map((n) => b.kubelets.get(n)!.cpuSeconds - a.kubelets.get(n)!.cpuSeconds);
  const sum = (xs: number[]) => xs.reduce((x, y) => x + y, 0);
  return {
    minutes,
    apiserverCpuPerMin: (b.apiserverCpu - a.apiserverCpu) / minutes,
    requestsPerNode: total(nodesRequests) / names.length,
    requestsPerNodePerMin: total(nodesRequests) / names.length / minutes,
    nodesRequests,
    apiserverRequests: delta(a.apiserverRequests, b.apiserverRequests),
    kubeletCpuPerMin: sum(cpu) / names.length / minutes,
    rssMB: sum(names.map((n) => b.kubelets.get(n)!.rssMB)) / names.length,
  };
}

const deployment = (ns: string, kind: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'bench', namespace: ns },
  spec: {
    replicas: NODES * PODS,
    selector: { matchLabels: { app: 'bench' } },
    template: {
      metadata: { labels: { app: 'bench' } },
      spec: {
        nodeSelector: { [LABEL]: kind },
        // PODS on each node of the set, not what the scheduler's scoring would pick.
        topologySpreadConstraints: [
          {
            maxSkew: 1,
            topologyKey: 'kubernetes.io/hostname',
            whenUnsatisfiable: 'DoNotSchedule',
            labelSelector: { matchLabels: { app: 'bench' } },
          },
        ],
        terminationGracePeriodSeconds: 2,
        containers: [
          {
            name: 'main',
            image: 'docker.io/library/busybox:1.36',
            imagePullPolicy: 'Never',
            command: ['sleep', '3600'],
            readinessProbe: { exec: { command: ['true'] }, periodSeconds: 10 },
            resources: { requests: { cpu: '1m', memory: '4Mi' } },
          },
        ],
      },
    },
  },
});

async function podsOf(ns: string): Promise<{ ready: number; total: number }> {
  const list = JSON.parse(await kubectl('get', 'pods', '-n', ns, '-o', 'json')) as {
    items: { status?: { conditions?: { type: string; status: string }[] } }[];
  };
  const ready = list.items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
  return { ready, total: list.items.length };
}

async function runSet(kind: 'kubelet-ts' | 'upstream') {
  log(`== ${NODES} nodes with ${kind}: joining ${names.join(', ')}`);
  const joinStart = Date.now();
  // One node's images at a time (hack/build-images.sh shares its work dirs); then the joins together.
  for (const n of names) await node('add', n);
  await Promise.all(names.map((n) => node('join', n, kind)));
  await kubectl('label', '--overwrite', 'node', ...names, `${LABEL}=${kind}`);
  await until(`${kind} nodes Ready with their DaemonSet pods`, 600_000, async () => {
    const pods = JSON.parse(await kubectl('get', 'pods', '-A', '-o', 'json')) as {
      items: { spec: { nodeName?: string }; status?: { conditions?: { type: string; status: string }[] } }[];
    };
    return names.every((n) => {
      const own = pods.items.filter((p) => p.spec.nodeName === n);
      return own.length >= 2 && own.every((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    });
  });
  const joinedS = (Date.now() - joinStart) / 1000;
  log(`joined and ready in ${joinedS.toFixed(0)} s; settling 30 s, then ${IDLE_MS / 1000} s at idle`);
  await sleep(30_000);
  const idle0 = await read();
  await sleep(IDLE_MS);
  const idle1 = await read();
  const idle = between(idle0, idle1);

  const ns = `bench-cluster-${Date.now().toString(36)}`;
  await kubectl('create', 'namespace', ns);
  await until(`ServiceAccount default in ${ns}`, 60_000, async () => !!(await kubectl('get', 'serviceaccount', 'default', '-n', ns)));
  const total = NODES * PODS;
  log(`${total} pods (${PODS} a node)`);
  const created = Date.now();
  const apply = execFile(`${ROOT}/_output/bin/kubectl`, ['--kubeconfig', KUBECONFIG, 'apply', '-f', '-']);
  apply.stdin!.end(JSON.stringify(deployment(ns, kind)));
  await new Promise((r) => apply.on('exit', r));
  const readyAt: number[] = [];
  await until(`${total} pods Ready`, 600_000, async () => {
    const { ready } = await podsOf(ns);
    while (readyAt.length < ready) readyAt.push(Date.now() - created);
    return ready >= total;
  });
  const allReadyS = (Date.now() - created) / 1000;
  // At least 10 s after the last pod is Ready, when that is later than --steady-after.
  const steadyAtS = Math.max(STEADY_AFTER_MS / 1000, allReadyS + 10);
  log(`all Ready in ${allReadyS.toFixed(1)} s; ${STEADY_MS / 1000} s at steady state from ${steadyAtS.toFixed(0)} s`);
  await sleep(created + steadyAtS * 1000 - Date.now());
  const steady0 = await read();
  await sleep(STEADY_MS);
  const steady1 = await read();
  await kubectl('delete', 'namespace', ns, '--wait=false');
  await until(`the pods of ${ns} gone`, 300_000, async () => (await podsOf(ns).catch(() => ({ total: 0 }))).total === 0);
  await until(`namespace ${ns} gone`, 300_000, async () => !(await kubectl('get', 'namespace', ns).catch(() => '')));
  const gone = await read();
  const life = between(idle1, gone);
  const peakRss = Math.max(...names.map((n) => gone.kubelets.get(n)!.rssMB), ...names.map((n) => steady1.kubelets.get(n)!.rssMB));

  log(`removing ${names.join(', ')}`);
  for (const n of names) await node('remove', n);
  return {
    kind,
    joinedS,
    idle,
    allReadyS,
    steadyAtS,
    readyP50S: pct(readyAt, 50) / 1000,
    readyP99S: pct(readyAt, 99) / 1000,
    steady: between(steady0, steady1),
    // Create to deleted, less the idle share of the same span: what the pods' lives cost each node.
    requestsPerPod: (life.requestsPerNode - idle.requestsPerNodePerMin * life.minutes) / PODS,
    lifeApiserverCpu: life.apiserverCpuPerMin * life.minutes,
    peakRssMB: peakRss,
  };
}

type SetResult = Awaited<ReturnType<typeof runSet>>;

/** Issue #17's targets for a set of nodes: no more requests, apiserver CPU, kubelet CPU or RSS than upstream's. */
function clusterVerdicts(ts: SetResult, up: SetResult): Verdict[] {
  const checks: [string, (r: SetResult) => number, string, number][] = [
    ['apiserver requests a node a minute at idle', (r) => r.idle.requestsPerNodePerMin, 'requests', 1],
    ['apiserver requests a pod', (r) => r.requestsPerPod, 'requests', 1],
    [`apiserver requests a node a minute, ${PODS} pods a node`, (r) => r.steady.requestsPerNodePerMin, 'requests', 1],
    ['apiserver CPU a minute at idle', (r) => r.idle.apiserverCpuPerMin, 's', 2],
    [`apiserver CPU a minute, ${PODS} pods a node`, (r) => r.steady.apiserverCpuPerMin, 's', 2],
    ['kubelet CPU a minute at idle', (r) => r.idle.kubeletCpuPerMin, 's', 2],
    [`kubelet CPU a minute, ${PODS} pods a node`, (r) => r.steady.kubeletCpuPerMin, 's', 2],
    ['kubelet RSS at idle', (r) => r.idle.rssMB, 'MB', 1],
    [`kubelet RSS, ${PODS} pods a node`, (r) => r.steady.rssMB, 'MB', 1],
  ];
  return checks.flatMap(([what, f, unit, digits]) => atMost(`${what} no higher than upstream's`, f(ts), f(up), 1, unit, digits) ?? []);
}

async function main() {
  if (!existsSync(KUBECONFIG)) throw new Error(`${KUBECONFIG} is missing: make up brings the cluster up`);
  apiserverPid();
  const taken = names.filter((n) => existsSync(`/var/lib/kts/nodes/${n}`));
  if (taken.length) throw new Error(`${taken.join(', ')} exist already: hack/cluster/node.sh remove them first`);
  const { stdout: saved } = await execFileP('sysctl', ['-e', ...SYSCTLS]);
  const results: SetResult[] = [];
  let failed: unknown;
  try {
    results.push(await runSet('kubelet-ts'));
    results.push(await runSet('upstream'));
  } catch (e) {
    // The set measured before the failure is still printed.
    failed = e;
  } finally {
    for (const n of names) if (existsSync(`/var/lib/kts/nodes/${n}`)) await node('remove', n).catch((e) => log(String(e)));
    for (const line of saved.trim().split('\n')) {
      const [k, v] = line.split(' = ');
      await execFileP('sysctl', ['-qw', `${k}=${v}`]).catch(() => log(`cannot restore ${line}`));
    }
  }
  const f = (x: number, d = 1) => x.toFixed(d);
  const rows: [string, (r: SetResult) => string][] = [
    ['join to Ready (nodes and their DaemonSet pods)', (r) => `${f(r.joinedS, 0)} s`],
    ['apiserver CPU a minute, idle', (r) => `${f(r.idle.apiserverCpuPerMin, 2)} s`],
    ['requests a node a minute, idle', (r) => f(r.idle.requestsPerNodePerMin)],
    ['kubelet CPU a minute, idle', (r) => `${f(r.idle.kubeletCpuPerMin, 2)} s`],
    ['kubelet RSS, idle (mean of the nodes)', (r) => `${f(r.idle.rssMB)} MB`],
    [`create -> Ready, p50 / p99 / all (${NODES * PODS} pods)`, (r) => `${f(r.readyP50S)} / ${f(r.readyP99S)} / ${f(r.allReadyS)} s`],
    ['requests a pod (create to deleted, less idle)', (r) => f(r.requestsPerPod)],
    ['apiserver CPU, create to deleted', (r) => `${f(r.lifeApiserverCpu)} s`],
    ['steady window opens, after the Deployment', (r) => `${f(r.steadyAtS, 0)} s`],
    [`apiserver CPU a minute, ${PODS} pods a node`, (r) => `${f(r.steady.apiserverCpuPerMin, 2)} s`],
    [`requests a node a minute, ${PODS} pods a node`, (r) => f(r.steady.requestsPerNodePerMin)],
    [`kubelet CPU a minute, ${PODS} pods a node`, (r) => `${f(r.steady.kubeletCpuPerMin, 2)} s`],
    [`kubelet RSS, ${PODS} pods a node (mean)`, (r) => `${f(r.steady.rssMB)} MB`],
    ['kubelet RSS, peak of any node', (r) => `${f(r.peakRssMB)} MB`],
  ];
  console.log(
    `\n${NODES} workers a set, ${PODS} pods a node, idle ${IDLE_MS / 1000} s, steady ${STEADY_MS / 1000} s from ${STEADY_AFTER_MS / 1000} s after the Deployment\n`,
  );
  console.log(`| figure | ${results.map((r) => r.kind).join(' | ')} |`);
  console.log(`| --- |${results.map(() => ' --- |').join('')}`);
  for (const [label, fmt] of rows) console.log(`| ${label} | ${results.map(fmt).join(' | ')} |`);
  const [ts, up] = [results.find((r) => r.kind === 'kubelet-ts'), results.find((r) => r.kind === 'upstream')];
  if (ts && up) {
    // What the two sets' steady windows differ in, when the totals do: the nodes' own requests a
    // node a minute by method (a watch is a GET), and every client's at the apiserver by resource.
    const ms = (r: SetResult) => r.steady.minutes * 60_000;
    const tables: [string, [string, number, number][]][] = [
      [
        `the nodes' requests a node a minute, ${PODS} pods a node, by method and code, where the sets differ`,
        differingRates(ts.steady.nodesRequests, ms(ts) * NODES, up.steady.nodesRequests, ms(up) * NODES, 0.05),
      ],
      [
        `the apiserver's requests a minute (every client), ${PODS} pods a node, by verb and resource, where the sets differ`,
        differingRates(ts.steady.apiserverRequests, ms(ts), up.steady.apiserverRequests, ms(up), 0.5),
      ],
    ];
    for (const [title, rows] of tables) {
      console.log(`\n${title}\n\n| request | kubelet-ts | upstream |\n| --- | --- | --- |`);
      for (const [k, x, y] of rows) console.log(`| ${k} | ${x} | ${y} |`);
    }
    console.log(`\nissue #17's targets at ${NODES} nodes, kubelet-ts against the upstream kubelet of this run`);
    for (const v of clusterVerdicts(ts, up)) console.log(`- ${v.met ? 'met' : 'MISSED'}: ${v.target}: ${v.detail}`);
  }
  mkdirSync(`${ROOT}/_output/bench`, { recursive: true });
  writeFileSync(
    `${ROOT}/_output/bench/cluster-${NODES}.json`,
    // The request counts are Maps, which JSON would write as {}.
    JSON.stringify(
      { date: new Date().toISOString(), nodes: NODES, pods: PODS, results },
      (_, v) => (v instanceof Map ? Object.fromEntries(v) : v),
      1,
    ),
  );
  if (failed) throw failed;
}

main().catch((e) => fail((e as Error).message));
