import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NodeGetVolumeStatsResponse__Output } from '../csi/generated/csi/v1/NodeGetVolumeStatsResponse.ts';
import type { ClaimMount } from '../volumes/claims.ts';
import { claimStatsSource, csiVolumeMetrics, metricsProvider } from './claim-volumes.ts';
import { volumeStats } from './summary.ts';

test("metricsProvider: upstream's provider for each plugin", () => {
  const cases: [ClaimMount['kind'], boolean, string | undefined][] = [
    ['local', false, 'statfs'], // MetricsStatFS of the bind mount
    ['local', true, 'block'], // MetricsBlock of the device
    ['csi', false, 'csi'], // metricsCsi: NodeGetVolumeStats
    ['csi', true, 'csi'], // raw block CSI: NodeGetVolumeStats of the mapped device (upstream's csiBlockMapper metrics)
    ['hostPath', false, undefined], // MetricsNil
  ];
  for (const [kind, block, want] of cases) assert.equal(metricsProvider({ kind, block }), want, `${kind} block=${block}`);
  // A flexVolume's driver says (supportsMetrics): MetricsStatFS, or MetricsNil.
  assert.equal(metricsProvider({ kind: 'flexVolume', block: false, statfs: true }), 'statfs');
  assert.equal(metricsProvider({ kind: 'flexVolume', block: false }), undefined);
});

const usage = (unit: 'BYTES' | 'INODES' | 'UNKNOWN', available: number, total: number, used: number) => ({
  unit,
  available: String(available),
  total: String(total),
  used: String(used),
});
const zeros = { capacityBytes: 0, availableBytes: 0, usedBytes: 0, inodes: 0, inodesFree: 0, inodesUsed: 0 };

test("csiVolumeMetrics: upstream's mapping of NodeGetVolumeStats' usage and condition", () => {
  const cases: [string, NodeGetVolumeStatsResponse__Output, boolean, unknown][] = [
    [
      'bytes and inodes',
      { usage: [usage('BYTES', 600, 1000, 400), usage('INODES', 90, 100, 10)], volumeCondition: null },
      false,
      { capacityBytes: 1000, availableBytes: 600, usedBytes: 400, inodes: 100, inodesFree: 90, inodesUsed: 10 },
    ],
    [
      'bytes only: inodes zero; an unknown unit skipped',
      { usage: [usage('UNKNOWN', 1, 2, 3), usage('BYTES', 6, 10, 4)], volumeCondition: null },
      false,
      { ...zeros, capacityBytes: 10, availableBytes: 6, usedBytes: 4 },
    ],
    [
      'the condition not asked for: not reported',
      { usage: [usage('BYTES', 6, 10, 4)], volumeCondition: { abnormal: true, message: 'disk gone' } },
      false,
      { ...zeros, capacityBytes: 10, availableBytes: 6, usedBytes: 4 },
    ],
    [
      'the condition asked for',
      { usage: [usage('BYTES', 6, 10, 4)], volumeCondition: { abnormal: true, message: 'disk gone' } },
      true,
      { ...zeros, capacityBytes: 10, availableBytes: 6, usedBytes: 4, abnormal: true },
    ],
    ['asked for, none sent: healthy; no usage is fine then', { usage: [], volumeCondition: null }, true, { ...zeros, abnormal: false }],
  ];
  for (const [name, r, withCondition, want] of cases) assert.deepEqual(csiVolumeMetrics(r, withCondition), want, name);
  assert.throws(() => csiVolumeMetrics({ usage: [], volumeCondition: null }, false), {
    message: 'failed to get usage from response. usage is nil',
  });
});

const pod = { name: 'web-0', namespace: 'ns', uid: 'u1' };
const mount = (volume: string, over: Partial<ClaimMount>): ClaimMount => ({
  pod,
  volume,
  pvc: { name: `${volume}-web-0`, namespace: 'ns' },
  kind: 'local',
  path: '/nonexistent',
  block: false,
  ...over,
});

async function until<T>(f: () => T | undefined): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = f();
    if (v !== undefined) return v;
    await sleep(5);
  }
  assert.fail('no figures in time');
}

test('claimStatsSource: a local volume by statfs of its mount, in the background; a hostPath one not at all', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-claim-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const mounts = [mount('data', { path: dir }), mount('host', { kind: 'hostPath', path: '/srv' })];
  const src = claimStatsSource({
    mounts: (uid) => (uid === 'u1' ? mounts : []),
    csi: () => assert.fail('no CSI volume here'),
    now: () => 5000,
  });
  const first = src.volumes('u1');
  assert.deepEqual(
    first.map((v) => [v.name, v.plugin, v.pvc, v.metrics]),
    [['data', 'kubernetes.io~local-volume', { name: 'data-web-0', namespace: 'ns' }, undefined]],
    'nothing measured on the way; the hostPath volume has no provider',
  );
  const m = await until(() => src.volumes('u1')[0]!.metrics);
  const s = statfsSync(dir);
  assert.equal(m.capacityBytes, s.blocks * s.bsize);
  assert.equal(m.inodes, s.files);
  assert.equal(m.inodesUsed, m.inodes - m.inodesFree);
  assert.ok(m.usedBytes > 0 && m.usedBytes <= m.capacityBytes);
  assert.equal(m.timeMs, 5000);
  // In the Summary: the pod's volume name, the claim, statfs' figures; no health without CSIVolumeHealth.
  const v = volumeStats(src.volumes('u1')[0]!)!;
  assert.deepEqual(
    [v.name, v.pvcRef, v.capacityBytes, v.inodesUsed, v.volumeHealthStats],
    ['data', { name: 'data-web-0', namespace: 'ns' }, m.capacityBytes, m.inodesUsed, undefined],
  );

  src.retain(new Set(['u2']));
  assert.equal(src.volumes('u1')[0]!.metrics, undefined, "a gone pod's figures are forgotten");
});

