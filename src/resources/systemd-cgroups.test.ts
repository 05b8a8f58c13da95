import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SystemdManager, UnitProperty } from '../dbus/systemd.ts';
import { DBusError } from '../dbus/dbus.ts';
import { mountV1 } from './testing.ts';
import {
  cpuQuotaPerSecUSec,
  INFINITY,
  qosProperties,
  reservedProperties,
  resourceProperties,
  sliceProperties,
  systemdCgroupManager,
} from './systemd-cgroups.ts';

test("cpuQuotaPerSecUSec: runc's rounding up to whole percent; no quota is infinity", () => {
  const rows: [number | undefined, number | undefined, bigint][] = [
    [50_000, 100_000, 500_000n],
    [12_300, 100_000, 130_000n], // 12.3% rounds up to 13%
    [10_000, 50_000, 200_000n],
    [undefined, undefined, INFINITY],
    [-1, 100_000, INFINITY],
  ];
  for (const [quota, period, want] of rows) assert.equal(cpuQuotaPerSecUSec(quota, period), want, `${quota}/${period}`);
});

test('resourceProperties: the names of each cgroup version, memory left alone unless set or resized to none', () => {
  const props = (l: Parameters<typeof resourceProperties>[0], v: 1 | 2, unlimited = false) =>
    Object.fromEntries(resourceProperties(l, v, unlimited).map(([k, [, val]]) => [k, val]));
  assert.deepEqual(props({ cpuShares: 512, cpuQuotaUs: 50_000, memoryLimitBytes: 2 ** 26, pidsLimit: 100 }, 1), {
    CPUShares: 512n,
    CPUQuotaPeriodUSec: 100_000n,
    CPUQuotaPerSecUSec: 500_000n,
    MemoryLimit: 67_108_864n,
    TasksMax: 100n,
  });
  assert.deepEqual(props({ cpuShares: 1024, memoryLimitBytes: 2 ** 26 }, 2), {
    CPUWeight: 39n,
    CPUQuotaPeriodUSec: 100_000n,
    CPUQuotaPerSecUSec: INFINITY,
    MemoryMax: 67_108_864n,
  });
  assert.deepEqual(props({ cpuShares: 2 }, 1), { CPUShares: 2n, CPUQuotaPeriodUSec: 100_000n, CPUQuotaPerSecUSec: INFINITY });
  assert.equal(props({ cpuShares: 2 }, 1, true).MemoryLimit, INFINITY);
  assert.equal(props({ cpuShares: 2, pidsLimit: -1 }, 1).TasksMax, INFINITY);
});

test("qosProperties: a QoS slice's CPU weight, and its memory limit when qosReserved sets one", () => {
  const props = (l: Parameters<typeof qosProperties>[0], v: 1 | 2) =>
    Object.fromEntries(qosProperties(l, v).map(([k, [, val]]) => [k, val]));
  assert.deepEqual(props({ cpuShares: 2 }, 1), { CPUShares: 2n });
  assert.deepEqual(props({ cpuShares: 1024, memoryLimitBytes: 2 ** 30 }, 1), { CPUShares: 1024n, MemoryLimit: 1_073_741_824n });
  assert.deepEqual(props({ cpuShares: 1024, memoryLimitBytes: 2 ** 30 }, 2), { CPUWeight: 39n, MemoryMax: 1_073_741_824n });
  assert.deepEqual(props({ cpuShares: 2, memoryLimitBytes: 0 }, 2), { CPUWeight: 1n }, 'zero: left unset');
  assert.equal(props({ cpuShares: 2, memoryLimitBytes: -1 }, 1).MemoryLimit, INFINITY, "negative: Go's uint64 of it");
});

