// What the benchmarks share: the admin client, a namespace of their own, busybox pods,
// and the kubelet's CPU and memory as /proc tells them.
import { CoreV1Api, KubeConfig, Watch, type V1Pod } from '@kubernetes/client-node';

export { usage } from '../proc.ts';
import { machineBusySeconds } from '../proc.ts';

export const ROOT = new URL('../..', import.meta.url).pathname;
export const BUSYBOX = 'docker.io/library/busybox:1.36';

let client: { kc: KubeConfig; core: CoreV1Api } | undefined;
/** The local stack's admin client, made on first use: the bench's unit tests import this file with no stack up. */
export function admin(): { kc: KubeConfig; core: CoreV1Api } {
  if (!client) {
    const kc = new KubeConfig();
    kc.loadFromFile(`${ROOT}/_output/local/admin.kubeconfig`);
    client = { kc, core: kc.makeApiClient(CoreV1Api) };
  }
  return client;
}

/** Port 8080 of each pod: busybox httpd (it forks itself to the background) for the httpGet probe. */
export const SERVE = 'echo ok > /tmp/index.html && httpd -p 8080 -h /tmp && ';

/**
 * The bench's pod (side-by-side.ts; floor.ts runs the same one straight through CRI): one busybox
 * container running `script`, behind busybox httpd when the readiness probe (every 10 s) is httpGet.
 */
export function benchPod(name: string, node: string, script: string, probe: 'httpGet' | 'exec'): V1Pod {
  return {
    metadata: { name },
    spec: {
      nodeName: node,
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'c',
          image: BUSYBOX,
          command: ['sh', '-c', probe === 'httpGet' ? SERVE + script : script],
          // Issue #17's steady state: a readiness probe every 10 s on each pod, as real workloads have.
          readinessProbe: {
            ...(probe === 'httpGet' ? { httpGet: { path: '/', port: 8080 } } : { exec: { command: ['true'] } }),
            periodSeconds: 10,
          },
        },
      ],
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The p-th percentile (nearest rank). */
export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};

/** The arithmetic mean (NaN for none). */
export const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

/** A fresh namespace whose default ServiceAccount exists (pods cannot be created before it). */
export async function benchNamespace(prefix: string): Promise<string> {
  const ns = `${prefix}-${Date.now().toString(36)}`;
  const { core } = admin();
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
      admin().core.createNamespacedPod({
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

/**
 * Calls back with every pod of the namespace as the apiserver's watch sees it change, until the
 * returned controller aborts. A watch that ends is resumed from a fresh list (whose pods are called
 * back too), as an informer does. The client's Watch gives up after 30 s without an event (a fixed,
 * private timeout), and a slow start of 100 pods has such gaps: twice on 2026-11-27 the bench then
 * saw no pod Running. That end went unsaid because the client aborts its own controller before it
 * calls `done`, which the old check for "aborted by us" read as the bench's own stop.
 */
export async function watchPods(ns: string, onPod: (pod: V1Pod) => void): Promise<AbortController> {
  const stop = new AbortController();
  const path = `/api/v1/namespaces/${ns}/pods`;
  const watch = new Watch(admin().kc);
  let current: AbortController | undefined;
  const start = async (resourceVersion?: string): Promise<void> => {
    if (stop.signal.aborted) return;
    current = await watch.watch(
      path,
      { resourceVersion, allowWatchBookmarks: true },
      (type: string, pod: V1Pod) => {
        if (type !== 'BOOKMARK' && type !== 'ERROR') onPod(pod);
      },
      (err: unknown) => {
        if (stop.signal.aborted) return;
        // The 30 s without an event is the client's doing and expected (the steady minute has no event).
        if ((err as Error | null)?.name !== 'TimeoutError')
          console.error(`bench: the watch of pods in ${ns} ended${err ? `: ${(err as Error).message}` : ''}; listing and watching again`);
        void resume();
      },
    );
  };
  const resume = async (): Promise<void> => {
    for (let attempt = 0; !stop.signal.aborted; attempt++) {
      try {
        const list = await admin().core.listNamespacedPod({ namespace: ns });
        for (const pod of list.items) onPod(pod);
        return await start(list.metadata?.resourceVersion);
      } catch (e) {
        console.error(`bench: listing pods in ${ns} failed: ${(e as Error).message}`);
        await sleep(Math.min(5000, 200 * 2 ** attempt));
      }
    }
  };
  stop.signal.addEventListener('abort', () => current?.abort());
  await start();
  return stop;
}

/** Resolves once n pods of the namespace are Running, or fails after timeoutMs. */
export async function waitRunning(ns: string, n: number, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const running = (await admin().core.listNamespacedPod({ namespace: ns })).items.filter((p) => p.status?.phase === 'Running').length;
    if (running >= n) return;
    if (Date.now() > deadline) throw new Error(`only ${running}/${n} pods Running after ${timeoutMs / 1000} s`);
    await sleep(500);
  }
}

/**
 * Waits until the machine is quiet: a 3 s window in which all processes together used less than
 * `cores` of CPU. What the last run left behind (the other kubelet's sandbox teardown after its
 * pods were deleted, their network namespaces, GC) otherwise lands in the next run's figures.
 * Gives up after `timeoutMs` and says so: a loaded machine is then part of the figures.
 */
export async function quietMachine(cores = 0.3, timeoutMs = 180_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const t0 = Date.now(),
      b0 = machineBusySeconds();
    await sleep(3000);
    const busy = (machineBusySeconds() - b0) / ((Date.now() - t0) / 1000);
    if (busy < cores) return;
    if (Date.now() > end) {
      console.error(`bench: the machine is still busy (${busy.toFixed(2)} cores) after ${timeoutMs / 1000} s; measuring anyway`);
      return;
    }
  }
}
