import assert from 'node:assert/strict';
import { test } from 'node:test';
import { numaFacts } from './machine.ts';
import { hugepagesName } from './static-policy.ts';

test('numaFacts: MemTotal, hugepages pools, distances, per node in id order', () => {
  const f = numaFacts([
    {
      id: 1,
      meminfo: 'Node 1 MemTotal:       4194304 kB\nNode 1 MemFree: 1 kB\n',
      hugepages: [
        { dir: 'hugepages-2048kB', nrHugepages: '512\n' },
        { dir: 'hugepages-1048576kB', nrHugepages: '0\n' },
      ],
      distance: '21 10\n',
    },
    { id: 0, meminfo: 'Node 0 MemTotal:       22505208 kB\n', hugepages: [], distance: '10 21\n' },
  ]);
  assert.deepEqual(f.nodes, [
    { id: 0, memoryBytes: 22505208 * 1024, hugepages: [] },
    {
      id: 1,
      memoryBytes: 4 * 1024 ** 3,
      hugepages: [
        { pageSizeKiB: 2048, numPages: 512 },
        { pageSizeKiB: 1048576, numPages: 0 },
      ],
    },
  ]);
  assert.deepEqual(
    [...f.distances],
    [
      [0, [10, 21]],
      [1, [21, 10]],
    ],
  );
  assert.deepEqual([hugepagesName(2048), hugepagesName(1048576)], ['hugepages-2Mi', 'hugepages-1Gi']);
});
