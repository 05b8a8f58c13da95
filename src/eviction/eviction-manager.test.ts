import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { startEvictionManager, fsLayoutOf, type EvictionDeps } from './eviction-manager.ts';
import { parseThresholds } from './thresholds.ts';
import { logger } from '../log/log.ts';
import type { Summary } from '../stats/summary-types.ts';
import type { Eviction } from './evicted-status.ts';

const MiB = 2 ** 20;
const T = '2026-11-22T12:00:00Z';
const pod = (name: string, resources?: object): Pod => ({
  metadata: { name, namespace: 'ns', uid: name },
  spec: { containers: [{ name: 'main', ...(resources ? { resources } : {}) }] },
});
const guaranteed = pod('guaranteed', { requests: { cpu: '50m', memory: '32Mi' }, limits: { cpu: '50m', memory: '32Mi' } });
const hog = pod('hog');
const fs = { time: T, capacityBytes: 100e9, availableBytes: 50e9, inodes: 1e6, inodesFree: 5e5 };
const summary = (availableMiB: number, time = T): Summary => ({
  node: {
    nodeName: 'vm',
    startTime: T,
    memory: { time, availableBytes: availableMiB * MiB, workingSetBytes: 1000 * MiB },
    fs,
    runtime: { imageFs: fs },
  },
  pods: [guaranteed, hog].map((p) => ({
    podRef: { name: p.metadata!.name!, namespace: 'ns', uid: p.metadata!.uid! },
    startTime: T,
    containers: [],
    memory: { time, workingSetBytes: (p === hog ? 600 : 10) * MiB },
  })),
});

function manager(samples: Summary[], pods = [guaranteed, hog], localStorageCapacityIsolation?: boolean) {
  const evicted: Eviction[] = [];
  const conditions: string[][] = [];
  const m = startEvictionManager({
    thresholds: parseThresholds({ evictionHard: { 'memory.available': '500Mi' } }),
    pressureTransitionPeriodMs: 30_000,
    ...(localStorageCapacityIsolation === undefined ? {} : { localStorageCapacityIsolation }),
    maxPodGracePeriodSeconds: 0,
    summary: async () => samples.shift()!,
    facts: () => ({}),
    pods: () => pods,
    reclaim: { containers: async () => {}, images: async () => {} },
    evict: async (e) => {
      evicted.push(e);
      return true;
    },
    onConditions: (c) => conditions.push([...c]),
    events: { event() {} } as unknown as EvictionDeps['events'],
    node: { kind: 'Node', name: 'vm' },
    log: logger('test'),
    observe: { evicted() {}, round() {}, error() {} },
    intervalMs: 1e9,
  });
  return { m, evicted, conditions };
}

test('eviction manager: memory below the threshold reports MemoryPressure, evicts the BestEffort hog (not the Guaranteed pod) and refuses BestEffort pods', async () => {
  const { m, evicted, conditions } = manager([summary(2000), summary(300, '2026-11-22T12:00:10Z')]);
  await m.synchronize();
  assert.deepEqual([conditions, evicted], [[], []], 'nothing while memory is plentiful');
  await m.synchronize();
  assert.deepEqual(conditions, [['MemoryPressure']]);
  assert.deepEqual(
    evicted.map((e) => [e.pod.metadata!.name, e.gracePeriodSeconds, e.condition?.type]),
    [['hog', 1, 'DisruptionTarget']],
  );
  assert.match(evicted[0]!.message, /^The node was low on resource: memory\. Threshold quantity: 500Mi, available: 300Mi\./);
  assert.deepEqual(m.admit(pod('besteffort')), {
    admit: false,
    reason: 'Evicted',
    message: 'Pod was rejected: The node had condition: [MemoryPressure]. ',
  });
  assert.deepEqual(m.admit(guaranteed), { admit: true });
  m.stop();
});

test("eviction manager: a pod over its container's ephemeral-storage limit is evicted without node pressure (localStorageEviction), unless localStorageCapacityIsolation is false", async () => {
  const writer = pod('writer', { limits: { 'ephemeral-storage': '5Mi' } });
  // The pod's limit is its containers' sum, and upstream looks at it before the container's.
  const evictedWriter = [
    'writer',
    'ephemeralpodfs.limit',
    'Evicted',
    'Pod ephemeral local storage usage exceeds the total limit of containers 5Mi. ',
  ];
  const rows: [boolean | undefined, unknown[][]][] = [
    [undefined, [evictedWriter]],
    [true, [evictedWriter]],
    [false, []],
  ];
  for (const [isolation, want] of rows) {
    const s = summary(2000);
    const used = (bytes: number) => ({ ...fs, usedBytes: bytes });
    s.pods.push({
      podRef: { name: 'writer', namespace: 'ns', uid: 'writer' },
      startTime: T,
      containers: [{ name: 'main', startTime: T, rootfs: used(10 * MiB), logs: used(8192) }],
      'ephemeral-storage': used(10 * MiB + 8192),
    });
    const { m, evicted, conditions } = manager([s], [guaranteed, hog, writer], isolation);
    await m.synchronize();
    assert.deepEqual(conditions, [], 'no pressure');
    assert.deepEqual(
      evicted.map((e) => [e.pod.metadata!.name, e.signal, e.reason, e.message]),
      want,
      `localStorageCapacityIsolation ${isolation}`,
    );
    m.stop();
  }
});

test('the filesystem layout: a runtime filesystem of another size is a dedicated one', () => {
  const s = summary(2000);
  assert.deepEqual(fsLayoutOf(s), { dedicatedImageFs: false, splitContainerImageFs: false });
  s.node.runtime = { imageFs: { ...fs, capacityBytes: 10e9 } };
  assert.deepEqual(fsLayoutOf(s), { dedicatedImageFs: true, splitContainerImageFs: false });
});
