// The workload the chaos run keeps churning: pods of several kinds created and deleted at
// random, each labelled with its kind, which says what it may do by itself (invariants.ts).
import { rmSync, writeFileSync } from 'node:fs';
import type { V1PodSpec } from '@kubernetes/client-node';
import { BUSYBOX, clients } from '../e2e/stack.ts';

export const STATIC_POD_PATH = '/etc/kubernetes/manifests';

const sleeper = (extra: object = {}) => ({ name: 'main', image: BUSYBOX, command: ['sh', '-c', 'sleep 1000000'], ...extra });

/** The kinds, and the spec of each. */
export const KINDS: Record<string, () => V1PodSpec> = {
  // Never exits; a readiness probe runs every 5 s.
  steady: () => ({
    containers: [sleeper({ readinessProbe: { exec: { command: ['true'] }, periodSeconds: 5 } })],
  }),
  // Exits 1 at once, restarted in back-off.
  crashloop: () => ({ containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', 'sleep 1; exit 1'] }] }),
  // Its liveness probe always fails: the kubelet restarts it, with a reason.
  'failing-probe': () => ({
    containers: [sleeper({ livenessProbe: { exec: { command: ['false'] }, periodSeconds: 3, failureThreshold: 2 } })],
    terminationGracePeriodSeconds: 2,
  }),
  init: () => ({
    initContainers: [
      {
        name: 'init',
        image: BUSYBOX,
        command: ['sh', '-c', 'echo ready > /work/ready'],
        volumeMounts: [{ name: 'w', mountPath: '/work' }],
      },
    ],
    containers: [sleeper({ volumeMounts: [{ name: 'w', mountPath: '/work' }] })],
    volumes: [{ name: 'w', emptyDir: {} }],
  }),
  volumes: () => ({
    containers: [
      sleeper({
        volumeMounts: ['scratch', 'mem', 'config', 'secret', 'projected'].map((name) => ({ name, mountPath: `/v/${name}` })),
      }),
    ],
    volumes: [
      { name: 'scratch', emptyDir: {} },
      { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '8Mi' } },
      { name: 'config', configMap: { name: 'chaos' } },
      { name: 'secret', secret: { secretName: 'chaos' } },
      {
        name: 'projected',
        projected: {
          sources: [
            { serviceAccountToken: { path: 'token', expirationSeconds: 3600 } },
            { downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
          ],
        },
      },
    ],
  }),
  // Takes 3 s to stop after SIGTERM: a delete in flight when the kubelet dies.
  graceful: () => ({
    containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', "trap 'sleep 3; exit 0' TERM; sleep 1000000 & wait"] }],
    terminationGracePeriodSeconds: 10,
  }),
  // Runs once to completion.
  once: () => ({ restartPolicy: 'Never', containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', 'sleep 5'] }] }),
};

/** The objects the volumes kind mounts. */
export async function prepare(ns: string): Promise<void> {
  const { core } = clients();
  await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'chaos' }, data: { key: 'value' } } });
  await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'chaos' }, stringData: { key: 'value' } } });
}

export interface Churn {
  /** Creates one pod of the kind (random when not given); resolves with its name. */
  create(kind?: string): Promise<string>;
  /** Deletes one of the pods it made, of the kind when given; resolves with its name. */
  remove(kind?: string): Promise<string | undefined>;
  /** One random step: create below the target population, else delete or create. */
  step(): Promise<string>;
  /** Removes what is left, static pod files included. */
  cleanup(): Promise<void>;
}

const pick = <T>(xs: T[], rnd: () => number): T => xs[Math.floor(rnd() * xs.length)]!;

export function churn(ns: string, nodeName: string, target: number, rnd: () => number): Churn {
  const { core } = clients();
  const live = new Map<string, string>(); // name -> kind
  const statics = new Set<string>();
  let n = 0;
  const kinds = [...Object.keys(KINDS), 'static'];
  const self: Churn = {
    async create(kind = pick(kinds, rnd)) {
      const name = `${kind}-${n++}`;
      const labels = { 'chaos.kts/kind': kind };
      if (kind === 'static') {
        // A static pod file, in the namespace of the run: its mirror pod shows up there.
        const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels }, spec: KINDS.steady!() };
        writeFileSync(`${STATIC_POD_PATH}/chaos-${ns}-${name}.json`, JSON.stringify(pod));
        statics.add(name);
      } else {
        const spec = { nodeName, terminationGracePeriodSeconds: 5, ...KINDS[kind]!() };
        await core.createNamespacedPod({ namespace: ns, body: { metadata: { name, labels }, spec } });
      }
      live.set(name, kind);
      return `created ${name}`;
    },
    async remove(kind) {
      const names = [...live].filter(([, k]) => !kind || k === kind).map(([name]) => name);
      if (!names.length) return undefined;
      const name = pick(names, rnd);
      live.delete(name);
      if (statics.delete(name)) rmSync(`${STATIC_POD_PATH}/chaos-${ns}-${name}.json`, { force: true });
      else await core.deleteNamespacedPod({ name, namespace: ns }).catch(() => {});
      return name;
    },
    async step() {
      if (live.size < target / 2 || (live.size < target && rnd() < 0.6)) return self.create();
      return `deleted ${await self.remove()}`;
    },
    async cleanup() {
      for (const name of statics) rmSync(`${STATIC_POD_PATH}/chaos-${ns}-${name}.json`, { force: true });
      statics.clear();
      await core.deleteCollectionNamespacedPod({ namespace: ns }).catch(() => {});
      live.clear();
    },
  };
  return self;
}
