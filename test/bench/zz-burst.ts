import { admin, benchNamespace, benchPod, sleep } from './lib.ts';
const { core } = admin();
const N = Number(process.env.N ?? 30),
  node = process.env.NODE ?? 'vm';
const ns = await benchNamespace('burst');
const t0 = Date.now();
await Promise.all(
  Array.from({ length: N }, (_, i) => core.createNamespacedPod({ namespace: ns, body: benchPod(`p${i}`, node, 'sleep 3600', 'httpGet') })),
);
const done = new Map<string, number>();
while (done.size < N && Date.now() - t0 < 180_000) {
  const l = await core.listNamespacedPod({ namespace: ns });
  for (const p of l.items) if (p.status?.phase === 'Running' && !done.has(p.metadata!.name!)) done.set(p.metadata!.name!, Date.now() - t0);
  await sleep(250);
}
const xs = [...done.values()].sort((a, b) => a - b);
console.log(`ns ${ns} running ${xs.length}/${N} p50 ${xs[Math.floor(xs.length / 2)]} max ${xs.at(-1)}`);
await core.deleteNamespace({ name: ns });
