// The runtime's own floor (issue #47 item 1): make bench's pods created straight through CRI with
// no kubelet, on a containerd of the kubelets' build (hack/runtime-floor.sh start: its own root,
// socket, CNI bridge and cgroup root), at make bench's densities, each burst tried at several
// concurrencies. A pod's time is its create request -> its container running (StartContainer
// returned), as the kubelets' create -> Running; the same sandbox and container configs as
// kubelet-ts sends (src/runtime/pod-config.ts), the same busybox, command and mounts, and the
// httpGet readiness probe's work done here: a GET to the pod every 10 s once it runs. The best p99
// of each density is the floor side-by-side.ts divides each kubelet's start p50/p99 by.
// Every sandbox it made is removed, also on failure; the containerd itself is the script's.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { ImageClient } from '../../src/cri/image-client.ts';
import { RuntimeClient } from '../../src/cri/runtime-client.ts';
import { containerConfig, type NodeContext, sandboxConfig } from '../../src/runtime/pod-config.ts';
import { cgroupLayout } from '../../src/resources/cgroup-layout.ts';
import { type Density, type FloorDoc, type FloorRun, bestOfEach, concurrencies, densities } from './floor-plan.ts';
import { BUSYBOX, ROOT, benchPod, pct, quietMachine } from './lib.ts';
import { machineName } from '../proc.ts';

/** FLOOR_SOCK: hack/runtime-floor.sh's containerd. Never the stack's: the floor removes every sandbox it finds there. */
const SOCK = process.env.FLOOR_SOCK ?? 'unix:///run/containerd-floor/containerd.sock';
if (/\/run\/containerd\/containerd\.sock$/.test(SOCK))
  throw new Error(`FLOOR_SOCK=${SOCK}: the stack's containerd; the floor runs on its own`);
/** FLOOR_DENSITIES (30,100,100-sequential): make bench's. */
const DENSITIES = densities(process.env.FLOOR_DENSITIES ?? '30,100,100-sequential');
/** FLOOR_CONCURRENCY (1,2,4,8,16,all): the workers a burst is tried with; the best p99 is the floor. */
const CONCURRENCY = process.env.FLOOR_CONCURRENCY ?? '1,2,4,8,16,all';
const PROBE = (process.env.BENCH_PROBE ?? 'httpGet') as 'httpGet' | 'exec';
if (PROBE !== 'httpGet' && PROBE !== 'exec') throw new Error(`BENCH_PROBE=${PROBE}: the probes are httpGet and exec`);
const START_S = Number(process.env.BENCH_START_SECONDS ?? 300);
/** BENCH_QUIET_SECONDS (60): how long each burst waits for a quiet machine (lib.ts quietMachine); 13 bursts in make bench. */
const QUIET_S = Number(process.env.BENCH_QUIET_SECONDS ?? 60);
const OUT = process.env.BENCH_OUT ?? `${ROOT}/_output/bench`;
/** Where hack/runtime-floor.sh looks: the pods' log dirs and cgroup root, and the files their mounts bind. */
const POD_LOGS = '/var/log/pods-floor';
const FILES = '/run/containerd-floor/pods';
const CGROUPS = '/sys/fs/cgroup';
const NODE: NodeContext = {
  podLogsDir: POD_LOGS,
  clusterDomain: 'cluster.local',
  clusterDNS: ['10.96.0.10'],
  hostDNS: { servers: [], searches: [], options: [] },
  cgroups: cgroupLayout('cgroupfs', '/floor'),
};
/** As side-by-side.ts: the container waits on a FIFO, costing no CPU. */
const SCRIPT = 'mkfifo /tmp/go && read x < /tmp/go; exit 0';

const runtime = new RuntimeClient(SOCK);
const images = new ImageClient(SOCK);

/** One pod's CRI calls, as a kubelet's first sync of it: sandbox, its IP, the image, the container. */
async function startPod(ns: string, name: string, made: string[], onIp: (ip: string) => void): Promise<void> {
  const spec = benchPod(name, 'floor', SCRIPT, PROBE);
  const pod = { ...spec, metadata: { ...spec.metadata, namespace: ns, uid: randomUUID() } } as Pod;
  const config = sandboxConfig(pod, 0, NODE);
  mkdirSync(config.logDirectory!, { recursive: true });
  const id = (await runtime.runPodSandbox({ config, runtimeHandler: '' })).podSandboxId;
  made.push(id);
  const ip = (await runtime.podSandboxStatus({ podSandboxId: id })).status?.network?.ip;
  // imagePullPolicy IfNotPresent (a tagged image): the kubelet asks for the image's status, pulls when absent.
  const c = pod.spec!.containers[0]!;
  if (!(await images.imageStatus({ image: { image: BUSYBOX } })).image)
    await images.pullImage({ image: { image: BUSYBOX }, sandboxConfig: config });
  // The mounts a kubelet gives such a pod: its /etc/hosts, the termination message file, the service account token dir.
  const dir = `${FILES}/${pod.metadata!.uid}`;
  mkdirSync(`${dir}/token`, { recursive: true });
  writeFileSync(`${dir}/hosts`, `127.0.0.1\tlocalhost\n${ip ?? ''}\t${name}\n`);
  writeFileSync(`${dir}/termination-log`, '');
  const mounts = [
    { containerPath: '/etc/hosts', hostPath: `${dir}/hosts` },
    { containerPath: '/dev/termination-log', hostPath: `${dir}/termination-log` },
    { containerPath: '/var/run/secrets/kubernetes.io/serviceaccount', hostPath: `${dir}/token`, readonly: true },
  ];
  const { containerId } = await runtime.createContainer({
    podSandboxId: id,
    config: containerConfig(pod, c, 0, { mounts }),
    sandboxConfig: config,
  });
  await runtime.startContainer({ containerId });
  if (ip) onIp(ip);
}

