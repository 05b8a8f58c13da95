import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerInfo, SandboxInfo } from '../stats/runtime-source.ts';
import { runningPods } from './running-pods.ts';

const sb = (id: string, uid: string, name: string, ready: boolean): SandboxInfo => ({
  id,
  uid,
  name,
  namespace: 'ns',
  ready,
  createdAtMs: 0,
});
const c = (id: string, uid: string, podName: string, name: string, running: boolean): ContainerInfo => ({
  id,
  sandboxId: `s-${uid}`,
  podUid: uid,
  podName,
  podNamespace: 'ns',
  name,
  image: `img-${name}`,
  imageRef: 'sha256:img',
  labels: {},
  running,
  createdAtMs: 0,
});

test('runningPods: pods with a ready sandbox or a running container, minimal as upstream', () => {
  const pods = runningPods(
    [sb('s-u1', 'u1', 'web', true), sb('s-u2', 'u2', 'done', false), sb('s-u3', 'u3', 'idle', true)],
    [
      c('1', 'u1', 'web', 'b', true),
      c('2', 'u1', 'web', 'a', true),
      c('3', 'u1', 'web', 'old', false),
      c('4', 'u2', 'done', 'job', false),
      c('5', 'u4', 'orphan', 'x', true),
    ],
  );
  assert.deepEqual(pods, [
    { metadata: { name: 'idle', namespace: 'ns', uid: 'u3' }, spec: { containers: [] } },
    { metadata: { name: 'orphan', namespace: 'ns', uid: 'u4' }, spec: { containers: [{ name: 'x', image: 'img-x' }] } },
    {
      metadata: { name: 'web', namespace: 'ns', uid: 'u1' },
      spec: {
        containers: [
          { name: 'a', image: 'img-a' },
          { name: 'b', image: 'img-b' },
        ],
      },
    },
  ]);
  assert.deepEqual(runningPods([], []), []);
});
