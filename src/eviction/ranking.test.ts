import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { ContainerStats, PodStats } from '../stats/summary-types.ts';
import { diskMeasure, podDiskUsage, rankForEviction, type Candidate } from './ranking.ts';
import type { Signal } from './types.ts';

const T = '2026-01-02T03:04:05Z';
const Mi = 2 ** 20;
const one = { dedicatedImageFs: false, splitContainerImageFs: false };
const image = { dedicatedImageFs: true, splitContainerImageFs: false };

const pod = (
  name: string,
  o: { priority?: number; memory?: string; storage?: string; volumes?: NonNullable<Pod['spec']>['volumes'] } = {},
): Pod => ({
  metadata: { name, uid: name },
  spec: {
    priority: o.priority,
    volumes: o.volumes,
    containers: [
      {
        name: 'c',
        resources: { requests: { ...(o.memory ? { memory: o.memory } : {}), ...(o.storage ? { 'ephemeral-storage': o.storage } : {}) } },
      },
    ],
  },
});
const stats = (
  name: string,
  o: { ws?: number; procs?: number; rootfs?: number; logs?: number; rootInodes?: number; volumes?: [string, number][] } = {},
): PodStats => {
  const c: ContainerStats = {
    name: 'c',
    startTime: T,
    ...(o.rootfs !== undefined ? { rootfs: { time: T, usedBytes: o.rootfs, inodesUsed: o.rootInodes ?? 0 } } : {}),
    ...(o.logs !== undefined ? { logs: { time: T, usedBytes: o.logs, inodesUsed: 1 } } : {}),
  };
  return {
    podRef: { name, namespace: 'default', uid: name },
    startTime: T,
    containers: [c],
    memory: o.ws !== undefined ? { time: T, workingSetBytes: o.ws } : undefined,
    process_stats: o.procs !== undefined ? { process_count: o.procs } : undefined,
    volume: o.volumes?.map(([n, used]) => ({ time: T, name: n, usedBytes: used, inodesUsed: 0 })),
  };
};
const names = (cs: Candidate[]) => cs.map((c) => c.pod.metadata!.name);

test('memory pressure: no stats first, then over request by priority, then usage above request', () => {
  const candidates: Candidate[] = [
    { pod: pod('within-request', { memory: '200Mi' }), stats: stats('within-request', { ws: 150 * Mi }) },
    { pod: pod('over-high-prio', { priority: 1000 }), stats: stats('over-high-prio', { ws: 500 * Mi }) },
    { pod: pod('over-small'), stats: stats('over-small', { ws: 10 * Mi }) },
    { pod: pod('over-big', { memory: '100Mi' }), stats: stats('over-big', { ws: 400 * Mi }) },
    { pod: pod('no-stats', { priority: 5000 }) },
    { pod: pod('within-less', { memory: '300Mi' }), stats: stats('within-less', { ws: 100 * Mi }) },
  ];
  assert.deepEqual(names(rankForEviction(candidates, 'memory.available', one)), [
    'no-stats',
    'over-big',
    'over-small',
    'over-high-prio',
    'within-request',
    'within-less',
  ]);
  assert.deepEqual(names(rankForEviction(candidates, 'allocatableMemory.available', one)), [
    'no-stats',
    'over-big',
    'over-small',
    'over-high-prio',
    'within-request',
    'within-less',
  ]);
});

test('pid pressure: priority, then process count', () => {
  const candidates: Candidate[] = [
    { pod: pod('few'), stats: stats('few', { procs: 3 }) },
    { pod: pod('important', { priority: 10 }), stats: stats('important', { procs: 900 }) },
    { pod: pod('many'), stats: stats('many', { procs: 300 }) },
  ];
  assert.deepEqual(names(rankForEviction(candidates, 'pid.available', one)), ['many', 'few', 'important']);
});

