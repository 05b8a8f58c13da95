// make chaos: pods churning on the local stack's kubelet-ts while faults land at random
// moments; after each fault the node must be healthy again and every status must agree with
// what runs, and at the end nothing may be left behind. Prints each fault with its time and
// the invariant table; exits 1 when an invariant failed.
//
//   node test/chaos/run.ts [--duration 5m] [--seed N] [--faults 'name,name'] [--outage 60s]
//
// CHAOS_DURATION and CHAOS_SEED are the same knobs for make. The run lasts at least until every
// fault chosen ran once.
import { parseArgs } from 'node:util';
import { mkdirSync, writeFileSync } from 'node:fs';
import { ROOT, clients, eventually, nodeName, restartKubelet } from '../e2e/stack.ts';
import { churn, prepare } from './churn.ts';
import { FAULTS, type FaultContext } from './faults.ts';
import {
  type PodView,
  type Sample,
  apiErrorLine,
  divergence,
  leaks,
  restartFindings,
  slopePerHour,
  table,
  unsettled,
} from './invariants.ts';
import { inventory, kubeletHealthy, pidOf, pods, runtimeContainers } from './node.ts';
import { usage } from '../proc.ts';

export interface ChaosOptions {
  durationMs: number;
  seed: number;
  /** Fault names (faults.ts); all when empty. */
  faults: string[];
  /** The longest control plane outage, ms. */
  maxOutageMs: number;
  /** The longest wait for a healthy node and converged statuses after a fault, ms. */
  convergeMs: number;
  /** Pods kept churning. */
  population: number;
  /** The quiet time before each fault, ms: drawn from [min, max). */
  gapMs: [number, number];
  log: (line: string) => void;
}

export interface ChaosReport {
  ok: boolean;
  table: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** mulberry32: a small seeded generator, so that a run can be repeated. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const t0 = Date.now();
  const rnd = seeded(o.seed);
  const at = () => `+${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s`;
  const log = (line: string) => o.log(`${at()} ${line}`);
  const chosen = o.faults.length ? FAULTS.filter((f) => o.faults.includes(f.name)) : FAULTS;
  const unknown = o.faults.filter((n) => !FAULTS.some((f) => f.name === n));
  if (unknown.length) throw new Error(`unknown faults: ${unknown.join(', ')} (known: ${FAULTS.map((f) => f.name).join(', ')})`);

