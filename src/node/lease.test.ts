import { test } from 'node:test';
import assert from 'node:assert/strict';
import { desiredLease } from './lease.ts';
import { microTime } from '../apiserver/time.ts';

test('the lease: holder, duration, renew time in MicroTime, owner, existing version kept', () => {
  const now = new Date('2026-11-22T12:00:00.123Z');
  assert.equal(microTime(now), '2026-11-22T12:00:00.123000Z');
  const fresh = desiredLease('vm', 'node-uid', 40, now);
  assert.deepEqual(fresh.spec, { holderIdentity: 'vm', leaseDurationSeconds: 40, renewTime: '2026-11-22T12:00:00.123000Z' });
  assert.deepEqual(fresh.metadata!.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'vm', uid: 'node-uid' }]);
  const renewed = desiredLease('vm', undefined, 40, now, {
    metadata: { name: 'vm', resourceVersion: '7', ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'vm', uid: 'old' }] },
    spec: { leaseTransitions: 1 },
  });
  assert.equal(renewed.metadata!.resourceVersion, '7', 'update is conditional on the version read');
  assert.equal(renewed.metadata!.ownerReferences![0]!.uid, 'old');
  assert.equal(renewed.spec!.leaseTransitions, 1);
});
