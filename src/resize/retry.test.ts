import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { resizeIncreasing, retryOrder, type PendingResize } from './retry.ts';

/** A one-container pod asking cpu and memory (limits too: Guaranteed), allocated `was`. */
function pending(uid: string, o: { cpu: string; was: string; priority?: number; guaranteed?: boolean; since?: number }): PendingResize {
  const requests = { cpu: o.cpu, memory: '64Mi' };
  const pod: Pod = {
    metadata: { uid, name: uid },
    spec: { priority: o.priority, containers: [{ name: 'c', resources: { requests, ...(o.guaranteed ? { limits: requests } : {}) } }] },
  };
  const was = { cpu: o.was, memory: '64Mi' };
  return {
    uid,
    pod,
    allocated: { containers: { c: { requests: was, ...(o.guaranteed ? { limits: was } : {}) } } },
    deferredSinceMs: o.since,
  };
}

test('resizeIncreasing: more cpu or memory than allocated; less or the same is not', () => {
  assert.equal(resizeIncreasing(pending('a', { cpu: '2', was: '1' }).pod, pending('a', { cpu: '2', was: '1' }).allocated), true);
  const down = pending('b', { cpu: '500m', was: '1' });
  assert.equal(resizeIncreasing(down.pod, down.allocated), false);
});

const orders: [string, PendingResize[], string[]][] = [
  [
    'a resize asking no more goes before one asking more, whatever their priorities',
    [pending('up', { cpu: '2', was: '1', priority: 1000 }), pending('down', { cpu: '500m', was: '1' })],
    ['down', 'up'],
  ],
  [
    'then the higher priority',
    [pending('low', { cpu: '2', was: '1', priority: 10 }), pending('high', { cpu: '2', was: '1', priority: 100 })],
    ['high', 'low'],
  ],
  [
    'then Guaranteed before Burstable',
    [pending('burstable', { cpu: '2', was: '1' }), pending('guaranteed', { cpu: '2', was: '1', guaranteed: true })],
    ['guaranteed', 'burstable'],
  ],
  [
    'then the longest deferred; one not yet deferred last',
    [
      pending('new', { cpu: '2', was: '1' }),
      pending('later', { cpu: '2', was: '1', since: 2000 }),
      pending('first', { cpu: '2', was: '1', since: 1000 }),
    ],
    ['first', 'later', 'new'],
  ],
];
for (const [name, input, want] of orders) test(`retryOrder: ${name}`, () => assert.deepEqual(retryOrder(input), want));