/** The readiness probe's work: an HTTP GET to the pod every 10 s (the first at once, as a prober's first). */
function prober() {
  const timers: NodeJS.Timeout[] = [];
  let failures = 0;
  const get = (ip: string) => {
    const req = request({ host: ip, port: 8080, path: '/', timeout: 1000 }, (res) => res.resume());
    req.on('error', () => failures++).on('timeout', () => req.destroy());
    req.end();
  };
  return {
    add(ip: string) {
      if (PROBE !== 'httpGet') return;
      get(ip);
      timers.push(setInterval(() => get(ip), 10_000));
    },
    stop: () => {
      for (const t of timers) clearInterval(t);
      return failures;
    },
  };
}

/** Removes the sandboxes (their containers and netns with them), a few at a time; the pods' files and logs after. */
async function removeAll(ids: string[]) {
  const queue = [...ids];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let id = queue.shift(); id; id = queue.shift()) {
        await runtime.stopPodSandbox({ podSandboxId: id }).catch((e) => console.error(`floor: stop ${id}: ${(e as Error).message}`));
        await runtime.removePodSandbox({ podSandboxId: id }).catch((e) => console.error(`floor: remove ${id}: ${(e as Error).message}`));
      }
    }),
  );
  rmSync(FILES, { recursive: true, force: true });
  rmSync(POD_LOGS, { recursive: true, force: true });
  // The pods' cgroups, which runc leaves (a kubelet removes them itself, upstream's cleanupOrphanedPodCgroups).
  for (const controller of readdirSync(CGROUPS)) {
    const qos = `${CGROUPS}/${controller}/floor/kubepods/besteffort`;
    for (const d of existsSync(qos) ? readdirSync(qos).filter((n) => n.startsWith('pod')) : [])
      try {
        rmdirSync(`${qos}/${d}`);
      } catch {}
  }
}

/** One burst: d.pods asked for at once (each pod's clock starts now) and `concurrency` workers taking them in order; or one by one. */
async function burst(d: Density, concurrency: number): Promise<number[]> {
  const ns = `floor-${Date.now().toString(36)}`;
  const made: string[] = [],
    starts: number[] = [];
  const probes = prober();
  try {
    const t0 = performance.now();
    let next = 0;
    const deadline = Date.now() + START_S * 1000;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < d.pods; i = next++) {
          if (Date.now() > deadline) throw new Error(`${d.pods} pods not started within ${START_S} s`);
          const from = d.sequential ? performance.now() : t0;
          await startPod(ns, `p${i}`, made, probes.add);
          starts.push(performance.now() - from);
        }
      }),
    );
    return starts;
  } finally {
    const failed = probes.stop();
    // A first GET right after StartContainer may come before httpd listens, as a kubelet's first probe may.
    if (failed) console.error(`floor: ${failed} probe GETs failed (connection refused before httpd listens, or a timeout)`);
    await removeAll(made);
  }
}

async function main() {
  const version = await runtime.version();
  // What a run that did not finish left (the floor's containerd is nobody else's).
  await removeAll((await runtime.listPodSandbox({})).items.map((s) => s.id));
  const runs: FloorRun[] = [];
  for (const d of DENSITIES) {
    // One pod first, as side-by-side.ts's warm-up: the bridge's creation is in no figure.
    await burst({ pods: 1, sequential: false }, 1);
    for (const c of concurrencies(CONCURRENCY, d)) {
      await quietMachine(0.3, QUIET_S * 1000);
      console.error(`floor: ${d.pods} pods ${d.sequential ? 'one by one' : `at once, ${c} at a time`}`);
      const starts = await burst(d, c);
      runs.push({ ...d, concurrency: c, p50: pct(starts, 50), p99: pct(starts, 99) });
    }
  }
  const doc: FloorDoc = {
    date: new Date().toISOString(),
    machine: machineName(),
    runtime: `${version.runtimeName} ${version.runtimeVersion}`,
    runs,
    best: bestOfEach(runs),
  };
  console.log(`the runtime's floor (${doc.runtime}, no kubelet): create request -> container running, through CRI`);
  console.log('| pods | concurrency | p50 | p99 | best p99 of its density |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const r of runs) {
    const isBest = doc.best.includes(r);
    console.log(
      `| ${r.pods}${r.sequential ? ' one by one' : ' at once'} | ${r.concurrency} | ${Math.round(r.p50)} ms | ${Math.round(r.p99)} ms | ${isBest ? 'yes' : ''} |`,
    );
  }
  mkdirSync(OUT, { recursive: true });
  writeFileSync(`${OUT}/floor.json`, `${JSON.stringify(doc, null, 1)}\n`);
  console.error(`floor: figures kept in ${OUT}/floor.json`);
}

/** Whatever failed, nothing of the floor's stays in its containerd (hack/runtime-floor.sh stop sweeps again). */
async function cleanup() {
  await removeAll((await runtime.listPodSandbox({}).catch(() => ({ items: [] }))).items.map((s) => s.id));
  runtime.close();
  images.close();
}
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    console.error(`floor: ${signal}: removing its sandboxes`);
    void cleanup().finally(() => process.exit(1));
  });

main()
  .catch((e) => {
    console.error(`floor failed: ${(e as Error).message}`);
    process.exitCode = 1;
  })
  .finally(cleanup);
