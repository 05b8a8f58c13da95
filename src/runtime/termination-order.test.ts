import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { terminationPrereqs } from './termination-order.ts';

test('termination order as upstream newTerminationOrdering: sidecars wait for the apps and the sidecars started after them', () => {
  const always = 'Always' as const;
  const pod: Pod = {
    spec: {
      initContainers: [
        { name: 's1', restartPolicy: always },
        { name: 'init' },
        { name: 's2', restartPolicy: always },
        { name: 's3', restartPolicy: always },
      ],
      containers: [{ name: 'a' }, { name: 'b' }],
    },
  };
  assert.deepEqual(
    [...terminationPrereqs(pod)],
    [
      ['a', []],
      ['b', []],
      ['s3', ['a', 'b']],
      ['s2', ['a', 'b', 's3']],
      ['s1', ['a', 'b', 's2']],
    ],
  );
});