test('disk pressure: over ephemeral-storage request, priority, then usage above request; what counts follows the layout', () => {
  const candidates: Candidate[] = [
    { pod: pod('big-layer', { storage: '1Gi' }), stats: stats('big-layer', { rootfs: 900 * Mi, logs: 10 * Mi }) },
    { pod: pod('chatty', { storage: '1Gi' }), stats: stats('chatty', { rootfs: 1 * Mi, logs: 500 * Mi }) },
    {
      pod: pod('scratch', { storage: '100Mi', volumes: [{ name: 'tmp', emptyDir: {} }] }),
      stats: stats('scratch', { rootfs: 0, logs: 0, volumes: [['tmp', 300 * Mi]] }),
    },
  ];
  // One filesystem: everything counts; only scratch is over its request.
  assert.deepEqual(names(rankForEviction(candidates, 'nodefs.available', one)), ['scratch', 'big-layer', 'chatty']);
  // Dedicated imagefs: the node's filesystem holds logs and volumes; the imagefs writable layers.
  assert.deepEqual(names(rankForEviction(candidates, 'nodefs.available', image)), ['scratch', 'chatty', 'big-layer']);
  // None over its request on the imagefs: the least headroom under the request goes first.
  assert.deepEqual(names(rankForEviction(candidates, 'imagefs.available', image)), ['scratch', 'big-layer', 'chatty']);
});

test('inode pressure: any inode use exceeds the (absent) request', () => {
  const candidates: Candidate[] = [
    { pod: pod('none'), stats: stats('none', { rootfs: 0, rootInodes: 0 }) },
    { pod: pod('some', { priority: 7 }), stats: stats('some', { rootfs: 0, rootInodes: 10 }) },
    { pod: pod('lots', { priority: 7 }), stats: stats('lots', { rootfs: 0, rootInodes: 5000 }) },
  ];
  assert.deepEqual(names(rankForEviction(candidates, 'nodefs.inodesFree', one)), ['lots', 'some', 'none']);
});

test('podDiskUsage: container layers and logs, local volumes but not memory-backed ones', () => {
  const p = pod('p', {
    volumes: [
      { name: 'scratch', emptyDir: {} },
      { name: 'shm', emptyDir: { medium: 'Memory' } },
      { name: 'host', hostPath: { path: '/x' } },
      { name: 'cfg', configMap: { name: 'c' } },
    ],
  });
  const s = stats('p', {
    rootfs: 100,
    logs: 10,
    rootInodes: 4,
    volumes: [
      ['scratch', 1000],
      ['shm', 50_000],
      ['host', 7],
      ['cfg', 3],
    ],
  });
  assert.deepEqual(podDiskUsage(s, p, ['root', 'logs', 'localVolumeSource']), { bytes: 1120, inodes: 5 });
  assert.deepEqual(podDiskUsage(s, p, ['logs']), { bytes: 10, inodes: 1 });
  assert.deepEqual(podDiskUsage(s, p, ['images']), { bytes: 0, inodes: 0 });
});

test('diskMeasure per layout', () => {
  const split = { dedicatedImageFs: true, splitContainerImageFs: true };
  const cases: [Signal, typeof one, string[] | undefined, string?][] = [
    ['memory.available', one, undefined],
    ['nodefs.available', one, ['images', 'root', 'logs', 'localVolumeSource'], 'ephemeral-storage'],
    ['containerfs.inodesFree', one, ['images', 'root', 'logs', 'localVolumeSource'], 'inodes'],
    ['nodefs.inodesFree', image, ['logs', 'localVolumeSource'], 'inodes'],
    ['containerfs.available', image, ['root', 'images'], 'ephemeral-storage'],
    ['imagefs.available', split, ['images'], 'ephemeral-storage'],
    ['containerfs.available', split, ['logs', 'localVolumeSource', 'root'], 'ephemeral-storage'],
  ];
  for (const [signal, layout, measure, resource] of cases) {
    assert.deepEqual(diskMeasure(signal, layout), measure && { measure, resource }, `${signal} ${JSON.stringify(layout)}`);
  }
});
