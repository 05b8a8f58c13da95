// `make bench`: pod start-up and status latency, and what the kubelet costs meanwhile, for
// kubelet-ts and the upstream kubelet side by side on this machine in one run (the
// upstream one runs as node "<node>-upstream", started by hack/upstream-kubelet.sh).
// The same workload runs on one node, then on the other, so that the kubelet being
// measured has the machine while the other idles: 30 busybox pods pinned by nodeName are
// created at once, each with a readiness probe (BENCH_PROBE); a watch timestamps when each is seen Running;
// the pods then run for a minute (the kubelet's steady-state CPU and RSS); then when each one's
// container exit is seen in its status; the apiserver's audit log counts each kubelet's
// requests, at idle and over the pods' lives. Each kubelet is restarted before it is measured
// (BENCH_RESTART), so that both are of the same age. Prints one table; docs/benchmarks.md records
// runs with the machine they ran on.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { nodeRequests, total } from './audit.ts';
import { type Phase, histograms, nodeMetrics, phases, seenToRunningMs } from './phases.ts';
import type { BenchRun } from './plot.ts';
import { type FloorDoc, floorOf, floorUnusable, ratio } from './floor-plan.ts';
import { type Figures, floorVerdict, verdicts } from './targets.ts';
import { apiserverWatchEvents, grewBy } from './watch-events.ts';
import { machineName } from '../proc.ts';
import { ROOT, admin, benchPod, benchNamespace, mean, pct, quietMachine, sleep, usage as procUsage, watchPods } from './lib.ts';

const { core } = admin();

const PIDS = `${ROOT}/_output/local/pids`;
const execFileP = promisify(execFile);
const N = Number(process.env.BENCH_PODS ?? 30);
/** BENCH_SEQUENTIAL=1: each pod created once the one before is Running (upstream's node density latency method), not all at once. */
const SEQUENTIAL = process.env.BENCH_SEQUENTIAL === '1';
const NODE = (process.env.NODE_NAME ?? hostname()).toLowerCase();
/** BENCH_STEADY_SECONDS (60): how long the N pods run, probed, before their exits, to measure the kubelet at steady state. */
const STEADY_S = Number(process.env.BENCH_STEADY_SECONDS ?? 60);
/**
 * BENCH_PROBE (httpGet): each pod's readiness probe, every 10 s. httpGet, as most workloads
 * probe, is the kubelet's own work; exec forks runc for every probe, which at 100 pods kept this
 * 2-core machine at a load of 80-150 for both kubelets (docs/benchmarks.md, 2026-11-27 19:37).
 */
const PROBE = process.env.BENCH_PROBE ?? 'httpGet';
if (PROBE !== 'httpGet' && PROBE !== 'exec') throw new Error(`BENCH_PROBE=${PROBE}: the probes are httpGet and exec`);
/** BENCH_START_SECONDS (300): how long the N pods may take to be Running before the run fails. */
const START_S = Number(process.env.BENCH_START_SECONDS ?? 300);
/** BENCH_IDLE_SECONDS (120): the window with no pod, for each kubelet's requests and CPU at idle. */
const IDLE_S = Number(process.env.BENCH_IDLE_SECONDS ?? 120);
/** BENCH_QUIET_SECONDS (180): how long a run waits for the machine to be quiet before it measures anyway. */
const QUIET_S = Number(process.env.BENCH_QUIET_SECONDS ?? 180);
/** BENCH_OUT (_output/bench): where the run's figures are kept for test/bench/plot.ts. */
const OUT = process.env.BENCH_OUT ?? `${ROOT}/_output/bench`;

/**
 * The runtime's floor of this density, from test/bench/floor.ts (make bench runs it first; make
 * bench-floor alone): each kubelet's start p50/p99 is shown as a ratio of it. One of another
 * machine, or older than BENCH_FLOOR_MAX_AGE_HOURS (6), is not used, and said so.
 */
const FLOOR_MAX_AGE_H = Number(process.env.BENCH_FLOOR_MAX_AGE_HOURS ?? 6);
function readFloor() {
  const file = `${OUT}/floor.json`;
  if (!existsSync(file)) return undefined;
  const doc = JSON.parse(readFileSync(file, 'utf8')) as FloorDoc;
  const why = floorUnusable(doc, Date.now(), FLOOR_MAX_AGE_H, machineName());
  if (why) console.error(`bench: no ratio to the runtime floor of ${file}: ${why} (make bench-floor)`);
  return why ? undefined : floorOf(doc, { pods: N, sequential: SEQUENTIAL });
}

