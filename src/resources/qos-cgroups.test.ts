import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { cgroupLayout } from './cgroup-layout.ts';
import { cgroupfsManager } from './cgroup-manager.ts';
import { keepQosCgroups, qosCgroupShares, updateQosCgroups } from './qos-cgroups.ts';
import { container, mountV1, podLevel } from './testing.ts';

const pod = (...containers: Parameters<typeof container>[]): Pod =>
  podLevel(
    undefined,
    containers.map((c) => container(...c)),
  );
const burstable = (cpu: string) => pod(['c', { cpu }]);
const guaranteed = pod(['c', { cpu: '2', memory: '1Gi' }, { cpu: '2', memory: '1Gi' }]);
const bestEffort = pod(['c']);

// upstream's setCPUCgroupConfig (qos_container_manager_linux.go).
test("qosCgroupShares: BestEffort the least weight; Burstable its pods' CPU requests together", () => {
  const cases: { name: string; pods: Pod[]; want: { burstable: number; besteffort: number } }[] = [
    { name: 'no pods', pods: [], want: { burstable: 2, besteffort: 2 } },
    { name: 'two burstable', pods: [burstable('100m'), burstable('250m')], want: { burstable: 358, besteffort: 2 } },
    {
      name: 'guaranteed and best-effort pods count for neither',
      pods: [guaranteed, bestEffort, burstable('1')],
      want: { burstable: 1024, besteffort: 2 },
    },
    { name: 'a burstable pod without a CPU request', pods: [pod(['c', { memory: '64Mi' }])], want: { burstable: 2, besteffort: 2 } },
    {
      name: 'overhead counts, as PodRequests',
      pods: [{ ...burstable('100m'), spec: { ...burstable('100m').spec!, overhead: { cpu: '100m' } } }],
      want: { burstable: 204, besteffort: 2 },
    },
  ];
  for (const c of cases) assert.deepEqual(qosCgroupShares(c.pods), c.want, c.name);
});

test('updateQosCgroups writes the QoS cgroups of kubepods under the cgroup root, on v1 and v2', async (t) => {
  const v1 = mkdtempSync(join(tmpdir(), 'kts-qos-'));
  t.after(() => rmSync(v1, { recursive: true, force: true }));
  mountV1(v1, 'cpu', 'memory');
  await updateQosCgroups(cgroupLayout('cgroupfs', '/'), [burstable('500m')], cgroupfsManager(v1));
  const read = (root: string, f: string) => readFileSync(join(root, f), 'utf8');
  assert.deepEqual([read(v1, 'cpu/kubepods/burstable/cpu.shares'), read(v1, 'cpu/kubepods/besteffort/cpu.shares')], ['512', '2']);
  await updateQosCgroups(cgroupLayout('cgroupfs', '/node-a'), [], cgroupfsManager(v1));
  assert.equal(read(v1, 'cpu/node-a/kubepods/burstable/cpu.shares'), '2');

  const v2 = mkdtempSync(join(tmpdir(), 'kts-qos2-'));
  t.after(() => rmSync(v2, { recursive: true, force: true }));
  writeFileSync(join(v2, 'cgroup.controllers'), 'cpu memory');
  await updateQosCgroups(cgroupLayout('cgroupfs', '/'), [burstable('1')], cgroupfsManager(v2));
  assert.deepEqual(
    [read(v2, 'kubepods/cgroup.subtree_control'), read(v2, 'kubepods/burstable/cpu.weight'), read(v2, 'kubepods/besteffort/cpu.weight')],
    ['+cpu +memory', '39', '1'],
  );
});

test('keepQosCgroups: a round now and then every period; a failing round is logged and the next one still comes', async (t) => {
  const flush = () => new Promise((r) => setImmediate(r));
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const errors: string[] = [];
  let rounds = 0;
  const log = { error: (msg: string) => errors.push(msg) } as unknown as Parameters<typeof keepQosCgroups>[1];
  const keeper = keepQosCgroups(
    async () => {
      rounds++;
      if (rounds === 1) throw new Error('EACCES');
    },
    log,
    1000,
  );
  assert.equal(rounds, 1, 'the first round at once');
  await flush();
  t.mock.timers.tick(1100); // the period and at most its jitter (10 %)
  assert.equal(rounds, 2, 'the next round after the failed one');
  await flush();
  t.mock.timers.tick(1100);
  assert.equal(rounds, 3);
  await flush();
  assert.deepEqual(errors, ['Failed to reserve QoS requests']);
  keeper.stop();
  t.mock.timers.tick(5000);
  assert.equal(rounds, 3, 'none after stop');
});
