#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072 MALLOC_MMAP_THRESHOLD_=131072 node --max-semi-space-size=2 --no-maglev --no-opt --heap-growing-percent=50
// (The same V8 and malloc settings as src/cli/main.ts: a hollow node's memory is measured as a kubelet's.)
// Hollow kubelet-ts nodes: N kubelets in this one process, each the real runKubelet with its own
// node name, root directory, ports and client certificate, over its own in-memory CRI runtime
// (src/cri/in-memory) and a host that changes nothing (host.ts). Upstream's counterpart is
// kubemark's hollow node (cmd/kubemark --morph=kubelet), one process a node.
//   node dist/hollow/main.js --nodes N --kubeconfig-dir DIR --root-dir DIR [--first I] [--name-prefix P]
//     [--base-port P] [--node-labels k=v,...] [--start-concurrency C] [--content-type T]
// DIR/NAME.kubeconfig must hold the node's client certificate (hack/hollow.sh makes them).
import { mkdirSync } from 'node:fs';
import { loadKubeletConfig } from '../config/kubelet-config.ts';
import { serveInMemoryRuntime } from '../cri/in-memory/server.ts';
import { runKubelet } from '../kubelet/kubelet.ts';
import { logger } from '../log/log.ts';
import { hollowHost } from './host.ts';
import { type HollowNodePlan, nodePlan, parseHollowArgs } from './plan.ts';

async function startNode(p: HollowNodePlan): Promise<() => Promise<void>> {
  mkdirSync(p.rootDir, { recursive: true });
  const cri = await serveInMemoryRuntime(p.socket, { podIP: p.podIP, imageFsPath: p.rootDir });
  const { config } = loadKubeletConfig({ file: { source: `hollow node ${p.name}`, text: JSON.stringify(p.config) } });
  const kubelet = await runKubelet(
    {
      kubeconfig: p.kubeconfig,
      config,
      nodeName: p.name,
      certDir: `${p.rootDir}/pki`,
      runtimeEndpoint: config.containerRuntimeEndpoint,
      rootDir: p.rootDir,
      nodeLabels: p.labels,
      taints: [],
      cniConfDir: `${p.rootDir}/cni`,
      networkPlugin: 'cni',
      systemCgroups: { kubeletCgroups: '', systemCgroups: '', runtimeCgroups: '' },
    },
    hollowHost(),
  );
  return async () => {
    await kubelet.stop();
    await cri.stop();
  };
}

async function main() {
  const args = parseHollowArgs(process.argv.slice(2));
  if ('error' in args) throw new Error(args.error);
  const log = logger('hollow');
  const stops: (() => Promise<void>)[] = [];
  let stopping = false;
  for (const sig of ['SIGTERM', 'SIGINT'] as const)
    process.once(sig, async () => {
      stopping = true;
      log.info('Stopping the hollow nodes', { nodes: stops.length, signal: sig });
      setTimeout(() => process.exit(0), 10_000).unref();
      await Promise.allSettled(stops.map((s) => s()));
      process.exit(0);
    });
  const started = performance.now();
  // A few at a time: each start reads the host, loads its config and makes its first API calls.
  let next = 0;
  const starter = async () => {
    while (!stopping && next < args.nodes) {
      const plan = nodePlan(args, next++);
      stops.push(await startNode(plan));
    }
  };
  await Promise.all(Array.from({ length: Math.min(args.startConcurrency, args.nodes) }, starter));
  log.info('Hollow nodes started', { nodes: stops.length, seconds: ((performance.now() - started) / 1000).toFixed(1) });
}

main().catch((e: unknown) => {
  process.stderr.write(`kubelet-ts hollow: error: ${((e as Error).message ?? String(e)).replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(1);
});
