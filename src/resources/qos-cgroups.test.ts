import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { cgroupLayout } from './cgroup-layout.ts';
import { cgroupfsManager } from './cgroup-manager.ts';
import type { CgroupManager, QosCgroupLimits } from './cgroup-manager.ts';
import {
  keepQosCgroups,
  memoryLimitsAtUsage,
  parseQOSReserved,
  qosCgroupShares,
  qosMemoryLimits,
  type QosReservation,
  updateQosCgroups,
} from './qos-cgroups.ts';
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

// upstream's ParseQOSReserved and parsePercentage (cm/container_manager.go), errors word for word.
test('parseQOSReserved: memory only, a whole percentage from 0 to 100', () => {
  const rows: [Record<string, string>, ReturnType<typeof parseQOSReserved> | string][] = [
    [{}, {}],
    [{ memory: '50%' }, { memory: 50 }],
    [{ memory: '0%' }, { memory: 0 }],
    [{ memory: '100%' }, { memory: 100 }],
    [{ memory: '+7%' }, { memory: 7 }],
    [{ memory: '-0%' }, { memory: 0 }],
    [{ memory: '50%%' }, { memory: 50 }], // TrimRight takes every trailing %
    [{ cpu: '50%' }, 'cannot reserve "cpu" resource'],
    [{ memory: '50' }, `failed to parse percentage "50" for "memory" resource: percentage expected, got '50'`],
    [{ memory: '1Gi' }, `failed to parse percentage "1Gi" for "memory" resource: percentage expected, got '1Gi'`],
    [{ memory: '5.5%' }, `failed to parse percentage "5.5%" for "memory" resource: invalid number in percentage '5.5%'`],
    [{ memory: '%' }, `failed to parse percentage "%" for "memory" resource: invalid number in percentage '%'`],
    [{ memory: ' 5%' }, `failed to parse percentage " 5%" for "memory" resource: invalid number in percentage ' 5%'`],
    [
      { memory: '9223372036854775808%' },
      `failed to parse percentage "9223372036854775808%" for "memory" resource: invalid number in percentage '9223372036854775808%'`,
    ],
    [{ memory: '101%' }, 'failed to parse percentage "101%" for "memory" resource: percentage must be between 0 and 100'],
    [{ memory: '-1%' }, 'failed to parse percentage "-1%" for "memory" resource: percentage must be between 0 and 100'],
  ];
  for (const [m, want] of rows) {
    if (typeof want === 'string') assert.throws(() => parseQOSReserved(m), { message: want }, JSON.stringify(m));
    else assert.deepEqual(parseQOSReserved(m), want, JSON.stringify(m));
  }
});

const Gi = 2 ** 30,
  Mi = 2 ** 20;
const guaranteedMem = (memory: string) => pod(['c', { cpu: '1', memory }, { cpu: '1', memory }]);
const burstableMem = (memory: string) => pod(['c', { memory }]);

// upstream's setMemoryReserve (qos_container_manager_linux.go).
test('qosMemoryLimits: burstable is allocatable less percent of Guaranteed requests, besteffort that less percent of Burstable ones', () => {
  const cases: { name: string; pods: Pod[]; allocatable: number | undefined; percent: number; want: ReturnType<typeof qosMemoryLimits> }[] =
    [
      { name: 'no pods', pods: [], allocatable: 4 * Gi, percent: 50, want: { burstable: 4 * Gi, besteffort: 4 * Gi } },
      {
        name: 'half of each',
        pods: [guaranteedMem('1Gi'), burstableMem('512Mi'), bestEffort],
        allocatable: 4 * Gi,
        percent: 50,
        want: { burstable: 3.5 * Gi, besteffort: 3.25 * Gi },
      },
      {
        name: 'all of them',
        pods: [guaranteedMem('1Gi'), guaranteedMem('1Gi'), burstableMem('1Gi')],
        allocatable: 4 * Gi,
        percent: 100,
        want: { burstable: 2 * Gi, besteffort: 1 * Gi },
      },
      {
        name: '0%: no reservation, the limits are allocatable',
        pods: [guaranteedMem('1Gi'), burstableMem('1Gi')],
        allocatable: 4 * Gi,
        percent: 0,
        want: { burstable: 4 * Gi, besteffort: 4 * Gi },
      },
      {
        name: "Go's integer division truncates",
        pods: [guaranteedMem('3'), burstableMem('3')],
        allocatable: 100,
        percent: 50,
        want: { burstable: 99, besteffort: 98 },
      },
      {
        name: 'a burstable pod without a memory request counts for nothing; overhead counts, as PodRequests',
        pods: [burstable('100m'), { ...burstableMem('100Mi'), spec: { ...burstableMem('100Mi').spec!, overhead: { memory: '28Mi' } } }],
        allocatable: Gi,
        percent: 100,
        want: { burstable: Gi, besteffort: Gi - 128 * Mi },
      },
      {
        name: 'more reserved than allocatable: negative, as upstream computes it',
        pods: [guaranteedMem('2Gi')],
        allocatable: Gi,
        percent: 100,
        want: { burstable: -Gi, besteffort: -Gi },
      },
      { name: 'allocatable 0 (standalone): no limits', pods: [guaranteedMem('1Gi')], allocatable: 0, percent: 50, want: undefined },
      { name: 'allocatable unknown: no limits', pods: [], allocatable: undefined, percent: 50, want: undefined },
    ];
  for (const c of cases) assert.deepEqual(qosMemoryLimits(c.pods, c.allocatable, c.percent), c.want, c.name);
});

