import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PodStatus } from 'kubernetes-types/core/v1.js';
import { type ResourceStatus, withResourceStatuses } from './allocated-resources.ts';

const cs = (name: string, allocatedResourcesStatus?: ResourceStatus[]) => ({
  name,
  image: 'i',
  imageID: '',
  ready: true,
  restartCount: 0,
  ...(allocatedResourcesStatus ? { allocatedResourcesStatus } : {}),
});
const dev = (name: string, health: 'Healthy' | 'Unhealthy' = 'Healthy'): ResourceStatus => ({
  name,
  resources: [{ resourceID: 'd', health }],
});

test('withResourceStatuses: entries replaced by name, others kept, empty ones dropped', () => {
  const status = { containerStatuses: [cs('a', [dev('example.com/gpu'), dev('claim:c')]), cs('b')] } as PodStatus;
  const cases: [string, (c: string) => ResourceStatus[], unknown][] = [
    ['no entries: the same status', () => [], status],
    [
      'the DRA entry of a replaced, the device plugin one kept',
      (c) => (c === 'a' ? [dev('claim:c', 'Unhealthy')] : []),
      { containerStatuses: [cs('a', [dev('example.com/gpu'), dev('claim:c', 'Unhealthy')]), cs('b')] },
    ],
    [
      'a new entry appended; b gets its first',
      (c) => [dev(c === 'a' ? 'claim:new' : 'example.com/nic')],
      {
        containerStatuses: [cs('a', [dev('example.com/gpu'), dev('claim:c'), dev('claim:new')]), cs('b', [dev('example.com/nic')])],
      },
    ],
    [
      'an entry without devices removes its name; none left: no field',
      () => [
        { name: 'example.com/gpu', resources: [] },
        { name: 'claim:c', resources: [] },
      ],
      { containerStatuses: [cs('a'), cs('b')] },
    ],
  ];
  for (const [name, entries, want] of cases) assert.deepEqual(withResourceStatuses(status, entries), want, name);
  assert.equal(
    withResourceStatuses(status, () => []),
    status,
  );
});
