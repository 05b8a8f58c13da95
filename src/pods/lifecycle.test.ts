import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { nextStep, afterStep, activeDeadlineLeft, type PodState, type Step } from './lifecycle.ts';

const pod = (meta: Pod['metadata'] = {}, grace?: number): Pod => ({
  metadata: { uid: 'u', ...meta },
  spec: { containers: [], terminationGracePeriodSeconds: grace },
});
const deleted = pod({ deletionTimestamp: '2026-11-22T12:00:00Z', deletionGracePeriodSeconds: 7 }, 30);

const cases: [string, PodState, Pod | undefined, string | undefined, Step, PodState][] = [
  ['a live pod is synced', 'syncing', pod(), 'Running', { do: 'sync' }, 'syncing'],
  [
    'deletion terminates with the deletion grace period',
    'syncing',
    deleted,
    'Running',
    { do: 'terminate', gracePeriodSeconds: 7, reason: 'deleted' },
    'terminated',
  ],
  [
    'a pod gone from the apiserver is killed at once',
    'syncing',
    undefined,
    'Running',
    { do: 'terminate', gracePeriodSeconds: 0, reason: 'removed from the apiserver' },
    'terminated',
  ],
  [
    'a finished pod is terminated with its own grace period',
    'syncing',
    pod({}, 5),
    'Succeeded',
    { do: 'terminate', gracePeriodSeconds: 5, reason: 'phase Succeeded' },
    'terminated',
  ],
  ['a terminated pod waits for deletion', 'terminated', pod(), 'Failed', { do: 'nothing' }, 'terminated'],
  [
    'a deleted terminated pod is finished and deleted',
    'terminated',
    deleted,
    'Failed',
    { do: 'finish', deleteFromApiserver: true },
    'finished',
  ],
  [
    'a vanished terminated pod is finished without a delete',
    'terminated',
    undefined,
    'Failed',
    { do: 'finish', deleteFromApiserver: false },
    'finished',
  ],
  ['finished stays finished', 'finished', deleted, 'Failed', { do: 'nothing' }, 'finished'],
];

test('pod lifecycle: a static pod waits while an older one with its full name runs, unless deleted', () => {
  assert.deepEqual(nextStep('syncing', pod(), undefined, true), { do: 'nothing' });
  assert.equal(nextStep('syncing', deleted, undefined, true).do, 'terminate');
});

for (const [name, state, p, phase, step, after] of cases) {
  test(`pod lifecycle: ${name}`, () => {
    const got = nextStep(state, p, phase);
    assert.deepEqual(got, step);
    assert.equal(afterStep(state, got), after);
  });
}

test('activeDeadlineSeconds counts from the start time', () => {
  const p: Pod = { spec: { containers: [], activeDeadlineSeconds: 10 } };
  const now = new Date('2026-11-22T12:00:08Z');
  assert.equal(activeDeadlineLeft(p, '2026-11-22T12:00:00Z', now), 2000);
  assert.equal(activeDeadlineLeft(p, '2026-11-22T11:59:00Z', now), -58000);
  assert.equal(activeDeadlineLeft(p, undefined, now), undefined, 'not started yet');
  assert.equal(activeDeadlineLeft(pod(), '2026-11-22T12:00:00Z', now), undefined, 'no deadline');
});

test('a kill request terminates a syncing pod with its own grace period, whatever the phase', () => {
  const kill = { gracePeriodSeconds: 1, reason: 'Evicted', message: 'm' };
  assert.deepEqual(nextStep('syncing', pod(), 'Running', false, kill), { do: 'terminate', gracePeriodSeconds: 1, reason: 'Evicted', kill });
  assert.deepEqual(nextStep('terminated', pod(), 'Failed', false, kill), { do: 'nothing' });
  // Deleted meanwhile: the shorter grace period of the two (upstream's calculateEffectiveGracePeriod).
  const slow = { ...kill, gracePeriodSeconds: 30 };
  assert.equal((nextStep('syncing', deleted, 'Running', false, slow) as { gracePeriodSeconds: number }).gracePeriodSeconds, 7);
  assert.equal((nextStep('syncing', deleted, 'Running', false, kill) as { gracePeriodSeconds: number }).gracePeriodSeconds, 1);
});

test('a static pod whose file went is stopped within its own grace period; an apiserver pod gone, at once', () => {
  const staticPod = pod({ annotations: { 'kubernetes.io/config.source': 'file' } }, 20);
  assert.deepEqual(nextStep('syncing', undefined, 'Running', false, undefined, staticPod), {
    do: 'terminate',
    gracePeriodSeconds: 20,
    reason: 'removed from its source',
  });
  assert.equal(
    (nextStep('syncing', undefined, 'Running', false, undefined, pod({}, 20)) as { gracePeriodSeconds: number }).gracePeriodSeconds,
    0,
  );
});
