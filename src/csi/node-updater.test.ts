import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import type { Logger } from '../log/log.ts';
import { allocatableUpdatePeriodMs, CsiNodeUpdater, isResourceExhausted, updaterPlan, wantedUpdaters } from './node-updater.ts';

const quiet: Logger = { info() {}, v() {}, warn() {}, error() {} };
const driver = (name: string, period?: number): CSIDriver => ({
  metadata: { name },
  spec: (period === undefined ? {} : { nodeAllocatableUpdatePeriodSeconds: period }) as CSIDriver['spec'],
});

test('allocatableUpdatePeriodMs: upstream getNodeAllocatableUpdatePeriod', () => {
  const rows: [CSIDriver | undefined, number][] = [
    [undefined, 0],
    [driver('d'), 0],
    [driver('d', 0), 0],
    [driver('d', 60), 60_000],
  ];
  for (const [d, want] of rows) assert.equal(allocatableUpdatePeriodMs(d), want, JSON.stringify(d));
});

test('wantedUpdaters: registered here, with a CSIDriver and a period (upstream syncDriverUpdater)', () => {
  const objects = new Map([
    ['a', driver('a', 10)],
    ['b', driver('b')],
    ['c', driver('c', 30)],
  ]);
  const rows: [string, string[], [string, number][]][] = [
    ['none registered', [], []],
    ['registered with a period', ['a'], [['a', 10_000]]],
    ['registered without a period', ['b'], []],
    ['registered without a CSIDriver object', ['x'], []],
    ['a period but not registered here: c is left out', ['a', 'b'], [['a', 10_000]]],
    [
      'several',
      ['c', 'a'],
      [
        ['c', 30_000],
        ['a', 10_000],
      ],
    ],
  ];
  for (const [name, registered, want] of rows) assert.deepEqual([...wantedUpdaters(registered, objects)], want, name);
});

test('updaterPlan: start new or changed periods, stop the unwanted, leave the same alone', () => {
  const rows: [string, [string, number][], [string, number][], ReturnType<typeof updaterPlan>][] = [
    ['nothing', [], [], { start: [], stop: [] }],
    ['new', [], [['a', 1]], { start: [['a', 1]], stop: [] }],
    ['same period: untouched', [['a', 1]], [['a', 1]], { start: [], stop: [] }],
    ['changed period: restarted', [['a', 1]], [['a', 2]], { start: [['a', 2]], stop: [] }],
    ['gone', [['a', 1]], [], { start: [], stop: ['a'] }],
  ];
  for (const [name, running, wanted, want] of rows) assert.deepEqual(updaterPlan(new Map(running), new Map(wanted)), want, name);
});

test('isResourceExhausted: attachError.errorCode 8 (upstream isResourceExhaustError)', () => {
  const va = (attachError?: object): VolumeAttachment =>
    ({ spec: {}, status: { attached: false, ...(attachError ? { attachError } : {}) } }) as unknown as VolumeAttachment;
  const rows: [string, VolumeAttachment | undefined, boolean][] = [
    ['no attachment', undefined, false],
    ['no error', va(), false],
    ['an error without a code', va({ message: 'x' }), false],
    ['another code', va({ message: 'x', errorCode: 13 }), false],
    ['ResourceExhausted', va({ message: 'x', errorCode: 8 }), true],
  ];
  for (const [name, v, want] of rows) assert.equal(isResourceExhausted(v), want, name);
});

test('CsiNodeUpdater: NodeGetInfo and the CSINode update every period while registered with a period', async () => {
  mock.timers.enable({ apis: ['setInterval'] });
  try {
    const registered = new Set(['a']);
    const updates: string[] = [];
    let max = 5;
    const u = new CsiNodeUpdater({
      registered: () => registered,
      nodeGetInfo: async () => ({ nodeId: 'n', maxVolumesPerNode: max, topology: {} }),
      updateDriver: async (d, info) => void updates.push(`${d}=${info.maxVolumesPerNode}`),
      log: quiet,
    });
    const settle = () => new Promise((r) => setImmediate(r));
    u.listed([driver('a', 10), driver('b', 10)]);
    mock.timers.tick(9_999);
    await settle();
    assert.deepEqual(updates, []);
    mock.timers.tick(1);
    await settle();
    assert.deepEqual(updates, ['a=5'], 'b is not registered here');
    max = 4;
    mock.timers.tick(10_000);
    await settle();
    assert.deepEqual(updates, ['a=5', 'a=4']);
    // The period changes: the timer restarts with it.
    u.event('MODIFIED', driver('a', 30));
    mock.timers.tick(20_000);
    await settle();
    assert.equal(updates.length, 2);
    mock.timers.tick(10_000);
    await settle();
    assert.equal(updates.length, 3);
    // Deregistered: no more updates.
    registered.delete('a');
    u.sync();
    mock.timers.tick(60_000);
    await settle();
    assert.equal(updates.length, 3);
    // Registered again, then its CSIDriver deleted.
    registered.add('a');
    u.sync();
    u.event('DELETED', driver('a', 30));
    mock.timers.tick(60_000);
    await settle();
    assert.equal(updates.length, 3);
    u.stop();
  } finally {
    mock.timers.reset();
  }
});

test('CsiNodeUpdater: a failed NodeGetInfo is logged, and a ResourceExhausted attachment refreshes at once, once a period', async () => {
  const errors: unknown[] = [];
  const updates: string[] = [];
  let fail = true;
  const u = new CsiNodeUpdater({
    registered: () => ['a'],
    nodeGetInfo: async () => {
      if (fail) throw new Error('unavailable');
      return { nodeId: 'n', maxVolumesPerNode: 2, topology: {} };
    },
    updateDriver: async (d, info) => void updates.push(`${d}=${info.maxVolumesPerNode}`),
    log: { ...quiet, error: (_m: string, f?: Record<string, unknown>) => void errors.push(f?.err) },
  });
  await u.update('a');
  assert.deepEqual(errors, ['failed to get NodeGetInfo from driver "a": unavailable']);
  fail = false;
  const exhausted = {
    spec: {},
    status: { attached: false, attachError: { message: 'too many', errorCode: 8 } },
  } as unknown as VolumeAttachment;
  assert.equal(u.resourceExhausted(driver('a'), exhausted, 0), false, 'no period: upstream does nothing');
  assert.equal(u.resourceExhausted(driver('a', 10), { spec: {}, status: { attached: false } } as unknown as VolumeAttachment, 0), false);
  assert.equal(u.resourceExhausted(driver('a', 10), exhausted, 1000), true);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(updates, ['a=2']);
  assert.equal(u.resourceExhausted(driver('a', 10), exhausted, 5000), true);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(updates, ['a=2'], 'within the period: not again');
  assert.equal(u.resourceExhausted(driver('a', 10), exhausted, 11_000), true);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(updates, ['a=2', 'a=2']);
  u.stop();
});
