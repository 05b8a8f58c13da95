import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  byEvictionPriority,
  evaluate,
  initialEvictionState,
  mergeThresholds,
  nodeConditions,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
  reclaimSatisfied,
  thresholdsFirstObservedAt,
  thresholdsMet,
  thresholdsMetGracePeriod,
  thresholdsUpdatedStats,
  type EvictionState,
} from './decide.ts';
import type { Observations } from './observations.ts';
import { parseThresholds } from './thresholds.ts';
import type { Threshold } from './types.ts';

const Mi = 2 ** 20,
  Gi = 2 ** 30;
const mem = (available: number, timeMs = 0): Observations => ({ 'memory.available': { available, capacity: 8 * Gi, timeMs } });
const hardMem: Threshold = {
  signal: 'memory.available',
  operator: 'LessThan',
  value: { quantity: 100 * Mi, format: 'BinarySI' },
  gracePeriodMs: 0,
  minReclaim: { quantity: 50 * Mi, format: 'BinarySI' },
};
const softMem: Threshold = { ...hardMem, value: { quantity: 500 * Mi, format: 'BinarySI' }, gracePeriodMs: 60_000, minReclaim: undefined };
const nodefs10: Threshold = { signal: 'nodefs.available', operator: 'LessThan', value: { percentage: 0.1 }, gracePeriodMs: 0 };
const pid: Threshold = { signal: 'pid.available', operator: 'LessThan', value: { quantity: 100, format: 'DecimalSI' }, gracePeriodMs: 0 };

test('thresholdsMet: strictly below the line; minimum reclaim raises it when enforced; no observation, not met', () => {
  const disk: Observations = { 'nodefs.available': { available: 9 * Gi, capacity: 100 * Gi } };
  const cases: [string, Threshold, Observations, boolean, boolean][] = [
    ['below', hardMem, mem(99 * Mi), false, true],
    ['at the line', hardMem, mem(100 * Mi), false, false],
    ['above', hardMem, mem(120 * Mi), false, false],
    ['above, but within minimum reclaim', hardMem, mem(120 * Mi), true, true],
    ['above the line plus minimum reclaim', hardMem, mem(150 * Mi), true, false],
    ['percentage below', nodefs10, disk, false, true],
    ['percentage above', nodefs10, { 'nodefs.available': { available: 11 * Gi, capacity: 100 * Gi } }, false, false],
    ['no observation', pid, mem(0), false, false],
  ];
  for (const [name, t, obs, enforce, want] of cases) assert.equal(thresholdsMet([t], obs, enforce).length === 1, want, name);
});

test('mergeThresholds drops what is already there, minimum reclaim aside', () => {
  assert.deepEqual(mergeThresholds([hardMem], [{ ...hardMem, minReclaim: undefined }, softMem]), [hardMem, softMem]);
});

test('first observed: kept while met, now when new, forgotten when no longer met', () => {
  const last = [
    { threshold: softMem, atMs: 1000 },
    { threshold: nodefs10, atMs: 2000 },
  ];
  assert.deepEqual(thresholdsFirstObservedAt([{ ...softMem }, pid], last, 5000), [
    { threshold: softMem, atMs: 1000 },
    { threshold: pid, atMs: 5000 },
  ]);
});

test('grace periods: hard at once, soft once held long enough', () => {
  const observed = [
    { threshold: hardMem, atMs: 10_000 },
    { threshold: softMem, atMs: 10_000 },
  ];
  assert.deepEqual(thresholdsMetGracePeriod(observed, 10_000), [hardMem]);
  assert.deepEqual(thresholdsMetGracePeriod(observed, 69_999), [hardMem]);
  assert.deepEqual(thresholdsMetGracePeriod(observed, 70_000), [hardMem, softMem]);
});

test('node conditions and their transition period', () => {
  assert.deepEqual(nodeConditions([pid, nodefs10, hardMem, softMem]), ['MemoryPressure', 'DiskPressure', 'PIDPressure']);
  const at = nodeConditionsLastObservedAt(['DiskPressure'], { MemoryPressure: 1000, DiskPressure: 1000 }, 9000);
  assert.deepEqual(at, { MemoryPressure: 1000, DiskPressure: 9000 });
  const cases: [number, string[]][] = [
    [9000, ['MemoryPressure', 'DiskPressure']],
    [300_999, ['MemoryPressure', 'DiskPressure']],
    [301_000, ['DiskPressure']],
    [309_000, []],
  ];
  for (const [now, want] of cases) assert.deepEqual(nodeConditionsObservedSince(at, 300_000, now), want, `at ${now}`);
  // As upstream: a zero period reports nothing.
  assert.deepEqual(nodeConditionsObservedSince(at, 0, 9000), []);
});

