// PodSyncer with the environment: what reaches CreateContainer, and what a container that
// cannot be configured shows. CRI, images and the apiserver are fakes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { ImagePuller } from '../images/puller.ts';
import type { Logger } from '../log/log.ts';
import { PodResizer } from '../resize/pod-resizer.ts';
import type { EnvSource } from './env-sources.ts';
import type { PodRuntime } from './pod-runtime.ts';
import { PodSyncer } from './sync.ts';
import type { PodRuntimeStatus } from './types.ts';

function syncer(configMaps: Record<string, Record<string, string>>) {
  const created: { envs?: { key?: string; value?: unknown }[]; command?: string[]; args?: string[] }[] = [];
  const events: string[] = [];
  let reads = 0;
  const status: PodRuntimeStatus = {
    uid: 'u1',
    sandboxes: [{ id: 'sb1', attempt: 0, ready: true, ip: '10.88.0.7', createdAtNs: '1' }],
    containers: [],
  };
  const cri = {
    createContainer: async (r: { config: (typeof created)[number] }) => {
      created.push(r.config);
      return { containerId: 'c1' };
    },
    startContainer: async () => ({}),
  } as unknown as PodRuntime;
  const env: EnvSource = {
    session: () => async () => {
      reads++;
      return {
        configMaps: new Map(
          Object.entries({ cfg: undefined, ...configMaps }).map(([n, data]) => [
            n,
            data ? { found: { data } } : { notFound: true as const },
          ]),
        ),
        secrets: new Map(),
        services: [{ metadata: { name: 'kubernetes', namespace: 'default' }, spec: { clusterIP: '10.96.0.1', ports: [{ port: 443 }] } }],
        allocatable: { memory: '1Gi' },
      };
    },
  };
  const noop = () => {};
  const log = { info: noop, warn: noop, error: noop, v: noop } as unknown as Logger;
  const recorder = {
    event: (_o: unknown, type: string, reason: string, message: string) => {
      events.push(`${type} ${reason}: ${message}`);
    },
  };
  const s = new PodSyncer({
    runtime: cri,
    view: { pod: async () => status },
    images: { ensure: async () => ({}) } as unknown as ImagePuller,
    events: recorder,
    log,
    node: {
      podLogsDir: '/tmp',
      clusterDomain: 'cluster.local',
      clusterDNS: [],
      hostDNS: { servers: [], searches: [], options: [] },
      nodeIP: '172.30.0.2',
    },
    env,
    resizer: new PodResizer({
      cri: {
        updateContainerResources: async () => {
          throw new Error('no resize here');
        },
      },
      view: { noteResources: () => {} },
      events: recorder,
      log,
    }),
  });
  return { s, created, events, reads: () => reads };
}

const pod: Pod = {
  metadata: { name: 'web', namespace: 'shop', uid: 'u1' },
  spec: {
    nodeName: 'n1',
    containers: [
      {
        name: 'main',
        image: 'busybox',
        command: ['echo', '$(COLOR)', '$(POD_IP)'],
        env: [
          { name: 'COLOR', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'color' } } },
          { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
        ],
      },
    ],
  },
};

test('a missing ConfigMap: CreateContainerConfigError, a Failed event, no container, a retry in 10 s', async () => {
  const { s, created, events } = syncer({});
  const r = await s.syncPod(pod);
  assert.deepEqual(r.waiting.get('main'), { reason: 'CreateContainerConfigError', message: 'configmap "cfg" not found' });
  assert.deepEqual(events, ['Warning Failed: Error: configmap "cfg" not found']);
  assert.equal(created.length, 0);
  assert.equal(r.requeueAfterMs, 10_000);
});

test('the resolved environment and expanded command reach CreateContainer', async () => {
  const { s, created, events, reads } = syncer({ cfg: { color: 'red' } });
  const r = await s.syncPod(pod);
  assert.equal(r.waiting.size, 0);
  assert.equal(created.length, 1);
  const env = Object.fromEntries(created[0]!.envs!.map((e) => [e.key, String(e.value)]));
  assert.deepEqual([env.COLOR, env.POD_IP, env.HOST_IP, env.KUBERNETES_SERVICE_HOST], ['red', '10.88.0.7', '172.30.0.2', '10.96.0.1']);
  assert.deepEqual(created[0]!.command, ['echo', 'red', '10.88.0.7']);
  assert.ok(events.includes('Normal Started: Started container main'));
  assert.equal(reads(), 1);
});