interface Target {
  label: string;
  node: string;
  pidFile: string;
  runtimePidFile: string;
  env?: Record<string, string>;
}
const kubeletTs = { node: NODE, pidFile: `${PIDS}/kubelet-ts.child.pid`, runtimePidFile: `${PIDS}/containerd.pid` };
/** BENCH_NODE_FLAGS='--flag ...': one more run, 'kubelet-ts, node flags', under these extra node (V8) flags. */
const NODE_FLAGS = process.env.BENCH_NODE_FLAGS;
/** The KubeletConfiguration file of the 'kubelet-ts, json' run (hack/kubelet.sh's KTS_CONFIG_EXTRA), written when it restarts. */
const JSON_CONFIG = `${ROOT}/_output/local/bench-content-type-json.yaml`;
/** BENCH_ONLY=regex: only the runs whose label it matches (e.g. '^kubelet-ts$' to try a change quickly). */
const ONLY = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : undefined;
const TARGETS = (
  [
    { label: 'kubelet-ts', ...kubeletTs },
    {
      label: 'upstream kubelet',
      node: `${NODE}-upstream`,
      pidFile: `${PIDS}/kubelet-upstream.pid`,
      runtimePidFile: `${PIDS}/containerd-upstream.pid`,
    },
    // The same kubelet-ts with the runtime's events off: what the 1 s relist alone gives.
    { label: 'kubelet-ts, relist only', ...kubeletTs, env: { KTS_FEATURE_GATES: 'EventedPLEG=false' } },
    // The same kubelet-ts talking JSON to the apiserver: what the protobuf default costs or saves
    // (the label in lower case: it names the run's namespace).
    { label: 'kubelet-ts, json', ...kubeletTs, env: { KTS_CONFIG_EXTRA: JSON_CONFIG } },
    ...(NODE_FLAGS ? [{ label: 'kubelet-ts, node flags', ...kubeletTs, env: { KTS_NODE_FLAGS: NODE_FLAGS } }] : []),
  ] as Target[]
).filter((t) => !ONLY || ONLY.test(t.label));

/**
 * BENCH_RESTART (1): each kubelet restarted, then left BENCH_SETTLE_SECONDS (60) idle, before the
 * idle window and before its run, so that both are measured at the same age: a kubelet's RSS
 * grows with its age and what it did before (docs/benchmarks.md, 2026-12-01: kubelet-ts 50 minutes
 * old read 104 MB idle, 3 minutes old 89 MB). 0: measure the kubelets as they are.
 */
const FRESH = process.env.BENCH_RESTART !== '0';
const SETTLE_S = Number(process.env.BENCH_SETTLE_SECONDS ?? 60);

/**
 * Restarts a target's kubelet (kubelet-ts with the environment of its variant: featureGates,
 * node flags), waits for its node, then lets it settle.
 */
async function restartKubelet(t: Target, env: Record<string, string> = t.env ?? {}, settleS = SETTLE_S) {
  const script = t.node === NODE ? 'kubelet.sh' : 'upstream-kubelet.sh';
  if (env.KTS_CONFIG_EXTRA === JSON_CONFIG) {
    mkdirSync(dirname(JSON_CONFIG), { recursive: true });
    writeFileSync(JSON_CONFIG, 'contentType: application/json\n');
  }
  await execFileP('bash', [`${ROOT}/hack/${script}`, 'restart'], { env: { ...process.env, ...env } });
  await until(`node ${t.node} Ready`, 120_000, async () => !!(await nodeReady(t.node)));
  if (settleS > 0) {
    console.error(`bench: ${t.label} restarted; ${settleS} s idle before it is measured`);
    await sleep(settleS * 1000);
  }
}

