// `make bench`: pod start-up and status latency on the running local stack, and what
// the kubelet costs meanwhile. 30 busybox pods are created at once; a watch timestamps
// when each is seen Running, then when each one's container exit is seen in its status.
// Prints a table; docs/benchmarks.md records runs with the machine they ran on.
import { readFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CoreV1Api, KubeConfig, Watch, type V1Pod } from '@kubernetes/client-node';

const ROOT = new URL('../..', import.meta.url).pathname;
const execFileP = promisify(execFile);
const N = Number(process.env.BENCH_PODS ?? 30);
const kc = new KubeConfig();
kc.loadFromFile(`${ROOT}/_output/local/admin.kubeconfig`);
const core = kc.makeApiClient(CoreV1Api);
const ns = `bench-${Date.now().toString(36)}`;

const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN; };
const kubeletPid = () => Number(readFileSync(`${ROOT}/_output/local/pids/kubelet-ts.child.pid`, 'utf8'));
function usage(pid: number) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const rssKB = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
  return { cpuSeconds: (Number(stat[11]) + Number(stat[12])) / 100, rssMB: rssKB / 1024 };
}

async function main() {
  await core.createNamespace({ body: { metadata: { name: ns } } });
  for (let i = 0; i < 100 && !(await core.readNamespacedServiceAccount({ name: 'default', namespace: ns }).catch(() => undefined)); i++) await new Promise((r) => setTimeout(r, 100));
  const pid = kubeletPid();
  const before = usage(pid);
  let peakRSS = before.rssMB;
  const sampler = setInterval(() => { peakRSS = Math.max(peakRSS, usage(pid).rssMB); }, 200);

  const created = new Map<string, number>(), running = new Map<string, number>(), exited = new Map<string, number>(), exitAt = new Map<string, number>();
  const watch = await new Watch(kc).watch(`/api/v1/namespaces/${ns}/pods`, {}, (_type, pod: V1Pod) => {
    const name = pod.metadata!.name!, now = Date.now();
    if (pod.status?.phase === 'Running' && !running.has(name)) running.set(name, now);
    if (pod.status?.containerStatuses?.[0]?.state?.terminated && !exited.has(name)) exited.set(name, now);
  }, () => {});

  // Each container sleeps until a file appears, then exits: the exit moment is known to the ms.
  const script = 'while [ ! -f /tmp/go ]; do sleep 0.05; done; exit 0';
  await Promise.all(Array.from({ length: N }, (_, i) => {
    const name = `p${i}`;
    created.set(name, Date.now());
    return core.createNamespacedPod({ namespace: ns, body: { metadata: { name }, spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: 'docker.io/library/busybox:1.36', command: ['sh', '-c', script] }] } } });
  }));
  const deadline = Date.now() + 120_000;
  while (running.size < N && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (running.size < N) throw new Error(`only ${running.size}/${N} pods Running after 120 s`);

  for (const name of created.keys()) {
    // Asynchronous, so the watch callbacks keep timestamping while kubectl runs.
    await execFileP(`${ROOT}/_output/bin/kubectl`, ['--kubeconfig', `${ROOT}/_output/local/admin.kubeconfig`, 'exec', '-n', ns, name, '--', 'touch', '/tmp/go']);
    exitAt.set(name, Date.now()); // the container sees the file within its 50 ms poll and exits
  }
  while (exited.size < N && Date.now() < deadline + 60_000) await new Promise((r) => setTimeout(r, 50));
  clearInterval(sampler);
  const after = usage(pid);
  watch.abort();

  const startup = [...running].map(([n, t]) => t - created.get(n)!);
  const exitSeen = [...exited].map(([n, t]) => t - exitAt.get(n)!);
  const row = (label: string, xs: number[]) => console.log(`${label.padEnd(34)} p50 ${pct(xs, 50)} ms  p90 ${pct(xs, 90)} ms  p99 ${pct(xs, 99)} ms  (n=${xs.length})`);
  console.log(`kubelet-ts bench: ${N} busybox pods created at once`);
  row('create -> Running (watch)', startup);
  row('container exit -> status (watch)', exitSeen);
  console.log(`kubelet RSS: before ${before.rssMB.toFixed(0)} MB, peak ${peakRSS.toFixed(0)} MB, after ${after.rssMB.toFixed(0)} MB`);
  console.log(`kubelet CPU during the run: ${(after.cpuSeconds - before.cpuSeconds).toFixed(1)} s`);
  await core.deleteNamespace({ name: ns });
}

main().catch((e) => { console.error(`bench failed: ${(e as Error).message}`); process.exit(1); });
