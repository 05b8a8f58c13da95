// PodSyncer with the environment: what reaches CreateContainer, and what a container that
// cannot be configured shows. CRI, images and the apiserver are fakes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { RuntimeRequest } from '../cri/runtime-client.ts';
import type { EnvSource } from './env-sources.ts';
import { fakeSyncer } from './testing.ts';

type CreateRequest = RuntimeRequest<'CreateContainer'>;

// The shared in-memory runtime (testing.ts) with a ready sandbox for u1 (IP 10.88.0.7), over an
// apiserver that holds these ConfigMaps ("cfg" not found unless given), the kubernetes Service and the allocatable.
function syncer(configMaps: Record<string, Record<string, string>>) {
  let reads = 0;
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
  const h = fakeSyncer({ env });
  h.runtime.addSandbox('u1', { id: 'sb1' });
  const created = () => h.runtime.calls.filter((c) => c.method === 'CreateContainer').map((c) => (c.request as CreateRequest).config!);
  return { s: h.syncer, created, events: h.events, reads: () => reads };
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
  assert.equal(created().length, 0);
  assert.equal(r.requeueAfterMs, 10_000);
});

test('the resolved environment and expanded command reach CreateContainer', async () => {
  const { s, created, events, reads } = syncer({ cfg: { color: 'red' } });
  const r = await s.syncPod(pod);
  assert.equal(r.waiting.size, 0);
  assert.equal(created().length, 1);
  const env = Object.fromEntries(created()[0]!.envs!.map((e) => [e.key, String(e.value)]));
  assert.deepEqual([env.COLOR, env.POD_IP, env.HOST_IP, env.KUBERNETES_SERVICE_HOST], ['red', '10.88.0.7', '172.30.0.2', '10.96.0.1']);
  assert.deepEqual(created()[0]!.command, ['echo', 'red', '10.88.0.7']);
  assert.ok(events.includes('Normal Started: Container started'));
  assert.equal(reads(), 1);
});