interface Result {
  startup: number[];
  exitSeen: number[];
  rssBefore: number;
  rssPeak: number;
  cpuSeconds: number;
  /** Of cpuSeconds: from the first create to all Running, and over the exits (each asked by a kubectl exec). */
  cpuStartSeconds: number;
  cpuExitsSeconds: number;
  runtimeCpuSeconds: number;
  /** With the N pods running and probed, after STEADY_S seconds: the kubelet's RSS, and its CPU seconds a minute over that window. */
  rssSteady: number;
  cpuPerMinuteSteady: number;
  /** Its CRI calls during the run (create to the last exit seen), per pod and mean time, by operation. */
  runtimeOps: Phase[];
  /** Its own pod start SLI (creation to running, without pulls) during the run, mean ms. */
  startSliMs: number;
  /**
   * From its first sight of a pod to the pod's worker started (admission and the queue), and to
   * the sync that found it Running, before its status is written: ms a pod, from the histograms
   * both kubelets export (kubelet_pod_worker_start_duration_seconds, kubelet_pod_start_duration_seconds;
   * test/bench/phases.ts seenToRunningMs).
   */
  seenToWorkerMs: number;
  seenToRunningMs: number;
  /** Its requests to the apiserver from the first create to the last pod deleted, by kind. */
  requests: Map<string, number>;
  /** The apiserver's watch events to all its watchers over the same span, by resource (test/bench/watch-events.ts). */
  watchEvents: Map<string, number>;
  /** Its requests and CPU seconds per minute with no pod, measured before the runs (not for a variant of the same node). */
  idlePerMinute?: number;
  idleCpuPerMinute?: number;
  version: string;
}

/** The kubelet being measured was restarted (the stack is shared): the run is void, retry it. */
class Restarted extends Error {}

const readPid = (t: Target) => Number(readFileSync(t.pidFile, 'utf8'));
/** containerd's own CPU seconds (not its shims' nor runc's): what the kubelet's CRI calls cost it. */
const runtimeCpu = (t: Target) => {
  try {
    return procUsage(Number(readFileSync(t.runtimePidFile, 'utf8'))).cpuSeconds;
  } catch {
    return NaN;
  }
};
function usage(pid: number) {
  try {
    return procUsage(pid);
  } catch {
    throw new Restarted(`kubelet pid ${pid} is gone`);
  }
}

/** Seconds since the process started (/proc/<pid>/stat field 22, in 1/100 s since boot). */
function ageSeconds(pid: number) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) - Number(stat[19]) / 100;
  } catch {
    throw new Restarted(`kubelet pid ${pid} is gone`);
  }
}