test('claimStatsSource: an inline volume measured by statfs (a flexVolume whose driver supportsMetrics), without a claim', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kts-flex-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'k8s~dummy', 'vol');
  mkdirSync(path, { recursive: true });
  const src = claimStatsSource({
    mounts: () => [],
    statfsVolumes: (uid) => (uid === 'u1' ? [{ name: 'vol', path }] : []),
    csi: () => assert.fail('no CSI volume here'),
  });
  assert.deepEqual(
    src.volumes('u1').map((v) => [v.name, v.plugin, v.pvc, v.metrics]),
    [['vol', 'k8s~dummy', undefined, undefined]],
  );
  const m = await until(() => src.volumes('u1')[0]!.metrics);
  assert.equal(m.capacityBytes, statfsSync(path).blocks * statfsSync(path).bsize);
  assert.equal(volumeStats(src.volumes('u1')[0]!)!.pvcRef, undefined);
});

test("claimStatsSource: a CSI volume by the driver's NodeGetVolumeStats, when it has GET_VOLUME_STATS", async () => {
  const calls: string[] = [];
  const events: string[] = [];
  const errors: string[] = [];
  const caps: Record<string, string[]> = {
    'stats.csi': ['STAGE_UNSTAGE_VOLUME', 'GET_VOLUME_STATS', 'VOLUME_CONDITION'],
    'nostats.csi': ['STAGE_UNSTAGE_VOLUME'],
  };
  const target = '/r/pods/u1/volumes/kubernetes.io~csi/pv-1/mount';
  const mounts = [
    mount('data', { kind: 'csi', path: target, csi: { driver: 'stats.csi', volumeHandle: 'vol-1' } }),
    mount('other', { kind: 'csi', path: '/t2', csi: { driver: 'nostats.csi', volumeHandle: 'vol-2' } }),
    mount('late', { kind: 'csi', path: '/t3', csi: { driver: 'unregistered.csi', volumeHandle: 'vol-3' } }),
  ];
  const sources: string[] = [];
  const src = claimStatsSource({
    mounts: () => mounts,
    csi(driver) {
      if (!caps[driver]) throw new Error(`driver name ${driver} not found in the list of registered CSI drivers`);
      return {
        nodeGetCapabilities: async () => new Set(caps[driver]) as never,
        async nodeGetVolumeStats(req) {
          calls.push(`${driver} ${req.volumeId} ${req.volumePath}`);
          return { usage: [usage('BYTES', 6, 10, 4)], volumeCondition: { abnormal: true, message: 'disk gone' } };
        },
      };
    },
    volumeHealth: true,
    events: { event: (obj, type, reason, message) => events.push(`${obj.name} ${type} ${reason} ${message}`) },
    onError: (key, e) => errors.push(`${key}: ${(e as Error).message}`),
    observe: (source, seconds) => sources.push(`${source} ${seconds >= 0}`),
  });
  src.volumes('u1');
  const vols = await until(() => {
    const v = src.volumes('u1');
    return v[0]!.metrics && errors.length ? v : undefined;
  });
  // Each timed under its driver's name, failures too (kubelet_volume_metric_collection_duration_seconds).
  assert.deepEqual(sources, ['stats.csi true', 'nostats.csi true', 'unregistered.csi true']);
  assert.deepEqual(calls, [`stats.csi vol-1 ${target}`]);
  assert.deepEqual(
    vols.map((v) => [v.name, v.plugin, v.metrics && { ...v.metrics, timeMs: 0 }]),
    [
      ['data', 'kubernetes.io~csi', { ...zeros, capacityBytes: 10, availableBytes: 6, usedBytes: 4, abnormal: true, timeMs: 0 }],
      ['other', 'kubernetes.io~csi', undefined],
      ['late', 'kubernetes.io~csi', undefined],
    ],
  );
  assert.deepEqual(volumeStats(vols[0]!)?.volumeHealthStats, { abnormal: true });
  assert.deepEqual(events, ['web-0 Warning VolumeConditionAbnormal Volume data: disk gone']);
  assert.deepEqual(
    errors,
    ['u1/late: driver name unregistered.csi not found in the list of registered CSI drivers'],
    'a driver without stats is not an error',
  );
});