test('sliceProperties: the parent as Wants, no default dependencies, accounting for every limited controller', () => {
  const p = Object.fromEntries(sliceProperties('kubepods-burstable.slice', 'kubepods.slice', 1).map(([k, [, v]]) => [k, v]));
  assert.deepEqual(p, {
    Description: 'libcontainer container kubepods-burstable.slice',
    Wants: ['kubepods.slice'],
    DefaultDependencies: false,
    MemoryAccounting: true,
    CPUAccounting: true,
    BlockIOAccounting: true,
    TasksAccounting: true,
  });
  assert.ok(sliceProperties('a.slice', '-.slice', 2).some(([k]) => k === 'IOAccounting'));
});

/** systemd as the driver sees it: units by name; starting one makes its v1 directories, as systemd realizes a slice. */
function fakeSystemd(root: string, dirOf: (unit: string) => string) {
  const calls: string[] = [];
  const units = new Map<string, UnitProperty[]>();
  const systemd: SystemdManager = {
    async startTransientUnit(name, props) {
      calls.push(`start ${name}`);
      if (units.has(name)) throw new DBusError('org.freedesktop.systemd1.UnitExists', `Unit ${name} was already loaded`);
      units.set(name, props);
      for (const c of ['cpu', 'memory']) mkdirSync(join(root, c, dirOf(name)), { recursive: true });
    },
    async setUnitProperties(name, props) {
      calls.push(`set ${name}`);
      units.set(name, props);
    },
    async stopUnit(name) {
      calls.push(`stop ${name}`);
      if (!units.delete(name)) throw new DBusError('org.freedesktop.systemd1.NoSuchUnit', `Unit ${name} not loaded.`);
      for (const c of ['cpu', 'memory']) rmSync(join(root, c, dirOf(name)), { recursive: true, force: true });
    },
  };
  return { systemd, calls, units };
}

test('the systemd driver: a slice started with its limits, found there next time, resized, stopped; its files written too', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-sd-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mountV1(root, 'cpu', 'memory');
  const path = '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podu_1.slice';
  const { systemd, calls, units } = fakeSystemd(root, () => path);
  const m = systemdCgroupManager(systemd, root, { realizeWaitMs: 0 });
  const read = (f: string) => readFileSync(join(root, f), 'utf8');

  await m.ensure(path, { cpuShares: 512, memoryLimitBytes: 2 ** 26 });
  assert.deepEqual(calls, ['start kubepods-burstable-podu_1.slice']);
  const started = Object.fromEntries(units.get('kubepods-burstable-podu_1.slice')!.map(([k, [, v]]) => [k, v]));
  assert.equal(started.Wants?.toString(), 'kubepods-burstable.slice');
  assert.equal(started.MemoryLimit, 67_108_864n);
  assert.deepEqual([read(`cpu${path}/cpu.shares`), read(`memory${path}/memory.limit_in_bytes`)], ['512', '67108864']);
  assert.deepEqual(m.read(path), { cpuShares: 512, memoryLimitBytes: 2 ** 26 });

  await m.ensure(path, { cpuShares: 256 });
  assert.deepEqual(
    calls.slice(1),
    ['start kubepods-burstable-podu_1.slice', 'set kubepods-burstable-podu_1.slice'],
    'UnitExists: its properties set',
  );

  m.update(path, { cpuShares: 1024 });
  assert.equal(read(`memory${path}/memory.limit_in_bytes`), '-1', 'a resize to no limit: unlimited at once');
  await new Promise((r) => setImmediate(r));
  assert.equal(units.get('kubepods-burstable-podu_1.slice')!.find(([k]) => k === 'MemoryLimit')?.[1][1], INFINITY);

  assert.equal(await m.remove(path), true);
  assert.equal(calls.at(-1), 'stop kubepods-burstable-podu_1.slice');
  assert.ok(!existsSync(join(root, 'memory', path)));
  assert.equal(await m.remove(path), true, 'a slice already gone (NoSuchUnit) is removed');
});