  const node = nodeName();
  const { core } = clients();
  // Pressure ends 30 s after the disk is freed, not upstream's default 5 min, so that a full disk
  // does not leave the node refusing pods for the faults after it; hack/kubelet.sh's config
  // comes back at the end.
  restartKubelet('evictionPressureTransitionPeriod: 30s\n');
  // Set when the run ends, also by an error: the churn and the observer stop.
  let stopped = false;
  try {
    await eventually('kubelet healthy', o.convergeMs, () => kubeletHealthy(node), 500);
    const ns = `chaos-${Date.now().toString(36)}`;
    await core.createNamespace({ body: { metadata: { name: ns } } });
    await eventually('the default ServiceAccount', 30_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace: ns }));
    await prepare(ns);
    const start = inventory();
    const work = churn(ns, node, o.population, rnd);
    log(`seed ${o.seed}, namespace ${ns}, ${chosen.length} faults, ${o.population} pods churning`);

    // Observers: restarts between consecutive looks, and the kubelet's memory.
    const findings = {
      restarts: new Set<string>(),
      counts: new Set<string>(),
      converge: [] as string[],
      health: [] as string[],
      during: [] as string[],
      startErrors: new Set<string>(),
      failedByNode: new Set<string>(),
    };
    const rss: Sample[] = [];
    let prev: PodView[] = [];
    let paused = false;
    let steps = 0;
    const look = async () => {
      const now = await pods(ns);
      for (const f of restartFindings(prev, now)) (/went down/.test(f) ? findings.counts : findings.restarts).add(f);
      for (const p of now) {
        for (const c of p.containers) if (c.reason === 'StartError') findings.startErrors.add(`${p.name}/${c.name}`);
        if (p.phase === 'Failed' && p.reason) findings.failedByNode.add(`${p.name} ${p.reason}`);
      }
      prev = now;
    };
    const observer = (async () => {
      while (!stopped) {
        await look().catch(() => {});
        try {
          const pid = pidOf('kubelet-ts.child');
          rss.push({ t: Date.now(), value: usage(pid).rssMB, pid });
        } catch {}
        await sleep(3000);
      }
    })();
    const churner = (async () => {
      while (!stopped) {
        if (!paused)
          await work.step().then(
            () => steps++,
            (e: Error) => log(`churn: ${apiErrorLine(e)}`),
          );
        await sleep(1000 + rnd() * 2000);
      }
    })();

    // Faults, drawn from a shuffled deck refilled when empty, until the time is up and each ran once.
    const ctx: FaultContext = { churn: work, node, rnd, maxOutageMs: o.maxOutageMs, problem: (what) => findings.during.push(what) };
    const done = new Map<string, number[]>();
    let deck: typeof chosen = [];
    while (Date.now() - t0 < o.durationMs || done.size < chosen.length) {
      await sleep(o.gapMs[0] + rnd() * (o.gapMs[1] - o.gapMs[0]));
      if (!deck.length) deck = [...chosen].sort(() => rnd() - 0.5);
      const fault = deck.pop()!;
      log(`fault: ${fault.name}`);
      const detail = await fault.inject(ctx);
      log(`  ${detail}`);
      paused = true;
      const healed = Date.now();
      const healthy = await eventually('kubelet healthy', o.convergeMs, () => kubeletHealthy(node), 500).then(
        () => true,
        () => false,
      );
      if (!healthy) findings.health.push(`${fault.name}: kubelet not healthy ${o.convergeMs / 1000} s after it`);
      let last: string[] = [];
      const converged = await eventually(
        'statuses converged',
        Math.max(0, o.convergeMs - (Date.now() - healed)),
        async () => {
          const ps = await pods(ns);
          last = [...divergence(ps, runtimeContainers(ns)), ...unsettled(ps)];
          return last.length === 0;
        },
        1000,
      ).then(
        () => Date.now() - healed,
        () => undefined,
      );
      if (converged === undefined)
        findings.converge.push(`${fault.name}: not converged in ${o.convergeMs / 1000} s: ${last.slice(0, 3).join('; ')}`);
      else log(`  healthy and converged in ${(converged / 1000).toFixed(1)} s`);
      done.set(fault.name, [...(done.get(fault.name) ?? []), converged ?? Number.POSITIVE_INFINITY]);
      await look().catch(() => {});
      paused = false;
    }

    // The end: every pod deleted, and then nothing left behind.
    stopped = true;
    await Promise.all([observer, churner]);
    await look().catch(() => {});
    await work.cleanup();
    log('every pod deleted; waiting for the node to clean up');
    let left = leaks(start, inventory());
    const cleaned = await eventually(
      'nothing left behind',
      o.convergeMs,
      async () => {
        if ((await pods(ns)).length) return false;
        left = leaks(start, inventory());
        return Object.values(left).every((l) => l.length === 0);
      },
      1000,
    ).then(
      () => true,
      () => false,
    );
    await core.deleteNamespace({ name: ns }).catch(() => {});
    log(cleaned ? 'clean' : 'left behind');

    const ok = (xs: { size: number } | unknown[]) => (('size' in xs ? xs.size : xs.length) === 0 ? 'ok' : 'FAIL');
    const first = (xs: Iterable<string>) => [...xs].slice(0, 3).join('; ');
    const worst = Math.max(...[...done.values()].flat());
    const slope = slopePerHour(rss, 60_000);
    const judged = slope && slope.spanMs >= 10 * 60_000;
    const rows: [string, string, string][] = [
      ['faults injected', 'ok', [...done].map(([n, t]) => `${n} x${t.length}`).join(', ')],
      ['pods churned', steps > 0 ? 'ok' : 'FAIL', `${steps} creates and deletes`],
      ['the kubelet stays up and says so through a fault', ok(findings.during), first(findings.during)],
      ['kubelet healthy after each fault', ok(findings.health), first(findings.health)],
      [
        'statuses agree with the runtime after each fault',
        ok(findings.converge),
        findings.converge.length ? first(findings.converge) : `within ${(worst / 1000).toFixed(1)} s (bound ${o.convergeMs / 1000} s)`,
      ],
      ['no restart without a reason', ok(findings.restarts), first(findings.restarts)],
      ['restartCount only grows', ok(findings.counts), first(findings.counts)],
      // containerd fails a StartContainer whose caller went away ("context canceled"): a kubelet
      // killed in that call leaves the container exited with StartError, for upstream's kubelet too.
      [
        'starts cut short by a kubelet kill',
        'note',
        findings.startErrors.size ? `${findings.startErrors.size}, StartError: ${first(findings.startErrors)}` : 'none',
      ],
      [
        'pods the node failed with a reason',
        'note',
        findings.failedByNode.size ? `${findings.failedByNode.size}: ${first(findings.failedByNode)}` : 'none',
      ],
      ...Object.entries(left).map(([kind, l]): [string, string, string] => [`no leaked ${kind}`, ok(l), l.slice(0, 3).join(' ')]),
      [
        'kubelet RSS does not grow',
        judged && slope.perHour > 20 ? 'FAIL' : 'ok',
        slope
          ? `${slope.perHour.toFixed(1)} MB/h over ${(slope.spanMs / 60_000).toFixed(1)} min, ${new Set(rss.map((x) => x.pid)).size} kubelets, each from its second minute${judged ? '' : ' (judged from 10 min on)'}; last ${rss.at(-1)?.value.toFixed(0)} MB`
          : 'too few samples',
      ],
    ];
    return { ok: rows.every((r) => r[1] !== 'FAIL'), table: table(rows) };
  } finally {
    stopped = true;
    restartKubelet();
  }
}

/** 90s, 5m, 1h, or milliseconds. */
function duration(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(s);
  if (!m) throw new Error(`not a duration: ${s}`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 'ms']!;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: process.env.CHAOS_DURATION || '5m' },
      seed: { type: 'string', default: process.env.CHAOS_SEED || String(Date.now() % 1_000_000) },
      faults: { type: 'string', default: '' },
      outage: { type: 'string', default: '60s' },
    },
  });
  const report = await runChaos({
    durationMs: duration(values.duration),
    seed: Number(values.seed),
    faults: values.faults.split(',').filter(Boolean),
    maxOutageMs: duration(values.outage),
    convergeMs: 120_000,
    population: 12,
    gapMs: [5000, 15_000],
    log: (l) => console.log(l),
  });
  console.log(`\n${report.table}`);
  const dir = `${ROOT}/_output/chaos`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/last.txt`, `${new Date().toISOString()} duration ${values.duration} seed ${values.seed}\n${report.table}\n`);
  process.exit(report.ok ? 0 : 1);
}