async function until(what: string, ms: number, check: () => Promise<boolean> | boolean) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what} not within ${ms / 1000} s`);
    await sleep(100);
  }
}

async function nodeReady(node: string) {
  const n = await core.readNode({ name: node }).catch(() => undefined);
  return n?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? n : undefined;
}

/** Deletes the namespace's pods and waits until their kubelet has confirmed every deletion. */
async function deletePods(ns: string) {
  await core.deleteCollectionNamespacedPod({ namespace: ns });
  await until(`pods of ${ns} deleted`, 120_000, async () => (await core.listNamespacedPod({ namespace: ns })).items.length === 0);
}

/**
 * Waits for the kubelet to remove the namespace's pods, so that the next target's run has the
 * machine, then deletes the namespace. Retries for a minute: the shared control plane may be
 * restarting (what made the run fail, perhaps).
 */
async function cleanup(ns: string) {
  const end = Date.now() + 60_000;
  for (;;) {
    try {
      await deletePods(ns);
      await core.deleteNamespace({ name: ns }).catch((e: { code?: number }) => {
        if (e.code !== 404 && e.code !== 409) throw e;
      });
      return;
    } catch (e) {
      if (Date.now() > end) {
        console.error(`bench: could not delete namespace ${ns}: ${(e as Error).message}`);
        return;
      }
      await sleep(2000);
    }
  }
}

const podBody = (name: string, node: string, script: string) => benchPod(name, node, script, PROBE);

async function runOnce(t: Target): Promise<Result> {
  const node = await nodeReady(t.node);
  if (!node) throw new Restarted(`node ${t.node} is not Ready`);
  // A kubelet that has just (re)started is still doing its first syncs (and a Node.js one
  // runs cold code, the upstream one its first cadvisor housekeeping): wait until both are
  // 30 s old, the measured one and the one idling beside it on the same 2 cores.
  const pid = readPid(t);
  const pids = [
    ...new Set(
      TARGETS.map((x) => {
        try {
          return readPid(x);
        } catch {
          return pid;
        }
      }),
    ),
  ];
  await sleep(Math.max(0, ...pids.map((p) => 30 - ageSeconds(p))) * 1000);
  const ns = await benchNamespace(`bench-${t.label.replace(/\W+/g, '-')}`);
  try {
    // One pod first, so that neither side pays for its first sandbox (bridge creation, ...) in the figures.
    await core.createNamespacedPod({ namespace: ns, body: podBody('warmup', t.node, 'exit 0') });
    await until(
      `warm-up pod on ${t.node} done`,
      60_000,
      async () => (await core.readNamespacedPod({ name: 'warmup', namespace: ns })).status?.phase === 'Succeeded',
    );
    await deletePods(ns);
    // Let both kubelets settle (sandbox removal, the last run's teardown, status writes) before
    // measuring: quietMachine's first 3 s window is the settling time the fixed sleep gave.
    await quietMachine(0.3, QUIET_S * 1000);

    if (readPid(t) !== pid) throw new Restarted(`${t.label} restarted`);
    const metricsBefore = await nodeMetrics(t.node).catch(unreadable);
    const before = usage(pid),
      runtimeBefore = runtimeCpu(t);
    let peakRSS = before.rssMB,
      gone: unknown,
      steady: { from: { cpuSeconds: number }; to: { cpuSeconds: number; rssMB: number } } | undefined;
    const sampler = setInterval(() => {
      try {
        peakRSS = Math.max(peakRSS, usage(pid).rssMB);
      } catch (e) {
        gone = e;
      }
    }, 200);
    const watchEventsBefore = await apiserverWatchEvents();
    const t0 = Date.now();
    const created = new Map<string, number>(),
      running = new Map<string, number>(),
      exited = new Map<string, number>(),
      exitAt = new Map<string, number>();
    const watch = await watchPods(ns, (pod) => {
      const name = pod.metadata!.name!,
        now = Date.now();
      if (pod.status?.phase === 'Running' && !running.has(name)) running.set(name, now);
      if (pod.status?.containerStatuses?.[0]?.state?.terminated && !exited.has(name)) exited.set(name, now);
    });
    try {
      // Each container blocks reading a FIFO until the bench writes to it, then exits: the exit
      // moment is known to the ms, and a waiting container costs no CPU. (A 50 ms polling loop
      // forked a busybox sleep 20 times a second in each container: with 100 of them, ~2000
      // forks a second that loaded both kubelets' exits and starts on this 2-core machine.)
      const script = 'mkfifo /tmp/go && read x < /tmp/go; exit 0';
      const create = (i: number) => {
        const name = `p${i}`;
        created.set(name, Date.now());
        return core.createNamespacedPod({ namespace: ns, body: podBody(name, t.node, script) });
      };
      if (SEQUENTIAL)
        for (let i = 0; i < N && !gone; i++) {
          await create(i);
          await until(`pod p${i} Running on ${t.node}`, 60_000, () => running.has(`p${i}`));
        }
      else await Promise.all(Array.from({ length: N }, (_, i) => create(i)));
      const deadline = Date.now() + START_S * 1000;
      while (running.size < N && Date.now() < deadline && !gone) await sleep(50);
      if (gone) throw gone;
      if (running.size < N) {
        // What a list says beside what the watch saw, so that a watch gone wrong (watchPods) shows.
        const listed = (await core.listNamespacedPod({ namespace: ns })).items.filter((p) => p.status?.phase === 'Running').length;
        throw new Error(`only ${running.size}/${N} pods seen Running on ${t.node} after ${START_S} s (a list shows ${listed})`);
      }

      // Steady state: the N pods running and probed, nothing else asked of the kubelet.
      const steadyFrom = usage(pid);
      await sleep(STEADY_S * 1000);
      if (gone) throw gone;
      steady = { from: steadyFrom, to: usage(pid) };

      for (const name of created.keys()) {
        // Asynchronous, so the watch callbacks keep timestamping while kubectl runs. The FIFO
        // written, the container may exit before the exec's shell does, which is then killed
        // with it (exit code 137).
        await execFileP(`${ROOT}/_output/bin/kubectl`, [
          '--kubeconfig',
          `${ROOT}/_output/local/admin.kubeconfig`,
          'exec',
          '-n',
          ns,
          name,
          '--',
          'sh',
          '-c',
          'echo go > /tmp/go',
        ]).catch((e: Error) => {
          if (!/exit code 137/.test(e.message)) throw e;
        });
        exitAt.set(name, Date.now()); // the container's read returned: it exits now
      }
      const exitDeadline = Date.now() + 60_000;
      while (exited.size < N && Date.now() < exitDeadline && !gone) await sleep(50);
      if (gone) throw gone;
      if (exited.size < N) throw new Error(`only ${exited.size}/${N} container exits seen on ${t.node}`);
    } finally {
      clearInterval(sampler);
      watch.abort();
    }
    const after = usage(pid);
    const metricsAfter = await nodeMetrics(t.node).catch(unreadable);
    if (readPid(t) !== pid) throw new Restarted(`${t.label} restarted during the run`);
    const ops = 'kubelet_runtime_operations_duration_seconds',
      sli = 'kubelet_pod_start_sli_duration_seconds';
    const change = (metric: string) => phases(histograms(metricsBefore, metric), histograms(metricsAfter, metric), N)[0];
    const meanMs = (metric: string) => change(metric)?.meanMs ?? NaN;
    const seenToWorkerMs = meanMs('kubelet_pod_worker_start_duration_seconds');
    // The rest of the pods' lives: deleted, and what the kubelet asks meanwhile (the last
    // status writes come after the apiserver removed the pods).
    await deletePods(ns);
    await sleep(2000);
    const requests = nodeRequests(t.node, t0, Date.now());
    const watchEvents = grewBy(watchEventsBefore, await apiserverWatchEvents());
    return {
      startup: [...running].map(([n, at]) => at - created.get(n)!),
      exitSeen: [...exited].map(([n, at]) => at - exitAt.get(n)!),
      rssBefore: before.rssMB,
      rssPeak: peakRSS,
      cpuSeconds: after.cpuSeconds - before.cpuSeconds - (steady!.to.cpuSeconds - steady!.from.cpuSeconds),
      cpuStartSeconds: steady!.from.cpuSeconds - before.cpuSeconds,
      cpuExitsSeconds: after.cpuSeconds - steady!.to.cpuSeconds,
      runtimeCpuSeconds: runtimeCpu(t) - runtimeBefore,
      rssSteady: steady!.to.rssMB,
      cpuPerMinuteSteady: ((steady!.to.cpuSeconds - steady!.from.cpuSeconds) * 60) / STEADY_S,
      runtimeOps: phases(histograms(metricsBefore, ops), histograms(metricsAfter, ops), N),
      startSliMs: meanMs(sli),
      seenToWorkerMs,
      seenToRunningMs: seenToRunningMs(change('kubelet_pod_start_duration_seconds'), seenToWorkerMs),
      requests,
      watchEvents,
      version: node.status?.nodeInfo?.kubeletVersion ?? '?',
    };
  } finally {
    await cleanup(ns);
  }
}

/** The breakdown is left empty, not the run void, when a kubelet's /metrics cannot be read. */
function unreadable(e: Error): string {
  console.error(`bench: no per-phase breakdown: ${e.message.split('\n')[0]}`);
  return '';
}

/** A kubelet restarted by someone else voids the run; up to 3 tries, waiting for the node to be Ready again. */
async function run(t: Target): Promise<Result> {
  for (let attempt = 1; ; attempt++) {
    let pid: number;
    try {
      pid = readPid(t);
    } catch {
      throw new Error(`${t.pidFile} is missing: is ${t.label} running? (make bench starts the upstream one with hack/upstream-kubelet.sh)`);
    }
    try {
      console.error(`bench: ${N} pods on node ${t.node} (${t.label})${attempt > 1 ? `, try ${attempt}` : ''}`);
      return await runOnce(t);
    } catch (e) {
      // Whatever failed (an exec, a timeout), a restart meanwhile is the cause.
      const restarted =
        e instanceof Restarted ||
        (() => {
          try {
            return readPid(t) !== pid;
          } catch {
            return true;
          }
        })();
      if (!restarted || attempt === 3) throw e;
      console.error(`bench: ${(e as Error).message}: ${t.label} restarted; waiting for node ${t.node} to be Ready, then again`);
      await until(`node ${t.node} Ready`, 120_000, async () => !!(await nodeReady(t.node)));
    }
  }
}

function table(results: [Target, Result][]) {
  const ms = (x: number) => `${Math.round(x)} ms`;
  const floor = readFloor();
  const rows: [string, (r: Result) => string][] = [
    ['create -> Running, p50', (r) => ms(pct(r.startup, 50))],
    ['create -> Running, p90', (r) => ms(pct(r.startup, 90))],
    ['create -> Running, p99', (r) => ms(pct(r.startup, 99))],
    [
      `create -> Running p50, over the runtime floor's (${floor ? ms(floor.p50) : 'not measured'})`,
      (r) => ratio(pct(r.startup, 50), floor?.p50),
    ],
    [
      `create -> Running p99, over the runtime floor's (${floor ? ms(floor.p99) : 'not measured'})`,
      (r) => ratio(pct(r.startup, 99), floor?.p99),
    ],
    ['container exit -> status, p50', (r) => ms(pct(r.exitSeen, 50))],
    ['container exit -> status, p90', (r) => ms(pct(r.exitSeen, 90))],
    ['container exit -> status, p99', (r) => ms(pct(r.exitSeen, 99))],
    ['kubelet RSS before (0 pods)', (r) => `${r.rssBefore.toFixed(0)} MB`],
    ['kubelet RSS peak', (r) => `${r.rssPeak.toFixed(0)} MB`],
    [`kubelet RSS, ${N} pods running ${STEADY_S} s`, (r) => `${r.rssSteady.toFixed(0)} MB`],
    ['kubelet CPU during the run (but the steady window)', (r) => `${r.cpuSeconds.toFixed(1)} s`],
    [
      'of which: create -> all Running / the exits (a kubectl exec each)',
      (r) => `${r.cpuStartSeconds.toFixed(1)} / ${r.cpuExitsSeconds.toFixed(1)} s`,
    ],
    ['kubelet CPU a minute, idle', (r) => (r.idleCpuPerMinute === undefined ? '-' : `${r.idleCpuPerMinute.toFixed(2)} s`)],
    [`kubelet CPU a minute, ${N} pods running and probed (${PROBE})`, (r) => `${r.cpuPerMinuteSteady.toFixed(2)} s`],
    ["its containerd's CPU (daemon, not shims)", (r) => `${r.runtimeCpuSeconds.toFixed(1)} s`],
    ['apiserver requests, create to delete', (r) => `${total(r.requests)} (${(total(r.requests) / N).toFixed(1)} a pod)`],
    ['apiserver requests a minute at idle', (r) => (r.idlePerMinute === undefined ? '-' : r.idlePerMinute.toFixed(1))],
    [
      'apiserver watch events sent, create to delete (to all its watchers)',
      (r) => `${total(r.watchEvents)} (${(total(r.watchEvents) / N).toFixed(1)} a pod)`,
    ],
  ];
  const head = ['figure', ...results.map(([t, r]) => `${t.label} (${r.version})`)];
  const lines = [head, head.map(() => '---'), ...rows.map(([label, f]) => [label, ...results.map(([, r]) => f(r))])];
  console.log(
    `${N} busybox pods created ${SEQUENTIAL ? 'one by one, each once the one before is Running' : 'at once'}, pinned to the node; latencies seen through a watch`,
  );
  for (const l of lines) console.log(`| ${l.join(' | ')} |`);
  console.log(
    "\nwhere a start's time goes: the kubelet's pod start SLI, and its CRI calls per pod x mean time, costliest first (its /metrics)",
  );
  for (const [t, r] of results)
    console.log(
      `- ${t.label}: start SLI ${ms(r.startSliMs)}; ${r.runtimeOps
        .slice(0, 8)
        .map((p) => `${/"(.*)"/.exec(p.what)?.[1] ?? p.what} ${p.perPod.toFixed(1)} x ${p.meanMs.toFixed(1)} ms`)
        .join(', ')}`,
    );
  // The bench's create -> Running, less the kubelet's first sight -> Running, is what the
  // apiserver adds both ways: the create reaching the kubelet's watch, the Running status
  // (patch, then the bench's watch) reaching the bench. Both clocks are this machine's.
  console.log(
    "\na pod's way through the kubelet, means: first seen -> worker started (admission), first seen -> Running in its sync, and the apiserver both ways",
  );
  for (const [t, r] of results)
    console.log(
      `- ${t.label}: admission ${ms(r.seenToWorkerMs)}, seen -> Running ${ms(r.seenToRunningMs)}, the apiserver both ways ${ms(mean(r.startup) - r.seenToRunningMs)}`,
    );
  const byKind = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
  console.log('\napiserver requests, create to delete, by kind (from its audit log)');
  for (const [t, r] of results) console.log(`- ${t.label}: ${byKind(r.requests)}`);
  console.log('\napiserver watch events sent, create to delete, by resource (its apiserver_watch_events_total)');
  for (const [t, r] of results) console.log(`- ${t.label}: ${byKind(r.watchEvents)}`);
  if (floor) {
    console.log(
      `\nissue #47's target against the runtime floor (test/bench/floor.ts: the same pods through CRI with no kubelet, ${floor.concurrency} at a time gave its best p99)`,
    );
    for (const [t, r] of results) {
      const v = floorVerdict(t.label, pct(r.startup, 99), floor, N);
      if (v) console.log(`- ${v.met ? 'met' : 'MISSED'}: ${v.target}: ${v.detail}`);
    }
  }
  const ours = results.find(([t]) => t.label === 'kubelet-ts')?.[1],
    theirs = results.find(([t]) => t.label === 'upstream kubelet')?.[1];
  if (ours && theirs) {
    console.log("\nissue #17's targets, kubelet-ts against the upstream kubelet of this run");
    for (const v of verdicts(figures(ours), figures(theirs), N)) console.log(`- ${v.met ? 'met' : 'MISSED'}: ${v.target}: ${v.detail}`);
  }
}

