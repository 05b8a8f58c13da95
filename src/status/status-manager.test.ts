import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodCondition, PodStatus } from 'kubernetes-types/core/v1.js';
import type { ApiClient } from '../apiserver/client.ts';
import { sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import {
  StatusManager,
  newlyTerminated,
  resizeCounts,
  statusDiffers,
  statusTargetOf,
  withObservedGeneration,
  withRemovals,
} from './status-manager.ts';

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

test("withRemovals: a condition's reason or message that went is sent as null (a strategic merge keeps what the patch does not name)", () => {
  const notReady = {
    type: 'ContainersReady',
    status: 'False',
    reason: 'ContainersNotReady',
    message: 'containers with unready status: [main]',
  };
  const failed = { type: 'ContainersReady', status: 'False', reason: 'PodFailed' };
  const ready = { type: 'ContainersReady', status: 'True' };
  const cases: [string, PodCondition, (PodStatus | undefined)[], PodCondition][] = [
    ['the message went', failed, [{ conditions: [notReady] }, undefined], { ...failed, message: null } as unknown as PodCondition],
    ['both went', ready, [undefined, { conditions: [notReady] }], { ...ready, reason: null, message: null } as unknown as PodCondition],
    ['never had them', ready, [{ conditions: [ready] }], ready],
    ['another condition had them', ready, [{ conditions: [{ ...notReady, type: 'Ready' }] }], ready],
  ];
  for (const [name, c, earlier, want] of cases) assert.deepEqual(withRemovals({ conditions: [c] }, earlier).conditions, [want], name);
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

test('statusDiffers: what someone else changed in the apiserver, not its formatting', () => {
  const running = {
    name: 'app',
    ready: true,
    started: true,
    restartCount: 0,
    image: 'i',
    imageID: 'x',
    state: { running: { startedAt: 't' } },
  };
  const sent = {
    phase: 'Running',
    podIP: '10.88.0.4',
    conditions: [
      { type: 'Ready', status: 'True', lastTransitionTime: '2026-11-26T10:00:00.123Z' },
      { type: 'ContainersReady', status: 'True' },
    ],
    containerStatuses: [running],
  };
  const rows: [string, object | undefined, string[], PodStatus?][] = [
    ['the same status', sent, []],
    [
      'other timestamps, a readiness gate and the scheduler condition',
      {
        ...sent,
        conditions: [
          { type: 'Ready', status: 'True', lastTransitionTime: '2026-11-26T10:00:00Z' },
          { type: 'ContainersReady', status: 'True' },
          { type: 'example.com/gate', status: 'False' },
        ],
        containerStatuses: [{ ...running, state: { running: { startedAt: 'u' } } }],
      },
      [],
    ],
    [
      "the node lifecycle controller's Ready=False",
      {
        ...sent,
        conditions: [
          { type: 'Ready', status: 'False' },
          { type: 'ContainersReady', status: 'True' },
        ],
      },
      ['conditions[Ready]'],
    ],
    ['a kubelet condition gone', { ...sent, conditions: [{ type: 'Ready', status: 'True' }] }, ['conditions[ContainersReady]']],
    ['another phase', { ...sent, phase: 'Pending' }, ['phase']],
    ['another pod IP', { ...sent, podIP: '10.88.0.5' }, ['podIP']],
    ['a pod IP the kubelet no longer names (its sandbox stopped)', { ...sent, podIP: '10.88.0.5' }, [], { ...sent, podIP: undefined }],
    ['a container not ready', { ...sent, containerStatuses: [{ ...running, ready: false }] }, ['containerStatuses[app]']],
    ['another restart count', { ...sent, containerStatuses: [{ ...running, restartCount: 1 }] }, ['containerStatuses[app]']],
    [
      'another state',
      { ...sent, containerStatuses: [{ ...running, state: { waiting: { reason: 'CrashLoopBackOff' } } }] },
      ['containerStatuses[app]'],
    ],
    ['no status at all', undefined, ['phase', 'podIP', 'conditions[Ready]', 'conditions[ContainersReady]', 'containerStatuses[app]']],
  ];
  for (const [name, observed, want, ours = sent] of rows) assert.deepEqual(statusDiffers(observed, ours), want, name);
});

test('StatusManager: a status the apiserver lost is sent again on the next beat, one it kept is not', async () => {
  const patches: { status: PodStatus }[] = [];
  // The apiserver applies each patch (no transient conditions here: the patch is the status).
  const api = {
    patch: async (_path: string, body: { status: PodStatus }) => {
      patches.push(body);
      apiserver = { ...apiserver, status: body.status };
    },
  } as unknown as ApiClient;
  const noop = () => {};
  const log = { info: noop, warn: noop, error: noop, v: noop } as unknown as Logger;
  const ready: PodStatus = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
  // What the watch shows: the kubelet's status, until the node lifecycle controller marks it not ready.
  let apiserver: Pod = { metadata: { uid: 'u1', namespace: 'ns', name: 'p' }, status: ready };
  const m = new StatusManager(api, log, { target: () => apiserver });
  const beat = m.start(40);
  try {
    m.set(apiserver, ready);
    await m.flushed('u1');
    assert.equal(patches.length, 1);
    await sleep(150);
    assert.equal(patches.length, 1, 'the apiserver has what was sent: nothing more');
    apiserver = { ...apiserver, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] } };
    await sleep(150);
    assert.equal(patches.length, 2, 'Ready=False set by someone else: sent again, once');
    assert.deepEqual(patches[1]!.status.conditions, ready.conditions);
  } finally {
    beat.stop();
  }
});

test("statusTargetOf: a static pod's status goes to its mirror, any other pod's to the apiserver's copy last seen", () => {
  const pod = (uid: string, source?: string): Pod => ({
    metadata: { uid, name: uid, namespace: 'ns', annotations: source ? { 'kubernetes.io/config.source': source } : {} },
  });
  const mirror = pod('mirror-of-s', 'api');
  const seen = pod('p', 'api');
  const target = statusTargetOf({
    mirrorOf: (p) => (p.metadata!.uid === 's' ? mirror : undefined),
    latest: (uid) => (uid === 'p' ? seen : undefined),
  });
  for (const [name, given, want] of [
    ['a file pod with its mirror', pod('s', 'file'), mirror],
    ['an http pod with no mirror yet', pod('h', 'http'), undefined],
    ['an apiserver pod seen before', pod('p', 'api'), seen],
    ['an apiserver pod not seen: itself', pod('q', 'api'), 'self'],
  ] as const)
    assert.equal(target(given), want === 'self' ? given : want, name);
});

test("resizeCounts: upstream's pending (by reason, lowercased) and in-progress resize gauges over the pods' conditions", () => {
  const cond = (type: string, reason?: string) => ({ type, status: 'True', ...(reason ? { reason } : {}) });
  const cases: [string, PodStatus[], unknown][] = [
    ['none', [{}, { conditions: [cond('Ready')] }], { pending: {}, inProgress: 0 }],
    [
      'each pod counted by its conditions',
      [
        { conditions: [cond('Ready'), cond('PodResizePending', 'Deferred')] },
        { conditions: [cond('PodResizePending', 'Infeasible')] },
        { conditions: [cond('PodResizePending', 'Deferred'), cond('PodResizeInProgress')] },
        { conditions: [cond('PodResizeInProgress', 'Error')] },
      ],
      { pending: { deferred: 2, infeasible: 1 }, inProgress: 2 },
    ],
  ];
  for (const [name, statuses, want] of cases) assert.deepEqual(resizeCounts(statuses), want, name);
});
