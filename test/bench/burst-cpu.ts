// Where the machine's CPU goes while BENCH_PODS of the bench's pods start at once on one node:
// every process's CPU from the create to the last pod Running, by part of the stack
// (process-groups.ts). It says what share of the cores a kubelet, the control plane and the
// bench itself take from the runtime in a burst, which the runtime's floor (floor.ts) does not
// pay. Usage: [BENCH_PODS=100] [BENCH_NODE=vm] node test/bench/burst-cpu.ts
import { availableParallelism } from 'node:os';
import { machineBusySeconds, machineName } from '../proc.ts';
import { admin, benchNamespace, benchPod, pct, quietMachine, watchPods } from './lib.ts';
import { cpuByGroup, groupShares } from './process-groups.ts';

const N = Number(process.env.BENCH_PODS ?? 100);
const node = process.env.BENCH_NODE ?? 'vm';
const { core } = admin();

await quietMachine();
const ns = await benchNamespace('burst-cpu');
const running = new Map<string, number>();
let allRunning!: () => void;
const done = new Promise<void>((r) => (allRunning = r));
let t0 = Date.now();
const watch = await watchPods(ns, (pod) => {
  const name = pod.metadata!.name!;
  if (pod.status?.phase === 'Running' && !running.has(name)) running.set(name, Date.now() - t0);
  if (running.size === N) allRunning();
});
const before = cpuByGroup();
const busy0 = machineBusySeconds();
t0 = Date.now();
await Promise.all(
  Array.from({ length: N }, (_, i) => core.createNamespacedPod({ namespace: ns, body: benchPod(`p${i}`, node, 'sleep 3600', 'httpGet') })),
);
const timeout = setTimeout(() => {
  console.error(`burst-cpu: only ${running.size} of ${N} pods Running after 5 minutes`);
  process.exit(1);
}, 300_000);
await done;
clearTimeout(timeout);
const after = cpuByGroup();
const busy = machineBusySeconds() - busy0;
const wall = (Date.now() - t0) / 1000;
watch.abort();

const starts = [...running.values()];
console.log(`${N} pods at once on ${node} (${machineName()}): create -> Running p50 ${pct(starts, 50)} ms, p99 ${pct(starts, 99)} ms`);
console.log(`the machine: ${busy.toFixed(1)} CPU-seconds busy of ${(wall * availableParallelism()).toFixed(1)} over ${wall.toFixed(1)} s`);
console.log('| who | CPU s | share of the busy time |\n| --- | --- | --- |');
for (const [g, s, f] of groupShares(before, after, busy)) console.log(`| ${g} | ${s.toFixed(1)} | ${(100 * f).toFixed(0)}% |`);
await core.deleteNamespace({ name: ns });