// upstream's retrySetMemoryReserve.
test('memoryLimitsAtUsage: a tier using more than its limit is held at its usage; an unreadable usage stops there', () => {
  const limits = { burstable: 1000, besteffort: 500 };
  const rows: [string, Record<string, number | undefined>, typeof limits][] = [
    ['both below', { burstable: 900, besteffort: 400 }, limits],
    ['besteffort above', { burstable: 900, besteffort: 700 }, { burstable: 1000, besteffort: 700 }],
    ['both above', { burstable: 1200, besteffort: 700 }, { burstable: 1200, besteffort: 700 }],
    ['burstable unreadable', { burstable: undefined, besteffort: 700 }, limits],
    ['besteffort unreadable', { burstable: 1200, besteffort: undefined }, { burstable: 1200, besteffort: 500 }],
  ];
  for (const [name, usage, want] of rows)
    assert.deepEqual(
      memoryLimitsAtUsage(limits, (t) => usage[t]),
      want,
      name,
    );
});

/** A cgroup manager that refuses a memory limit below a cgroup's usage, as cgroup v1 does (EBUSY). */
function fakeQosManager(usage: Record<string, number>) {
  const writes: string[] = [];
  const m: Pick<CgroupManager, 'ensureQos' | 'memoryUsage'> = {
    async ensureQos(path: string, l: QosCgroupLimits) {
      const used = usage[path] ?? 0;
      if (l.memoryLimitBytes !== undefined && l.memoryLimitBytes < used) {
        writes.push(`${path} ${l.cpuShares} ${l.memoryLimitBytes} EBUSY`);
        throw Object.assign(new Error('EBUSY'), { code: 'EBUSY' });
      }
      writes.push(`${path} ${l.cpuShares} ${l.memoryLimitBytes ?? '-'}`);
    },
    memoryUsage: (path) => usage[path],
  };
  return { m, writes };
}

test('updateQosCgroups with qosReserved: the limits written, lowered to the usage and written again when refused', async () => {
  const layout = cgroupLayout('cgroupfs', '/');
  const pods = [guaranteedMem('1Gi'), burstableMem('1Gi')];
  const reservation: QosReservation = { allocatableMemoryBytes: 4 * Gi, reserved: { memory: 100 } };
  const cases: { name: string; usage: Record<string, number>; reservation?: QosReservation; want: string[] }[] = [
    {
      name: 'gate off: the CPU weights alone',
      usage: {},
      want: ['/kubepods/burstable 2 -', '/kubepods/besteffort 2 -'],
    },
    {
      name: 'gate on without memory: the CPU weights alone, once',
      usage: {},
      reservation: { ...reservation, reserved: {} },
      want: ['/kubepods/burstable 2 -', '/kubepods/besteffort 2 -'],
    },
    {
      name: 'written at once',
      usage: { '/kubepods/besteffort': Gi },
      reservation,
      want: [`/kubepods/burstable 2 ${3 * Gi}`, `/kubepods/besteffort 2 ${2 * Gi}`],
    },
    {
      name: 'besteffort uses more: held at its usage',
      usage: { '/kubepods/burstable': 2.6 * Gi, '/kubepods/besteffort': 2.5 * Gi },
      reservation,
      want: [
        `/kubepods/burstable 2 ${3 * Gi}`,
        `/kubepods/besteffort 2 ${2 * Gi} EBUSY`,
        `/kubepods/burstable 2 ${3 * Gi}`,
        `/kubepods/besteffort 2 ${2.5 * Gi}`,
      ],
    },
    {
      name: 'allocatable unknown: no memory limits',
      usage: {},
      reservation: { ...reservation, allocatableMemoryBytes: 0 },
      want: ['/kubepods/burstable 2 -', '/kubepods/besteffort 2 -'],
    },
  ];
  for (const c of cases) {
    const { m, writes } = fakeQosManager(c.usage);
    await updateQosCgroups(layout, pods, m, c.reservation);
    assert.deepEqual(writes, c.want, c.name);
  }
  // The usage unreadable: nothing to lower it to, the second write fails and is reported.
  const { m } = fakeQosManager({ '/kubepods/besteffort': 2.5 * Gi });
  await assert.rejects(updateQosCgroups(layout, pods, { ...m, memoryUsage: () => undefined }, reservation), /EBUSY/);
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

  // With qosReserved: memory.limit_in_bytes on v1, memory.max on v2.
  const reservation = { allocatableMemoryBytes: 4 * Gi, reserved: { memory: 50 } };
  await updateQosCgroups(cgroupLayout('cgroupfs', '/'), [guaranteedMem('1Gi'), burstableMem('1Gi')], cgroupfsManager(v1), reservation);
  assert.deepEqual(
    [read(v1, 'memory/kubepods/burstable/memory.limit_in_bytes'), read(v1, 'memory/kubepods/besteffort/memory.limit_in_bytes')],
    [String(3.5 * Gi), String(3 * Gi)],
  );
  await updateQosCgroups(cgroupLayout('cgroupfs', '/'), [guaranteedMem('1Gi')], cgroupfsManager(v2), reservation);
  assert.deepEqual(
    [read(v2, 'kubepods/burstable/memory.max'), read(v2, 'kubepods/besteffort/memory.max')],
    [String(3.5 * Gi), String(3.5 * Gi)],
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
