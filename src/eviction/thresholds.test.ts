import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  describeThreshold,
  parseThresholds,
  thresholdKey,
  thresholdQuantity,
  withContainerFsThresholds,
  type EvictionSettings,
} from './thresholds.ts';
import type { Threshold } from './types.ts';

const P10 = 0.10000000149011612,
  P5 = 0.05000000074505806,
  P15 = Math.fround(0.15);
const Mi = 2 ** 20;

test('the default evictionHard, with the allocatable copy of memory.available', () => {
  const got = parseThresholds({
    evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '15%' },
  });
  assert.deepEqual(got, [
    { signal: 'memory.available', operator: 'LessThan', value: { quantity: 100 * Mi, format: 'BinarySI' }, gracePeriodMs: 0 },
    { signal: 'nodefs.available', operator: 'LessThan', value: { percentage: P10 }, gracePeriodMs: 0 },
    { signal: 'nodefs.inodesFree', operator: 'LessThan', value: { percentage: P5 }, gracePeriodMs: 0 },
    { signal: 'imagefs.available', operator: 'LessThan', value: { percentage: P15 }, gracePeriodMs: 0 },
    { signal: 'allocatableMemory.available', operator: 'LessThan', value: { quantity: 100 * Mi, format: 'BinarySI' }, gracePeriodMs: 0 },
  ]);
});

test('soft thresholds take their grace period; minimum reclaim applies to hard and soft alike', () => {
  const got = parseThresholds({
    evictionHard: { 'memory.available': '100Mi' },
    evictionSoft: { 'memory.available': '300Mi', 'pid.available': '1k' },
    evictionSoftGracePeriod: { 'memory.available': '1m30s', 'pid.available': '10s' },
    evictionMinimumReclaim: { 'memory.available': '50Mi', 'pid.available': '5%' },
    enforceNodeAllocatable: [],
  });
  assert.deepEqual(got, [
    {
      signal: 'memory.available',
      operator: 'LessThan',
      value: { quantity: 100 * Mi, format: 'BinarySI' },
      gracePeriodMs: 0,
      minReclaim: { quantity: 50 * Mi, format: 'BinarySI' },
    },
    {
      signal: 'memory.available',
      operator: 'LessThan',
      value: { quantity: 300 * Mi, format: 'BinarySI' },
      gracePeriodMs: 90_000,
      minReclaim: { quantity: 50 * Mi, format: 'BinarySI' },
    },
    {
      signal: 'pid.available',
      operator: 'LessThan',
      value: { quantity: 1000, format: 'DecimalSI' },
      gracePeriodMs: 10_000,
      minReclaim: { percentage: P5 },
    },
  ]);
});

test('0% and 100% are ignored, so a soft one needs no grace period; only hard memory is copied to allocatable', () => {
  assert.deepEqual(
    parseThresholds({
      evictionHard: { 'nodefs.available': '0%', 'imagefs.available': '100%' },
      evictionSoft: { 'nodefs.inodesFree': '0%' },
    }),
    [],
  );
  const soft = parseThresholds({ evictionSoft: { 'memory.available': '1Gi' }, evictionSoftGracePeriod: { 'memory.available': '1m' } });
  assert.deepEqual(
    soft.map((t) => t.signal),
    ['memory.available'],
  );
});

test("a bad entry refuses the configuration with upstream's message", () => {
  const cases: [string, EvictionSettings, string][] = [
    ['unknown signal', { evictionHard: { 'memory.free': '1Gi' } }, 'unsupported eviction signal memory.free'],
    ['swap is not a signal here', { evictionSoft: { 'swap.available': '1Gi' } }, 'unsupported eviction signal swap.available'],
    [
      'soft without grace period',
      { evictionSoft: { 'nodefs.available': '15%' } },
      'grace period must be specified for the soft eviction threshold nodefs.available',
    ],
    [
      "soft with another signal's grace period",
      { evictionSoft: { 'nodefs.available': '15%' }, evictionSoftGracePeriod: { 'imagefs.available': '1m' } },
      'grace period must be specified for the soft eviction threshold nodefs.available',
    ],
    [
      'negative percentage',
      { evictionHard: { 'nodefs.available': '-5%' } },
      'eviction percentage threshold nodefs.available must be >= 0%: -5%',
    ],
    ['over 100%', { evictionHard: { 'nodefs.available': '150%' } }, 'eviction percentage threshold nodefs.available must be <= 100%: 150%'],
    ['not a percentage', { evictionHard: { 'nodefs.available': 'ten%' } }, 'strconv.ParseFloat: parsing "ten": invalid syntax'],
    ['zero quantity', { evictionHard: { 'memory.available': '0' } }, 'eviction threshold memory.available must be positive: 0'],
    ['negative quantity', { evictionHard: { 'memory.available': '-1Mi' } }, 'eviction threshold memory.available must be positive: -1Mi'],
    [
      'not a quantity',
      { evictionHard: { 'memory.available': 'lots' } },
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ],
    [
      'unknown signal in grace periods',
      { evictionSoftGracePeriod: { 'disk.available': '1m' } },
      'unsupported eviction signal disk.available',
    ],
    ['bad grace period', { evictionSoftGracePeriod: { 'memory.available': 'soon' } }, 'time: invalid duration "soon"'],
    [
      'negative grace period',
      { evictionSoftGracePeriod: { 'memory.available': '-1s' } },
      'invalid eviction grace period specified: -1s, must be a positive value',
    ],
    [
      '0% minimum reclaim',
      { evictionMinimumReclaim: { 'memory.available': '0%' } },
      'eviction percentage minimum reclaim memory.available must be positive: 0%',
    ],
    [
      'negative minimum reclaim',
      { evictionMinimumReclaim: { 'memory.available': '-1Mi' } },
      'negative eviction minimum reclaim specified for memory.available',
    ],
  ];
  for (const [name, settings, message] of cases) assert.throws(() => parseThresholds(settings), { message }, name);
});

