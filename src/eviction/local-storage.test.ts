import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { PodStats } from '../stats/summary-types.ts';
import { localStorageEvictions } from './local-storage.ts';
import type { Candidate } from './ranking.ts';

const T = '2026-01-02T03:04:05Z';
const Mi = 2 ** 20;

const candidate = (
  name: string,
  spec: Partial<NonNullable<Pod['spec']>>,
  s: { volumes?: [string, number][]; total?: number; rootfs?: number; logs?: number } = {},
  annotations?: Record<string, string>,
): Candidate => ({
  pod: { metadata: { name, uid: name, annotations }, spec: { containers: [{ name: 'c' }], ...spec } },
  stats: {
    podRef: { name, namespace: 'default', uid: name },
    startTime: T,
    containers: [{ name: 'c', startTime: T, rootfs: { time: T, usedBytes: s.rootfs ?? 0 }, logs: { time: T, usedBytes: s.logs ?? 0 } }],
    volume: s.volumes?.map(([n, usedBytes]) => ({ time: T, name: n, usedBytes })),
    'ephemeral-storage': s.total !== undefined ? { time: T, usedBytes: s.total } : undefined,
  } satisfies PodStats,
});
const limited = (limit: string) => [{ name: 'c', resources: { limits: { 'ephemeral-storage': limit } } }];

test('local storage limits: emptyDir, pod total, container; one message a pod, 1s grace, critical pods spared', () => {
  const candidates: Candidate[] = [
    candidate('fine', { volumes: [{ name: 'v', emptyDir: { sizeLimit: '100Mi' } }] }, { volumes: [['v', 50 * Mi]] }),
    candidate(
      'emptydir',
      { volumes: [{ name: 'cache', emptyDir: { sizeLimit: '1024Mi' } }], containers: limited('1Mi') },
      { volumes: [['cache', 2048 * Mi]], total: 4096 * Mi, logs: 4096 * Mi },
    ),
    candidate(
      'pod-total',
      { containers: [...limited('100Mi'), { name: 'd', resources: { limits: { 'ephemeral-storage': '50Mi' } } }] },
      { total: 200 * Mi },
    ),
    candidate('container', { containers: limited('10Mi') }, { logs: 6 * Mi, rootfs: 6 * Mi, total: 1 * Mi }),
    candidate('static', { containers: limited('1Mi') }, { total: 100 * Mi }, { 'kubernetes.io/config.source': 'file' }),
    { pod: { metadata: { name: 'no-stats' }, spec: { containers: limited('1') } } },
  ];
  const got = localStorageEvictions(candidates, { dedicatedImageFs: false }).map((e) => [
    e.pod.metadata!.name,
    e.signal,
    e.message,
    e.gracePeriodSeconds,
    e.condition,
  ]);
  assert.deepEqual(got, [
    ['emptydir', 'emptydirfs.limit', 'Usage of EmptyDir volume "cache" exceeds the limit "1Gi". ', 1, undefined],
    ['pod-total', 'ephemeralpodfs.limit', 'Pod ephemeral local storage usage exceeds the total limit of containers 150Mi. ', 1, undefined],
    ['container', 'ephemeralcontainerfs.limit', 'Container c exceeded its local ephemeral storage limit "10Mi". ', 1, undefined],
  ]);
  // With a dedicated imagefs the writable layer does not count against the container's limit.
  assert.deepEqual(localStorageEvictions([candidates[3]!], { dedicatedImageFs: true }), []);
});
