import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { admitDuringShutdown, shutdownKill, shutdownStatus } from './status.ts';

test('a pod stopped for the shutdown: Failed/Terminated with DisruptionTarget, as upstream killPods', () => {
  const cases: [string, Pod, number, object][] = [
    [
      'no generation',
      { metadata: { name: 'a' } },
      10,
      {
        gracePeriodSeconds: 10,
        reason: 'Terminated',
        message: 'Pod was terminated in response to imminent node shutdown.',
        condition: {
          type: 'DisruptionTarget',
          status: 'True',
          reason: 'TerminationByKubelet',
          message: 'Pod was terminated in response to imminent node shutdown.',
        },
      },
    ],
    [
      'with a generation: observedGeneration',
      { metadata: { name: 'b', generation: 3 } },
      0,
      {
        gracePeriodSeconds: 0,
        reason: 'Terminated',
        message: 'Pod was terminated in response to imminent node shutdown.',
        condition: {
          type: 'DisruptionTarget',
          status: 'True',
          reason: 'TerminationByKubelet',
          message: 'Pod was terminated in response to imminent node shutdown.',
          observedGeneration: 3,
        },
      },
    ],
  ];
  for (const [name, pod, grace, want] of cases) assert.deepEqual(shutdownKill(pod, grace), want, name);
});

test('admission and the Ready condition while shutting down', () => {
  assert.deepEqual(admitDuringShutdown(false), { admit: true });
  assert.deepEqual(admitDuringShutdown(true), {
    admit: false,
    reason: 'NodeShutdown',
    message: 'Pod was rejected: Pod was rejected as the node is shutting down.',
  });
  assert.equal(shutdownStatus(false), undefined);
  assert.equal(shutdownStatus(true), 'node is shutting down');
});