const figures = (r: Result): Figures => ({
  startP99Ms: pct(r.startup, 99),
  exitP99Ms: pct(r.exitSeen, 99),
  rssBeforeMB: r.rssBefore,
  rssSteadyMB: r.rssSteady,
  rssPeakMB: r.rssPeak,
  cpuPerMinuteSteady: r.cpuPerMinuteSteady,
  requestsPerPod: total(r.requests) / N,
  idleRequestsPerMinute: r.idlePerMinute,
});

/** Each node's kubelet's requests and CPU seconds a minute with no pod on it (its lease, node status, watches). */
async function idle(nodes: Target[]): Promise<Map<string, { requests: number; cpu: number }>> {
  console.error(`bench: apiserver requests and CPU of ${nodes.map((t) => t.node).join(', ')} at idle, for ${IDLE_S} s`);
  const from = Date.now(),
    cpuFrom = nodes.map((t) => usage(readPid(t)).cpuSeconds);
  await sleep(IDLE_S * 1000);
  const to = Date.now(),
    minutes = (to - from) / 60_000;
  return new Map(
    nodes.map((t, i) => [
      t.node,
      { requests: total(nodeRequests(t.node, from, to)) / minutes, cpu: (usage(readPid(t)).cpuSeconds - cpuFrom[i]!) / minutes },
    ]),
  );
}

