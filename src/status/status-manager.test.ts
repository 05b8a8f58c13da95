import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newlyTerminated, withObservedGeneration, withRemovals } from './status-manager.ts';

test('withRemovals: resize conditions an earlier status had and this one does not carry are deleted by the patch', () => {
  const ready = { type: 'Ready', status: 'True' };
  const pending = { type: 'PodResizePending', status: 'True', reason: 'Deferred' };
  const inProgress = { type: 'PodResizeInProgress', status: 'True' };
  assert.deepEqual(withRemovals({ conditions: [ready] }, [{ conditions: [ready, pending, inProgress] }]).conditions, [
    ready,
    { type: 'PodResizePending', $patch: 'delete' },
    { type: 'PodResizeInProgress', $patch: 'delete' },
  ]);
  assert.deepEqual(withRemovals({ conditions: [ready, pending] }, [undefined, { conditions: [inProgress] }]).conditions, [
    ready,
    pending,
    { type: 'PodResizeInProgress', $patch: 'delete' },
  ]);
  assert.deepEqual(
    withRemovals({ conditions: [ready] }, [{ conditions: [ready] }, undefined]).conditions,
    [ready],
    'never set: nothing to delete',
  );
  assert.deepEqual(withRemovals({ phase: 'Failed' }, [{ conditions: [pending] }]), { phase: 'Failed' }, 'no conditions: nothing to merge');
});

test('newlyTerminated: containers of each kind that went to terminated, once', () => {
  const running = { name: 'app', ready: true, restartCount: 0, image: '', imageID: '', state: { running: { startedAt: 't' } } };
  const done = (name: string, exitCode: number, reason: string) => ({
    name,
    ready: false,
    restartCount: 0,
    image: '',
    imageID: '',
    state: { terminated: { exitCode, reason } },
  });
  assert.deepEqual(
    newlyTerminated(
      { containerStatuses: [running] },
      {
        containerStatuses: [done('app', 137, 'OOMKilled')],
        initContainerStatuses: [done('init', 0, 'Completed')],
      },
    ),
    [
      { type: 'container', exitCode: 137, reason: 'OOMKilled' },
      { type: 'init_container', exitCode: 0, reason: 'Completed' },
    ],
  );
  const after = { containerStatuses: [done('app', 137, 'OOMKilled')] };
  assert.deepEqual(newlyTerminated(after, after), []);
  assert.deepEqual(newlyTerminated(undefined, { ephemeralContainerStatuses: [done('debug', 1, 'Error')] }), [
    { type: 'ephemeral_container', exitCode: 1, reason: 'Error' },
  ]);
});

test('withRemovals: the IP of a replaced sandbox is deleted from podIPs (the apiserver refuses two)', () => {
  assert.deepEqual(
    withRemovals({ podIP: '10.88.0.14', podIPs: [{ ip: '10.88.0.14' }] }, [{ podIPs: [{ ip: '10.88.0.13' }] }, undefined]).podIPs,
    [{ ip: '10.88.0.14' }, { ip: '10.88.0.13', $patch: 'delete' }],
  );
  assert.deepEqual(withRemovals({ podIPs: [{ ip: '10.88.0.14' }] }, [{ podIPs: [{ ip: '10.88.0.14' }] }]).podIPs, [{ ip: '10.88.0.14' }]);
  assert.equal(withRemovals({ phase: 'Pending' }, [{ podIPs: [{ ip: '10.88.0.13' }] }]).podIPs, undefined, 'no IP now: nothing to replace');
});

test("withObservedGeneration: the pod's generation on any status set (a rejection has none of its own)", () => {
  const rejected = { phase: 'Failed', reason: 'OutOfcpu' };
  assert.deepEqual(withObservedGeneration({ metadata: { generation: 1 } }, rejected), { ...rejected, observedGeneration: 1 });
  assert.deepEqual(withObservedGeneration({ metadata: {} }, rejected), rejected, 'a static pod has no generation');
});