test('updated stats: only thresholds whose observation moved on', () => {
  const obs: Observations = {
    ...mem(0, 2000),
    'pid.available': { available: 0, capacity: 10, timeMs: 1000 },
    'nodefs.available': { available: 0, capacity: 10 },
  };
  const last: Observations = {
    ...mem(0, 1000),
    'pid.available': { available: 0, capacity: 10, timeMs: 1000 },
    'nodefs.available': { available: 0, capacity: 10 },
  };
  assert.deepEqual(thresholdsUpdatedStats([hardMem, pid, nodefs10], obs, last), [hardMem, nodefs10]);
  assert.deepEqual(thresholdsUpdatedStats([pid], obs, {}), [pid]);
});

test('byEvictionPriority puts memory first, the rest in order', () => {
  const alloc = { ...hardMem, signal: 'allocatableMemory.available' as const };
  assert.deepEqual(
    byEvictionPriority([nodefs10, pid, alloc, hardMem]).map((t) => t.signal),
    ['allocatableMemory.available', 'memory.available', 'nodefs.available', 'pid.available'],
  );
});

const layout = { dedicatedImageFs: false, splitContainerImageFs: false };
const round = (state: EvictionState, thresholds: Threshold[], observations: Observations, nowMs: number) =>
  evaluate(state, { thresholds, observations, nowMs, pressureTransitionPeriodMs: 300_000, layout });

test('evaluate: a hard threshold, minimum reclaim, fresh stats and the transition period over rounds', () => {
  const ts = [hardMem];
  let r = round(initialEvictionState(), ts, mem(90 * Mi, 1000), 1000);
  assert.deepEqual(r.conditions, ['MemoryPressure']);
  assert.deepEqual(r.reclaim, { threshold: hardMem, resource: 'memory', nodeReclaim: [], hard: true });
  // The same stats again: still under pressure, but nothing new to act on.
  r = round(r.state, ts, mem(90 * Mi, 1000), 11_000);
  assert.deepEqual([r.conditions, r.reclaim], [['MemoryPressure'], undefined]);
  // Above the line but within the minimum reclaim: still met, so another eviction.
  r = round(r.state, ts, mem(120 * Mi, 21_000), 21_000);
  assert.equal(r.reclaim?.threshold, hardMem);
  // Past the minimum reclaim: no longer met; the condition holds for the transition period.
  r = round(r.state, ts, mem(200 * Mi, 31_000), 31_000);
  assert.deepEqual([r.conditions, r.reclaim, r.state.thresholdsMet], [['MemoryPressure'], undefined, []]);
  r = round(r.state, ts, mem(200 * Mi, 321_000), 321_000);
  assert.deepEqual(r.conditions, []);
  assert.deepEqual(r.state.nodeConditions, []);
});

test('evaluate: a soft threshold reports pressure at once, evicts after its grace period, and restarts it when it clears', () => {
  const ts = [softMem];
  let r = round(initialEvictionState(), ts, mem(400 * Mi, 0), 0);
  assert.deepEqual([r.conditions, r.reclaim], [['MemoryPressure'], undefined]);
  r = round(r.state, ts, mem(400 * Mi, 30_000), 30_000);
  assert.equal(r.reclaim, undefined);
  r = round(r.state, ts, mem(400 * Mi, 60_000), 60_000);
  assert.deepEqual(r.reclaim, { threshold: softMem, resource: 'memory', nodeReclaim: [], hard: false });
  r = round(r.state, ts, mem(600 * Mi, 70_000), 70_000);
  r = round(r.state, ts, mem(400 * Mi, 80_000), 80_000);
  assert.deepEqual(r.state.thresholdsFirstObservedAt, [{ threshold: softMem, atMs: 80_000 }]);
  assert.equal(r.reclaim, undefined);
});

test('evaluate: memory is reclaimed before disk; disk names its node-level reclaim', () => {
  const ts = parseThresholds({ evictionHard: { 'nodefs.available': '10%', 'memory.available': '100Mi' }, enforceNodeAllocatable: [] });
  const obs: Observations = { ...mem(50 * Mi, 5), 'nodefs.available': { available: 1 * Gi, capacity: 100 * Gi, timeMs: 5 } };
  const r = round(initialEvictionState(), ts, obs, 5);
  assert.deepEqual(r.conditions, ['MemoryPressure', 'DiskPressure']);
  assert.deepEqual(
    r.thresholds.map((t) => t.signal),
    ['memory.available', 'nodefs.available'],
  );
  assert.equal(r.reclaim?.resource, 'memory');
  const disk = round(initialEvictionState(), ts, { ...obs, ...mem(Gi, 5) }, 5);
  assert.deepEqual(
    disk.reclaim && { signal: disk.reclaim.threshold.signal, resource: disk.reclaim.resource, nodeReclaim: disk.reclaim.nodeReclaim },
    { signal: 'nodefs.available', resource: 'ephemeral-storage', nodeReclaim: ['containers', 'images'] },
  );
});

test('reclaimSatisfied: nothing met once the minimum reclaim is counted', () => {
  assert.equal(reclaimSatisfied([hardMem], mem(120 * Mi)), false);
  assert.equal(reclaimSatisfied([hardMem], mem(151 * Mi)), true);
});
