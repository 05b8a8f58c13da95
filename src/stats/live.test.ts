import { test } from 'node:test';
import assert from 'node:assert/strict';
import { liveContainers, liveSandboxes } from './live.ts';
import type { ContainerInfo, SandboxInfo } from './runtime-source.ts';

const sb = (id: string, uid: string, ready: boolean, createdAtMs: number): SandboxInfo => ({
  id,
  uid,
  name: `p-${uid}`,
  namespace: 'ns',
  ready,
  createdAtMs,
});

test('liveSandboxes: ready sandboxes, else the newest of a pod', () => {
  const cases: [name: string, in_: SandboxInfo[], ids: string[]][] = [
    ['one sandbox, whatever its state', [sb('a', 'u1', false, 1)], ['a']],
    ['the ready one of a recreated pod', [sb('old', 'u1', false, 1), sb('new', 'u1', true, 2)], ['new']],
    ['none ready: the newest', [sb('new', 'u1', false, 2), sb('old', 'u1', false, 1)], ['new']],
    ['pods apart', [sb('a', 'u1', true, 1), sb('b', 'u2', true, 1)], ['a', 'b']],
  ];
  for (const [name, in_, ids] of cases)
    assert.deepEqual(
      liveSandboxes(in_)
        .map((s) => s.id)
        .sort(),
      ids.sort(),
      name,
    );
});

test('liveContainers: only running containers use resources', () => {
  const c = (id: string, running: boolean): ContainerInfo => ({
    id,
    sandboxId: 's',
    podUid: 'u',
    podName: 'p',
    podNamespace: 'ns',
    name: 'c',
    image: 'i',
    imageRef: 'sha256:img',
    labels: {},
    running,
    createdAtMs: 0,
  });
  assert.deepEqual(
    liveContainers([c('exited', false), c('running', true)]).map((x) => x.id),
    ['running'],
  );
});
