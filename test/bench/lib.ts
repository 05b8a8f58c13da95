// What the benchmarks share: the admin client, a namespace of their own, busybox pods,
// and the kubelet's CPU and memory as /proc tells them.
import { CoreV1Api, KubeConfig, Watch, type V1Pod } from '@kubernetes/client-node';

export { usage } from '../proc.ts';

export const ROOT = new URL('../..', import.meta.url).pathname;
export const BUSYBOX = 'docker.io/library/busybox:1.36';

export const kc = new KubeConfig();
kc.loadFromFile(`${ROOT}/_output/local/admin.kubeconfig`);
export const core = kc.makeApiClient(CoreV1Api);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The p-th percentile (nearest rank). */
export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};

/** A fresh namespace whose default ServiceAccount exists (pods cannot be created before it). */
export async function benchNamespace(prefix: string): Promise<string> {
  const ns = `${prefix}-${Date.now().toString(36)}`;
  await core.createNamespace({ body: { metadata: { name: ns } } });
  for (let i = 0; i < 100 && !(await core.readNamespacedServiceAccount({ name: 'default', namespace: ns }).catch(() => undefined)); i++)
    await sleep(100);
  return ns;
}

/** Creates pods p0..p(n-1) at once, each one busybox container running `script`; nodeName pins them past the scheduler. */
export function createBusyboxPods(
  ns: string,
  n: number,
  script: string,
  o: { restartPolicy?: string; nodeName?: string } = {},
): Promise<unknown> {
  return Promise.all(
    Array.from({ length: n }, (_, i) =>
      core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name: `p${i}` },
          spec: {
            nodeName: o.nodeName,
            restartPolicy: o.restartPolicy ?? 'Never',
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'c', image: BUSYBOX, command: ['sh', '-c', script] }],
          },
        },
      }),
    ),
  );
}

/** Calls back with every pod of the namespace as the apiserver's watch sees it change. */
export async function watchPods(ns: string, onPod: (pod: V1Pod) => void): Promise<AbortController> {
  let ac: AbortController | undefined;
  ac = await new Watch(kc).watch(
    `/api/v1/namespaces/${ns}/pods`,
    {},
    (_type, pod: V1Pod) => onPod(pod),
    // Said, not silent: a watch that ends early leaves a run waiting for pods it cannot see
    // (once, on 2026-11-27: "only 0/100 pods Running" while all ran).
    (err: unknown) => {
      if (!ac?.signal.aborted) console.error(`bench: the watch of pods in ${ns} ended${err ? `: ${(err as Error).message}` : ''}`);
    },
  );
  return ac;
}

/** Resolves once n pods of the namespace are Running, or fails after timeoutMs. */
export async function waitRunning(ns: string, n: number, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const running = (await core.listNamespacedPod({ namespace: ns })).items.filter((p) => p.status?.phase === 'Running').length;
    if (running >= n) return;
    if (Date.now() > deadline) throw new Error(`only ${running}/${n} pods Running after ${timeoutMs / 1000} s`);
    await sleep(500);
  }
}
