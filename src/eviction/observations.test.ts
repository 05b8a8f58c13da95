import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Summary } from '../stats/summary-types.ts';
import { makeObservations } from './observations.ts';

const T = '2026-01-02T03:04:05Z',
  MS = Date.parse(T);
const Gi = 2 ** 30;

const summary = (node: Partial<Summary['node']> = {}): Summary => ({ node: { nodeName: 'vm', startTime: T, ...node }, pods: [] });

test('every signal from a full Summary', () => {
  const got = makeObservations(
    summary({
      memory: { time: T, availableBytes: 3 * Gi, workingSetBytes: 5 * Gi },
      systemContainers: [
        { name: 'kubelet', startTime: T, memory: { time: T, availableBytes: 1, workingSetBytes: 1 } },
        { name: 'pods', startTime: T, memory: { time: T, availableBytes: 2 * Gi, workingSetBytes: 4 * Gi } },
      ],
      fs: { time: T, availableBytes: 40 * Gi, capacityBytes: 100 * Gi, inodesFree: 900, inodes: 1000 },
      runtime: {
        imageFs: { time: T, availableBytes: 10 * Gi, capacityBytes: 50 * Gi, inodesFree: 80, inodes: 100 },
        containerFs: { time: T, availableBytes: 20 * Gi, capacityBytes: 60 * Gi, inodesFree: 70, inodes: 90 },
      },
      rlimit: { time: T, maxpid: 4_194_304, curproc: 300 },
    }),
  );
  assert.deepEqual(got, {
    'memory.available': { available: 3 * Gi, capacity: 8 * Gi, timeMs: MS },
    'allocatableMemory.available': { available: 2 * Gi, capacity: 6 * Gi, timeMs: MS },
    'nodefs.available': { available: 40 * Gi, capacity: 100 * Gi, timeMs: MS },
    'nodefs.inodesFree': { available: 900, capacity: 1000, timeMs: MS },
    'imagefs.available': { available: 10 * Gi, capacity: 50 * Gi, timeMs: MS },
    'imagefs.inodesFree': { available: 80, capacity: 100, timeMs: MS },
    'containerfs.available': { available: 20 * Gi, capacity: 60 * Gi, timeMs: MS },
    'containerfs.inodesFree': { available: 70, capacity: 90, timeMs: MS },
    'pid.available': { available: 4_194_004, capacity: 4_194_304, timeMs: MS },
  });
});

test('missing figures: signals absent, containerfs from nodefs, node facts filling in', () => {
  const sparse = summary({
    memory: { time: T, workingSetBytes: 5 * Gi },
    systemContainers: [{ name: 'pods', startTime: T, memory: { time: T, workingSetBytes: 1 * Gi } }],
    fs: { time: T, availableBytes: 40 * Gi, capacityBytes: 100 * Gi },
    rlimit: { time: T, curproc: 300 },
  });
  assert.deepEqual(makeObservations(sparse), {
    'nodefs.available': { available: 40 * Gi, capacity: 100 * Gi, timeMs: MS },
    'containerfs.available': { available: 40 * Gi, capacity: 100 * Gi, timeMs: MS },
  });
  const filled = makeObservations(sparse, { memoryCapacityBytes: 8 * Gi, allocatableMemoryBytes: 6 * Gi, pidMax: 1000 });
  assert.deepEqual(filled['memory.available'], { available: 3 * Gi, capacity: 8 * Gi, timeMs: MS });
  assert.deepEqual(filled['allocatableMemory.available'], { available: 5 * Gi, capacity: 6 * Gi, timeMs: MS });
  assert.deepEqual(filled['pid.available'], { available: 700, capacity: 1000, timeMs: MS });
  // Over the limit, available is zero, not negative.
  const over = makeObservations(summary({ memory: { time: T, workingSetBytes: 9 * Gi } }), { memoryCapacityBytes: 8 * Gi });
  assert.deepEqual(over['memory.available'], { available: 0, capacity: 9 * Gi, timeMs: MS });
});

test('no pods system container, no allocatable signal; a Summary with nothing, no observations', () => {
  const got = makeObservations(
    summary({ memory: { time: T, availableBytes: 1, workingSetBytes: 1 }, systemContainers: [{ name: 'kubelet', startTime: T }] }),
  );
  assert.deepEqual(Object.keys(got), ['memory.available']);
  assert.deepEqual(makeObservations(summary()), {});
});
