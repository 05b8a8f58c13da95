// The resident memory of the kubelet's steady work without a cluster (issue #17,
// docs/benchmarks.md): dist/'s modules, then RuntimeView.pods() (the PLEG relist) every PACE ms
// against a fake CRI runtime in a child process (6 pods of 2 containers), and every tenth
// time ListContainerStats and the /metrics text. At the end: RSS by mapping, V8's heap, CPU.
//   MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072 MALLOC_MMAP_THRESHOLD_=131072 \
//     node --max-semi-space-size=4 --no-maglev test/bench/relist-memory.mjs [ITER [PACE]]
// JavaScript, not TypeScript: type stripping would load its own compiler into the measured process.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dist = join(import.meta.dirname, '../../dist');
const load = (m) => import(join(dist, m));

const ns = (i) => String(1764150000000000000n + BigInt(i) * 1000000n);
const pods = Array.from({ length: 6 }, (_, p) => ({
  uid: `0f0e${p}a1c-5b8e-4c1e-9d1f-2f4a6c8e0b${p}1`,
  name: `web-${p}-7d9f8c6b5-x${p}k2q`,
}));
const podLabels = (p) => ({
  'io.kubernetes.pod.name': p.name,
  'io.kubernetes.pod.namespace': 'default',
  'io.kubernetes.pod.uid': p.uid,
});
const sandboxes = pods.map((p, i) => ({
  id: String(i).repeat(64),
  metadata: { name: p.name, uid: p.uid, namespace: 'default', attempt: 0 },
  state: 'SANDBOX_READY',
  createdAt: ns(i),
  labels: { ...podLabels(p), app: 'web' },
  annotations: { 'kubernetes.io/config.source': 'api' },
}));
const containers = pods.flatMap((p, i) =>
  ['app', 'sidecar'].map((name, j) => ({
    id: `c${i}${j}`.padEnd(64, 'f'),
    podSandboxId: sandboxes[i].id,
    metadata: { name, attempt: 0 },
    image: { image: `sha256:${'a'.repeat(64)}` },
    imageRef: `sha256:${'a'.repeat(64)}`,
    state: 'CONTAINER_RUNNING',
    createdAt: ns(i * 2 + j),
    labels: { ...podLabels(p), 'io.kubernetes.container.name': name },
    annotations: { 'io.kubernetes.container.hash': '5d3c2b1a', 'io.kubernetes.container.restartCount': '0' },
  })),
);
const value = (v) => ({ value: String(v) });

async function fakeRuntime(sock) {
  const { Server, ServerCredentials } = await import('@grpc/grpc-js');
  const { criServices } = await load('cri/proto.js');
  const answer = (body) => (call, cb) => cb(null, body(call.request));
  const server = new Server();
  server.addService(criServices().runtime, {
    ListPodSandbox: answer(() => ({ items: sandboxes })),
    ListContainers: answer(() => ({ containers })),
    PodSandboxStatus: answer((r) => ({ status: { ...sandboxes.find((s) => s.id === r.podSandboxId), network: { ip: '10.244.2.7' } } })),
    ContainerStatus: answer((r) => {
      const c = containers.find((x) => x.id === r.containerId);
      return {
        status: {
          ...c,
          startedAt: c.createdAt,
          finishedAt: '0',
          image: { image: 'registry.k8s.io/pause:3.10' },
          resources: { linux: { cpuShares: 512 } },
        },
      };
    }),
    ListContainerStats: answer(() => ({
      stats: containers.map((c, i) => ({
        attributes: { id: c.id, metadata: c.metadata, labels: c.labels },
        cpu: { timestamp: ns(i), usageCoreNanoSeconds: value(1e9 * i) },
        memory: { timestamp: ns(i), workingSetBytes: value(10485760) },
      })),
    })),
  });
  server.bindAsync(`unix://${sock}`, ServerCredentials.createInsecure(), (e) => {
    if (e) throw e;
    process.stdout.write('ready\n');
  });
}

/** Resident MB by kind of mapping, from /proc/self/smaps. */
function residentByMapping() {
  const out = {};
  let kind = '';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const m = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (m)
      kind = m[2].endsWith('/bin/node') ? 'binary' : m[2] === '[heap]' ? 'malloc' : m[2] ? 'libs' : m[1].includes('x') ? 'jit' : 'anon';
    else if (line.startsWith('Rss:')) out[kind] = (out[kind] ?? 0) + Number.parseInt(line.slice(4), 10) / 1024;
  }
  return out;
}

async function measure(iterations, paceMs) {
  const dir = mkdtempSync(join(tmpdir(), 'relist-memory-'));
  const sock = join(dir, 'cri.sock');
  const child = spawn(process.execPath, [import.meta.filename, 'fake-runtime', sock], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve) => child.stdout.once('data', resolve));
  for (const m of ['kubelet/kubelet.js', 'certificates/client-cert.js', 'join/join.js']) await load(m);
  const { RuntimeClient } = await load('cri/runtime-client.js');
  const { RuntimeView } = await load('runtime/cri-runtime.js');
  const { registry, observeRuntimeOperation } = await load('metrics/metrics.js');
  const cri = new RuntimeClient(`unix://${sock}`, { observer: observeRuntimeOperation });
  const view = new RuntimeView(cri);
  const cpu = process.cpuUsage();
  for (let i = 0; i < iterations; i++) {
    await view.pods();
    if (i % 10 === 0) {
      await cri.listContainerStats({});
      await registry.metrics();
    }
    await new Promise((r) => setTimeout(r, paceMs));
  }
  const used = process.cpuUsage(cpu);
  const mb = (b) => Math.round((b / 1048576) * 10) / 10;
  const mem = process.memoryUsage();
  const mapping = Object.fromEntries(Object.entries(residentByMapping()).map(([k, v]) => [k, Math.round(v * 10) / 10]));
  console.log(
    JSON.stringify({
      rss: mb(mem.rss),
      heapTotal: mb(mem.heapTotal),
      heapUsed: mb(mem.heapUsed),
      mapping,
      cpuSeconds: (used.user + used.system) / 1e6,
    }),
  );
  cri.close();
  child.kill();
  rmSync(dir, { recursive: true, force: true });
}

if (process.argv[2] === 'fake-runtime') await fakeRuntime(process.argv[3]);
else await measure(Number(process.argv[2] ?? 1200), Number(process.argv[3] ?? 1000));