test('the systemd driver: a QoS slice gets its weight and memory limit as properties, then in its files', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-sdq-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mountV1(root, 'cpu', 'memory');
  const path = '/kubepods.slice/kubepods-besteffort.slice';
  const { systemd, units } = fakeSystemd(root, () => path);
  const m = systemdCgroupManager(systemd, root, { realizeWaitMs: 0 });
  await m.ensureQos(path, { cpuShares: 2, memoryLimitBytes: 2 ** 30 });
  const props = Object.fromEntries(units.get('kubepods-besteffort.slice')!.map(([k, [, v]]) => [k, v]));
  assert.deepEqual([props.CPUShares, props.MemoryLimit], [2n, 1_073_741_824n]);
  const read = (f: string) => readFileSync(join(root, f), 'utf8');
  assert.deepEqual([read(`cpu${path}/cpu.shares`), read(`memory${path}/memory.limit_in_bytes`)], ['2', '1073741824']);
  await m.ensureQos(path, { cpuShares: 2 });
  assert.equal(
    units.get('kubepods-besteffort.slice')!.find(([k]) => k === 'MemoryLimit'),
    undefined,
    'without qosReserved: memory not set (left as it is)',
  );
});

test('the systemd driver refuses a cgroupfs path, and names the unit systemd would not start', async () => {
  const m = systemdCgroupManager(
    {
      startTransientUnit: async () => {
        throw new DBusError('org.freedesktop.DBus.Error.AccessDenied', 'Access denied');
      },
      setUnitProperties: async () => {},
      stopUnit: async () => {},
    },
    '/nonexistent',
    { realizeWaitMs: 0 },
  );
  await assert.rejects(m.ensure('/kubepods/burstable/podu', { cpuShares: 2 }), /is not a systemd slice/);
  await assert.rejects(m.ensure('/kubepods.slice', { cpuShares: 2 }), /cannot start kubepods.slice: Access denied/);
});

test('reservedProperties: only what the reservation names, no quota, by cgroup version', () => {
  const rows: [string, Parameters<typeof reservedProperties>[0], 1 | 2, UnitProperty[]][] = [
    ['nothing', {}, 1, []],
    [
      'v1: all of it',
      { cpuShares: 512, memoryLimitBytes: 2 ** 30, pidsLimit: 100 },
      1,
      [
        ['CPUShares', ['t', 512n]],
        ['MemoryLimit', ['t', 1_073_741_824n]],
        ['TasksMax', ['t', 100n]],
      ],
    ],
    ['v2: a weight', { cpuShares: 1024 }, 2, [['CPUWeight', ['t', 39n]]]],
    ['v2: memory.max', { memoryLimitBytes: 2 ** 20, pidsLimit: 0 }, 2, [['MemoryMax', ['t', 1_048_576n]]]],
  ];
  for (const [name, l, v, want] of rows) assert.deepEqual(reservedProperties(l, v), want, name);
});

test('the systemd driver: a reserved slice must be there; its properties set, then its files', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-sdr-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mountV1(root, 'cpu', 'memory');
  const { systemd, calls, units } = fakeSystemd(root, () => '/system.slice');
  const m = systemdCgroupManager(systemd, root, { realizeWaitMs: 0 });
  await assert.rejects(m.setReserved('/system.slice', { cpuShares: 1024 }), /cgroup \["system"\] has some missing paths: /);
  assert.deepEqual(calls, [], 'nothing asked of systemd for a slice that is not there');
  for (const c of ['cpu', 'memory']) mkdirSync(join(root, c, 'system.slice'), { recursive: true });
  await m.setReserved('/system.slice', { cpuShares: 1024, memoryLimitBytes: 2 ** 30 });
  assert.deepEqual(calls, ['set system.slice']);
  assert.deepEqual(units.get('system.slice'), [
    ['CPUShares', ['t', 1024n]],
    ['MemoryLimit', ['t', 1_073_741_824n]],
  ]);
  assert.equal(readFileSync(join(root, 'memory/system.slice/memory.limit_in_bytes'), 'utf8'), '1073741824');
});