test('thresholdQuantity: an amount as is, a percentage of the capacity truncated through float32', () => {
  assert.equal(thresholdQuantity({ quantity: 100 * Mi, format: 'BinarySI' }, 8 * 2 ** 30), 100 * Mi);
  assert.equal(thresholdQuantity({ percentage: P10 }, 1e9), 100000001);
  assert.equal(thresholdQuantity({ percentage: P10 }, 10 * 2 ** 30), 1073741840);
});

test("thresholdKey tells apart what upstream's struct keys do", () => {
  const [hard, soft] = parseThresholds({
    evictionHard: { 'memory.available': '100Mi' },
    evictionSoft: { 'memory.available': '100Mi' },
    evictionSoftGracePeriod: { 'memory.available': '1m' },
    enforceNodeAllocatable: [],
  });
  assert.notEqual(thresholdKey(hard!), thresholdKey(soft!));
  assert.equal(thresholdKey(hard!), thresholdKey({ ...hard! }));
  assert.equal(describeThreshold(soft!), 'threshold(signal=memory.available, operator=LessThan, value=100Mi, gracePeriod=60s)');
  assert.equal(
    describeThreshold(parseThresholds({ evictionHard: { 'nodefs.available': '10%' } })[0]!),
    'threshold(signal=nodefs.available, operator=LessThan, value=10%, gracePeriod=0s)',
  );
});

test('containerfs thresholds copy the filesystem the writable layers share', () => {
  const base = parseThresholds({
    evictionHard: { 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '15%' },
    evictionSoft: { 'nodefs.available': '20%', 'imagefs.available': '25%' },
    evictionSoftGracePeriod: { 'nodefs.available': '1m', 'imagefs.available': '2m' },
  });
  const summary = (ts: Threshold[]) =>
    ts
      .filter((t) => t.signal.startsWith('containerfs'))
      .map((t) => `${t.signal} ${'percentage' in t.value ? Math.round(t.value.percentage * 100) : '?'}% ${t.gracePeriodMs}`);
  const cases: [string, boolean, boolean, string[]][] = [
    [
      'one filesystem: nodefs',
      false,
      false,
      ['containerfs.available 10% 0', 'containerfs.available 20% 60000', 'containerfs.inodesFree 5% 0'],
    ],
    ['dedicated imagefs: imagefs', true, false, ['containerfs.available 15% 0', 'containerfs.available 25% 120000']],
    [
      'images split from writable layers: nodefs',
      true,
      true,
      ['containerfs.available 10% 0', 'containerfs.available 20% 60000', 'containerfs.inodesFree 5% 0'],
    ],
  ];
  for (const [name, dedicatedImageFs, splitContainerImageFs, want] of cases) {
    const got = withContainerFsThresholds(base, { dedicatedImageFs, splitContainerImageFs });
    assert.deepEqual(summary(got.thresholds), want, name);
    assert.deepEqual(got.warnings, [], name);
    assert.equal(got.thresholds.length, base.length + want.length, name);
  }
});

test('configured containerfs thresholds are replaced in place, with a warning', () => {
  const base = parseThresholds({ evictionHard: { 'containerfs.available': '50%', 'nodefs.available': '10%' }, enforceNodeAllocatable: [] });
  const got = withContainerFsThresholds(base, { dedicatedImageFs: false, splitContainerImageFs: false });
  assert.deepEqual(got.thresholds, [
    { signal: 'containerfs.available', operator: 'LessThan', value: { percentage: P10 }, gracePeriodMs: 0 },
    { signal: 'nodefs.available', operator: 'LessThan', value: { percentage: P10 }, gracePeriodMs: 0 },
  ]);
  assert.deepEqual(got.warnings, ['found containerfs.available for hard eviction. ignoring']);
});
