import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryCgroups } from './host.ts';

test('memoryCgroups: a cgroup exists from ensure to remove, its children go with it', async () => {
  const m = memoryCgroups();
  const rows: [string, () => Promise<unknown> | unknown, Record<string, unknown>][] = [
    ['nothing yet', () => {}, { '/kubepods/podA': undefined }],
    ['ensure', () => m.ensure('/kubepods/podA', { cpuShares: 2 }), { '/kubepods/podA': { cpuShares: 2 } }],
    [
      'update',
      () => m.update('/kubepods/podA', { cpuShares: 4, memoryLimitBytes: 10 }),
      { '/kubepods/podA': { cpuShares: 4, memoryLimitBytes: 10 } },
    ],
    ['update of one not there makes none', () => m.update('/kubepods/podB', { cpuShares: 1 }), { '/kubepods/podB': undefined }],
    ['a child', () => m.ensure('/kubepods/podA/c1', { cpuShares: 1 }), { '/kubepods/podA/c1': { cpuShares: 1 } }],
    ['QoS shares', () => m.ensureQos('/kubepods/burstable', { cpuShares: 7 }), { '/kubepods/burstable': { cpuShares: 7 } }],
    [
      'remove takes the children',
      () => m.remove('/kubepods/podA'),
      { '/kubepods/podA': undefined, '/kubepods/podA/c1': undefined, '/kubepods/burstable': { cpuShares: 7 } },
    ],
  ];
  for (const [name, step, want] of rows) {
    await step();
    for (const [path, limits] of Object.entries(want)) assert.deepEqual(m.read(path), limits, `${name}: ${path}`);
  }
});
