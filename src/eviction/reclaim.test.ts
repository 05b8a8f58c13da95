import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nodeReclaimActions } from './reclaim.ts';
import type { Signal } from './types.ts';

test('node-level reclaim per signal and filesystem layout', () => {
  const one = { dedicatedImageFs: false, splitContainerImageFs: false };
  const image = { dedicatedImageFs: true, splitContainerImageFs: false };
  const split = { dedicatedImageFs: true, splitContainerImageFs: true };
  const cases: [Signal, typeof one, string[]][] = [
    ['memory.available', one, []],
    ['allocatableMemory.available', image, []],
    ['pid.available', one, []],
    ['nodefs.available', one, ['containers', 'images']],
    ['nodefs.inodesFree', one, ['containers', 'images']],
    ['imagefs.available', one, ['containers', 'images']],
    ['containerfs.inodesFree', one, ['containers', 'images']],
    ['nodefs.available', image, []],
    ['nodefs.inodesFree', image, []],
    ['imagefs.available', image, ['containers', 'images']],
    ['containerfs.available', image, ['containers', 'images']],
    ['imagefs.inodesFree', split, ['images']],
    ['nodefs.available', split, ['containers']],
    ['containerfs.available', split, ['containers']],
  ];
  for (const [signal, layout, want] of cases)
    assert.deepEqual(nodeReclaimActions(signal, layout), want, `${signal} ${JSON.stringify(layout)}`);
});
