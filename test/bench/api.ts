// `make bench` (after the pods bench) or `make bench-api`: the kubelet API under load.
// With 30 busybox pods running, 50 clients call the kubelet port directly (the admin
// client certificate, kept-alive connections) as fast as answers come, one endpoint per
// phase; prints latency percentiles, throughput and the kubelet CPU time each phase cost.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { hostname } from 'node:os';
import { benchNamespace, core, createBusyboxPods, kubeletPid, pct, ROOT, usage, waitRunning } from './lib.ts';

const PODS = Number(process.env.BENCH_PODS ?? 30);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 50);
const SECONDS = Number(process.env.BENCH_API_SECONDS ?? 20);
const URL_BASE = new URL(process.env.BENCH_KUBELET_URL ?? `https://${process.env.KTS_IP ?? '172.30.255.10'}:10250`);
const PATHS = (process.env.BENCH_API_PATHS ?? '/stats/summary,/pods').split(',');

const agent = new Agent({
  keepAlive: true, maxSockets: CLIENTS, rejectUnauthorized: false,
  cert: readFileSync(`${ROOT}/_output/local/pki/admin.crt`), key: readFileSync(`${ROOT}/_output/local/pki/admin.key`),
});

/** One GET, read to the end; resolves with the status and milliseconds taken. */
function get(path: string): Promise<{ status: number; ms: number; bytes: number }> {
  const t = performance.now();
  return new Promise((resolve) => {
    request({ host: URL_BASE.hostname, port: URL_BASE.port, path, agent }, (res) => {
      let bytes = 0;
      res.on('data', (d: Buffer) => { bytes += d.length; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t, bytes }));
    }).on('error', () => resolve({ status: 0, ms: performance.now() - t, bytes: 0 })).end();
  });
}

async function phase(path: string, pid: number) {
  await get(path); // warm: connections open, caches filled
  const latencies: number[] = [];
  let errors = 0, bytes = 0;
  const before = usage(pid);
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (performance.now() < end) {
      const r = await get(path);
      latencies.push(r.ms);
      bytes = r.bytes;
      if (r.status !== 200) errors++;
    }
  }));
  const after = usage(pid);
  const cpu = after.cpuSeconds - before.cpuSeconds;
  console.log(`${path.padEnd(16)} p50 ${pct(latencies, 50).toFixed(1)} ms  p99 ${pct(latencies, 99).toFixed(1)} ms  `
    + `${(latencies.length / SECONDS).toFixed(0)} req/s  (n=${latencies.length}, errors ${errors}, ${(bytes / 1024).toFixed(1)} KiB each)  `
    + `kubelet CPU ${cpu.toFixed(1)} s (${((cpu * 1000) / latencies.length).toFixed(2)} ms/request), RSS ${after.rssMB.toFixed(0)} MB`);
}

async function main() {
  const ns = await benchNamespace('bench-api');
  try {
    // Pinned to kubelet-ts's node: `make bench` may have had an upstream kubelet's node beside it.
    await createBusyboxPods(ns, PODS, 'sleep 3600', { restartPolicy: 'Always', nodeName: (process.env.NODE_NAME ?? hostname()).toLowerCase() });
    await waitRunning(ns, PODS);
    const pid = kubeletPid();
    console.log(`kubelet-ts API bench: ${PODS} busybox pods running, ${CLIENTS} clients, ${SECONDS} s per endpoint, ${URL_BASE.host}`);
    for (const path of PATHS) await phase(path, pid);
  } finally {
    agent.destroy();
    await core.deleteNamespace({ name: ns });
  }
}

main().catch((e) => { console.error(`bench failed: ${(e as Error).message}`); process.exit(1); });
