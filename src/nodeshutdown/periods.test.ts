import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import {
  groupByPriority,
  migrateConfig,
  podShutdownGracePeriodSeconds,
  shutdownConfigError,
  shutdownPeriods,
  totalGracePeriodSeconds,
  type ShutdownConfig,
} from './periods.ts';

const cfg = (over: Partial<ShutdownConfig> = {}): ShutdownConfig => ({
  shutdownGracePeriodMs: 0,
  shutdownGracePeriodCriticalPodsMs: 0,
  shutdownGracePeriodByPodPriority: [],
  featureGates: {},
  ...over,
});
const pod = (name: string, priority?: number, grace?: number): Pod => ({
  metadata: { name },
  spec: { containers: [], priority, terminationGracePeriodSeconds: grace },
});

test('migrateConfig: shutdownGracePeriod and the critical share as two groups (upstream TestMigrateConfig)', () => {
  const cases: [string, number, number, [number, number][]][] = [
    ['off by default', 0, 0, []],
    ['critical share only', 0, 10_000, []],
    [
      'both',
      20_000,
      10_000,
      [
        [0, 10],
        [2_000_000_000, 10],
      ],
    ],
    [
      'no critical share',
      30_000,
      0,
      [
        [0, 30],
        [2_000_000_000, 0],
      ],
    ],
    [
      'all critical',
      10_000,
      10_000,
      [
        [0, 0],
        [2_000_000_000, 10],
      ],
    ],
    ['critical longer than the whole: none', 10_000, 20_000, []],
    [
      'sub-second parts truncate',
      3_500,
      1_200,
      [
        [0, 2],
        [2_000_000_000, 1],
      ],
    ],
  ];
  for (const [name, period, critical, want] of cases)
    assert.deepEqual(
      migrateConfig(period, critical).map((p) => [p.priority, p.shutdownGracePeriodSeconds]),
      want,
      name,
    );
});

test('shutdownPeriods: ByPodPriority as given and sorted, else migrated; empty when a gate is off', () => {
  const list = [
    { priority: 100000, shutdownGracePeriodSeconds: 30 },
    { priority: 0, shutdownGracePeriodSeconds: 20 },
    { priority: 2_000_000_000, shutdownGracePeriodSeconds: 10 },
  ];
  const cases: [string, ShutdownConfig, number[]][] = [
    ['default: off', cfg(), []],
    ['migrated', cfg({ shutdownGracePeriodMs: 20_000, shutdownGracePeriodCriticalPodsMs: 10_000 }), [0, 2_000_000_000]],
    ['by priority, sorted', cfg({ shutdownGracePeriodByPodPriority: list }), [0, 100000, 2_000_000_000]],
    [
      'by priority with its gate off: migrated (validation refuses this config anyway)',
      cfg({ shutdownGracePeriodByPodPriority: list, featureGates: { GracefulNodeShutdownBasedOnPodPriority: false } }),
      [],
    ],
    ['GracefulNodeShutdown off', cfg({ shutdownGracePeriodMs: 20_000, featureGates: { GracefulNodeShutdown: false } }), []],
  ];
  for (const [name, c, want] of cases)
    assert.deepEqual(
      shutdownPeriods(c).map((p) => p.priority),
      want,
      name,
    );
  assert.equal(totalGracePeriodSeconds(shutdownPeriods(cfg({ shutdownGracePeriodByPodPriority: list }))), 60);
  // The caller's list is not reordered.
  assert.equal(list[0]!.priority, 100000);
});

test('groupByPriority: the highest group not above the pod, clamped at both ends (upstream Test_groupByPriority)', () => {
  const periods = [
    { priority: 1, shutdownGracePeriodSeconds: 10 },
    { priority: 2, shutdownGracePeriodSeconds: 20 },
    { priority: 10, shutdownGracePeriodSeconds: 30 },
    { priority: 100, shutdownGracePeriodSeconds: 40 },
  ];
  const cases: [string, number | undefined, number][] = [
    ['below the lowest', 0, 1],
    ['no priority is 0: the lowest', undefined, 1],
    ['on a boundary', 2, 2],
    ['between two: the lower', 5, 2],
    ['just under a boundary', 99, 10],
    ['above the highest', 1_000_000, 100],
    ['negative', -5, 1],
  ];
  for (const [name, priority, want] of cases) {
    const groups = groupByPriority(periods, [pod('p', priority)]);
    assert.equal(groups.find((g) => g.pods.length)?.priority, want, name);
  }
  // Every group is there, in order, even the empty ones.
  assert.deepEqual(
    groupByPriority(periods, [pod('a', 0), pod('b', 50), pod('c', 7)]).map((g) => [g.priority, g.pods.map((p) => p.metadata!.name)]),
    [
      [1, ['a']],
      [2, ['c']],
      [10, ['b']],
      [100, []],
    ],
  );
  assert.deepEqual(groupByPriority([], [pod('a')]), []);
});

test('the grace period a pod gets: its own when not longer than its group', () => {
  const cases: [string, number | undefined, number, number][] = [
    ['own shorter', 5, 10, 5],
    ['own equal', 10, 10, 10],
    ['own longer: the group', 30, 10, 10],
    ['none set: the group', undefined, 10, 10],
    ['own zero', 0, 10, 0],
    ['group zero', 30, 0, 0],
  ];
  for (const [name, own, group, want] of cases) assert.equal(podShutdownGracePeriodSeconds(pod('p', 0, own), group), want, name);
});

test('validation in upstream words', () => {
  const cases: [string, Partial<ShutdownConfig>, string | undefined][] = [
    ['default', {}, undefined],
    ['20s/10s', { shutdownGracePeriodMs: 20_000, shutdownGracePeriodCriticalPodsMs: 10_000 }, undefined],
    [
      'critical longer',
      { shutdownGracePeriodMs: 10_000, shutdownGracePeriodCriticalPodsMs: 20_000 },
      'invalid configuration: shutdownGracePeriodCriticalPods 20s must be <= shutdownGracePeriod 10s',
    ],
    [
      'sub-second period',
      { shutdownGracePeriodMs: 500 },
      'invalid configuration: shutdownGracePeriod 500ms must be either zero or otherwise >= 1 sec',
    ],
    [
      'sub-second critical',
      { shutdownGracePeriodMs: 10_000, shutdownGracePeriodCriticalPodsMs: 100 },
      'invalid configuration: shutdownGracePeriodCriticalPods 100ms must be either zero or otherwise >= 1 sec',
    ],
    [
      'gate off',
      { shutdownGracePeriodMs: 10_000, featureGates: { GracefulNodeShutdown: false } },
      'invalid configuration: specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires feature gate GracefulNodeShutdown',
    ],
    [
      'both kinds',
      { shutdownGracePeriodMs: 10_000, shutdownGracePeriodByPodPriority: [{ priority: 0, shutdownGracePeriodSeconds: 1 }] },
      'invalid configuration: Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time',
    ],
    [
      'by priority without its gate',
      {
        shutdownGracePeriodByPodPriority: [{ priority: 0, shutdownGracePeriodSeconds: 1 }],
        featureGates: { GracefulNodeShutdownBasedOnPodPriority: false },
      },
      'invalid configuration: Specifying shutdownGracePeriodByPodPriority requires feature gate GracefulNodeShutdownBasedOnPodPriority',
    ],
  ];
  for (const [name, over, want] of cases) assert.equal(shutdownConfigError(cfg(over)), want, name);
});
