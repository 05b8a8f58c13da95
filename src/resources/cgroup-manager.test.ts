import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type CgroupManager, type CgroupOperation, timedCgroupManager } from './cgroup-manager.ts';

test("timedCgroupManager: each write timed under upstream's operation type, failures too; reads not timed", async () => {
  const calls: string[] = [];
  const inner: CgroupManager = {
    driver: 'cgroupfs',
    ensure: async (p) => void calls.push(`ensure ${p}`),
    ensureQos: async (p) => void calls.push(`ensureQos ${p}`),
    update: (p) => {
      calls.push(`update ${p}`);
      if (p === '/bad') throw new Error('refused');
    },
    read: () => undefined,
    memoryUsage: () => 5,
    setReserved: async () => {
      throw new Error('no such cgroup');
    },
    remove: async () => true,
    present: () => true,
  };
  const l = { cpuShares: 2 };
  const seen: [CgroupOperation, number][] = [];
  const m = timedCgroupManager(inner, (op, s) => seen.push([op, s]));
  await m.ensure('/kubepods/pod1', l);
  await m.ensureQos('/kubepods/burstable', { cpuShares: 2 });
  m.update('/kubepods/pod1', l);
  assert.throws(() => m.update('/bad', l), /refused/);
  await assert.rejects(m.setReserved('/system.slice', {}), /no such cgroup/);
  assert.equal(await m.remove('/kubepods/pod1'), true, 'the result passes through');
  assert.equal(m.memoryUsage('/x'), 5);
  assert.equal(m.present('/x'), true);
  assert.equal(m.driver, 'cgroupfs');
  assert.deepEqual(
    seen.map(([op]) => op),
    ['create', 'update', 'update', 'update', 'update', 'destroy'],
  );
  assert.ok(seen.every(([, s]) => s >= 0 && s < 1));
  assert.deepEqual(calls, ['ensure /kubepods/pod1', 'ensureQos /kubepods/burstable', 'update /kubepods/pod1', 'update /bad']);
});