async function main() {
  const results: [Target, Result][] = [];
  const failed: string[] = [];
  // Each node's kubelet without a variant's environment, restarted together: the same age at idle.
  const nodes = TARGETS.filter((t, i) => TARGETS.findIndex((u) => u.node === t.node) === i).map((t) => ({ ...t, env: undefined }));
  if (FRESH) await Promise.all(nodes.map((t) => restartKubelet(t)));
  const atIdle = await idle(nodes);
  for (const t of TARGETS) {
    if (FRESH || t.env) await restartKubelet(t);
    try {
      const i = t.env ? undefined : atIdle.get(t.node);
      results.push([t, { ...(await run(t)), idlePerMinute: i?.requests, idleCpuPerMinute: i?.cpu }]);
    } catch (e) {
      // The other kubelets still run: whether they too are slow on this machine now is what
      // tells a kubelet-ts failure from the machine's.
      failed.push(`${t.label}: ${(e as Error).message}`);
      console.error(`bench: ${t.label} failed: ${(e as Error).message}`);
    } finally {
      if (t.env) await restartKubelet(t, {}, 0);
    }
  }
  if (results.length) table(results);
  if (failed.length) throw new Error(failed.join('; '));
  // Kept for test/bench/plot.ts, which draws start-up latency against pods per node.
  mkdirSync(OUT, { recursive: true });
  const file = `${OUT}/side-by-side-${N}${SEQUENTIAL ? '-sequential' : ''}.json`;
  const runs: BenchRun = {
    pods: N,
    sequential: SEQUENTIAL,
    date: new Date().toISOString(),
    kubelets: results.map(([t, r]) => ({
      label: t.label,
      version: r.version,
      p50: pct(r.startup, 50),
      p99: pct(r.startup, 99),
      rssPeakMB: r.rssPeak,
    })),
  };
  writeFileSync(file, `${JSON.stringify(runs, null, 1)}\n`);
  console.error(`bench: figures kept in ${file}`);
}

main().catch((e) => {
  console.error(`bench failed: ${(e as Error).message}`);
  process.exit(1);
});
