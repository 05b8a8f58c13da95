import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerStatus } from 'kubernetes-types/core/v1.js';
import { allContainersRestartingCondition, type RuntimeSide, withPreviousStatus } from './restarted-status.ts';

const base = (over: Partial<ContainerStatus> = {}): ContainerStatus => ({
  name: 'c',
  image: 'busybox',
  imageID: '',
  ready: false,
  started: false,
  restartCount: 0,
  state: { waiting: { reason: 'ContainerCreating' } },
  lastState: {},
  ...over,
});
const exit42 = { exitCode: 42, reason: 'Error', containerID: 'containerd://old' };
const removed = {
  reason: 'RestartingAllContainers',
  message: 'The container is removed because RestartAllContainers in place',
  exitCode: 137,
};
const running = (over: Partial<ContainerStatus> = {}) =>
  base({ containerID: 'containerd://new', ready: true, started: true, state: { running: { startedAt: 't' } }, ...over });
const side = (over: Partial<RuntimeSide> = {}): RuntimeSide => ({
  present: false,
  previousInstance: false,
  attempt: 0,
  restarting: false,
  ...over,
});

// [name, from the runtime, the last status, runtime side, want]
const cases: [string, ContainerStatus, ContainerStatus | undefined, RuntimeSide, ContainerStatus][] = [
  ['no last status: as the runtime says', running(), undefined, side({ present: true }), running()],
  [
    'removed by RestartAllContainers: waiting, a restart, the removal its last termination',
    base(),
    base({ containerID: 'containerd://old', restartCount: 1, state: { terminated: exit42 } }),
    side({ restarting: true }),
    base({
      containerID: 'containerd://old',
      restartCount: 2,
      state: { waiting: { reason: 'RestartingAllContainers', message: removed.message } },
      lastState: { terminated: removed },
    }),
  ],
  [
    'removed while running: the same',
    base(),
    running({ restartCount: 0 }),
    side({ restarting: true }),
    base({
      restartCount: 1,
      state: { waiting: { reason: 'RestartingAllContainers', message: removed.message } },
      lastState: { terminated: removed },
    }),
  ],
  [
    'already waiting when removed: counted once only',
    base(),
    base({ restartCount: 1, lastState: { terminated: removed } }),
    side({ restarting: true }),
    base({ restartCount: 1, lastState: { terminated: removed } }),
  ],
  [
    'not yet started again: keeps its count and last termination',
    base({ state: { waiting: { reason: 'PodInitializing' } } }),
    base({ restartCount: 1, state: { waiting: { reason: 'RestartingAllContainers' } }, lastState: { terminated: removed } }),
    side(),
    base({ restartCount: 1, state: { waiting: { reason: 'PodInitializing' } }, lastState: { terminated: removed } }),
  ],
  [
    'gone and terminated before: stays as it was',
    base(),
    base({ restartCount: 3, state: { terminated: exit42 } }),
    side(),
    base({ restartCount: 3, state: { terminated: exit42 } }),
  ],
  [
    'gone and terminated, failing to start again: waiting with that termination last',
    base({ state: { waiting: { reason: 'ErrImagePull' } } }),
    base({ restartCount: 3, state: { terminated: exit42 } }),
    side({ waiting: { reason: 'ErrImagePull' } }),
    base({ restartCount: 3, state: { waiting: { reason: 'ErrImagePull' } }, lastState: { terminated: exit42 } }),
  ],
  [
    'running again after the removal: the count goes on, the last termination carried',
    running({ restartCount: 1 }),
    base({ restartCount: 1, lastState: { terminated: removed } }),
    side({ present: true, attempt: 1 }),
    running({ restartCount: 1, lastState: { terminated: removed } }),
  ],
  [
    'running with a runtime count behind a terminated last status: one more',
    running({ restartCount: 0 }),
    base({ containerID: 'containerd://old', restartCount: 2, state: { terminated: exit42 } }),
    side({ present: true, attempt: 0 }),
    running({ restartCount: 3, lastState: { terminated: exit42 } }),
  ],
  [
    'an ordinary restart: the runtime knows its older instance',
    running({ restartCount: 1, lastState: { terminated: { exitCode: 1 } } }),
    base({ containerID: 'containerd://old', restartCount: 0, state: { terminated: { exitCode: 1 } } }),
    side({ present: true, previousInstance: true, attempt: 1 }),
    running({ restartCount: 1, lastState: { terminated: { exitCode: 1 } } }),
  ],
  [
    'the same instance: nothing changes',
    running({ restartCount: 2, containerID: 'containerd://x' }),
    running({ restartCount: 2, containerID: 'containerd://x' }),
    side({ present: true, previousInstance: true, attempt: 2 }),
    running({ restartCount: 2, containerID: 'containerd://x' }),
  ],
];
for (const [name, st, old, rt, want] of cases)
  test(`withPreviousStatus: ${name}`, () => assert.deepEqual(withPreviousStatus(st, old, rt), want));

test('allContainersRestartingCondition: True from the trigger until cleaned up; False on a terminal phase', () => {
  assert.deepEqual(allContainersRestartingCondition('Running', true, false), {
    status: 'True',
    reason: 'RestartAllContainersStarted',
    message: 'container exited with restart policy rule',
  });
  assert.deepEqual(allContainersRestartingCondition('Running', true, true), { status: 'False' });
  assert.deepEqual(allContainersRestartingCondition('Running', false, false), { status: 'False' });
  assert.deepEqual(allContainersRestartingCondition('Succeeded', true, false), { status: 'False', reason: 'PodCompleted' });
  assert.deepEqual(allContainersRestartingCondition('Failed', true, false), { status: 'False', reason: 'PodFailed' });
});
