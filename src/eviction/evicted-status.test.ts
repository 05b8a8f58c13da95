import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { ContainerStats, PodStats } from '../stats/summary-types.ts';
import { chooseEviction, disruptionCondition, evictionGracePeriodSeconds, evictionMessage } from './evicted-status.ts';
import type { Observations } from './observations.ts';
import type { Candidate } from './ranking.ts';
import { parseThresholds } from './thresholds.ts';
import type { Threshold } from './types.ts';

const T = '2026-01-02T03:04:05Z';
const Mi = 2 ** 20,
  Gi = 2 ** 30;
const memThreshold = parseThresholds({ evictionHard: { 'memory.available': '100Mi' }, enforceNodeAllocatable: [] });
const memObs: Observations = { 'memory.available': { available: 12 * 1024, capacity: 8 * Gi } };

const pod = (containers: Container[], extra: Partial<Pod> = {}): Pod => ({
  metadata: { name: 'p', uid: 'u' },
  spec: { containers },
  ...extra,
});
const cstats = (name: string, ws?: number, rootfs?: number, logs?: number): ContainerStats => ({
  name,
  startTime: T,
  ...(ws !== undefined ? { memory: { time: T, workingSetBytes: ws } } : {}),
  ...(rootfs !== undefined ? { rootfs: { time: T, usedBytes: rootfs } } : {}),
  ...(logs !== undefined ? { logs: { time: T, usedBytes: logs } } : {}),
});
const pstats = (containers: ContainerStats[]): PodStats => ({
  podRef: { name: 'p', namespace: 'default', uid: 'u' },
  startTime: T,
  containers,
});

test('memory: the threshold, what was left, and the containers over their requests', () => {
  const p = pod(
    [{ name: 'x' }, { name: 'y', resources: { requests: { memory: '64Mi' } } }, { name: 'z', resources: { requests: { memory: '1Gi' } } }],
    {
      spec: {
        containers: [
          { name: 'x' },
          { name: 'y', resources: { requests: { memory: '64Mi' } } },
          { name: 'z', resources: { requests: { memory: '1Gi' } } },
        ],
        initContainers: [{ name: 'init', resources: { requests: { memory: '1000' } } }],
      },
    },
  );
  const got = evictionMessage(
    'memory',
    { pod: p, stats: pstats([cstats('x', Mi), cstats('y', 100 * Mi), cstats('z', 10 * Mi), cstats('init', 1500), cstats('gone', 5 * Gi)]) },
    memThreshold,
    memObs,
  );
  assert.equal(
    got.message,
    'The node was low on resource: memory. Threshold quantity: 100Mi, available: 12Ki. ' +
      'Container x was using 1Mi, request is 0, has larger consumption of memory. ' +
      'Container y was using 100Mi, request is 64Mi, has larger consumption of memory. ' +
      'Container init was using 1500, request is 1k, has larger consumption of memory. ',
  );
  assert.deepEqual(got.annotations, {
    offending_containers: 'x,y,init',
    offending_containers_usage: '1Mi,100Mi,1500',
    starved_resource: 'memory',
  });
});

test('memory with pod-level resources: the pod against its pod-level request first, then the containers', () => {
  const p = pod([{ name: 'a' }, { name: 'b', resources: { requests: { memory: '10Mi' } } }]);
  (p.spec as { resources?: object }).resources = { requests: { memory: '100Mi' }, limits: { memory: '200Mi' } };
  const stats = { ...pstats([cstats('a', 20 * Mi), cstats('b', 30 * Mi)]), memory: { time: T, workingSetBytes: 50 * Mi } };
  const got = evictionMessage('memory', { pod: p, stats }, memThreshold, memObs);
  assert.equal(
    got.message,
    'The node was low on resource: memory. Threshold quantity: 100Mi, available: 12Ki. ' +
      'Pod p was using 50Mi, request is 100Mi, has larger consumption of memory. ' +
      'Container a was using 20Mi, request is 0, has larger consumption of memory. ' +
      'Container b was using 30Mi, request is 10Mi, has larger consumption of memory. ',
  );
  assert.deepEqual(got.annotations, {
    offending_pod: 'p',
    offending_pod_usage: '50Mi',
    offending_containers: 'a,b',
    offending_containers_usage: '20Mi,30Mi',
    starved_resource: 'memory',
  });
  // Only memory, and only with pod stats for memory.
  assert.ok(!evictionMessage('memory', { pod: p, stats: pstats([]) }, memThreshold, memObs).message.includes('Pod p'));
});

test('disk: a percentage threshold prints as the bytes it came to; usage is writable layer plus logs', () => {
  const ts = parseThresholds({ evictionHard: { 'nodefs.available': '10%', 'memory.available': '1Gi' } });
  const obs: Observations = {
    'nodefs.available': { available: 512 * Mi, capacity: 10 * Gi },
    'memory.available': { available: 4 * Gi, capacity: 8 * Gi },
  };
  const p = pod([{ name: 'w', resources: { requests: { 'ephemeral-storage': '100Mi' } } }, { name: 'nologs' }]);
  const got = evictionMessage(
    'ephemeral-storage',
    { pod: p, stats: pstats([cstats('w', 0, 200 * Mi, 56 * Mi), cstats('nologs', 0, 900 * Mi)]) },
    ts,
    obs,
  );
  assert.equal(
    got.message,
    'The node was low on resource: ephemeral-storage. Threshold quantity: 1073741840, available: 512Mi. ' +
      'Container w was using 256Mi, request is 100Mi, has larger consumption of ephemeral-storage. ',
  );
});

test('inodes and pids print as counts; without pod stats only the node part, and no annotations', () => {
  const ts = parseThresholds({ evictionHard: { 'nodefs.inodesFree': '5%', 'pid.available': '1000' } });
  const obs: Observations = {
    'nodefs.inodesFree': { available: 1_500_000, capacity: 100_000_000 },
    'pid.available': { available: 2000, capacity: 4_194_304 },
  };
  const p = pod([{ name: 'c' }]);
  assert.deepEqual(evictionMessage('inodes', { pod: p }, ts, obs), {
    message: 'The node was low on resource: inodes. Threshold quantity: 5000000, available: 1500k. ',
    annotations: {},
  });
  assert.equal(
    evictionMessage('pids', { pod: p }, ts, obs).message,
    'The node was low on resource: pids. Threshold quantity: 1k, available: 2k. ',
  );
  // No threshold with an observation: no threshold sentence.
  assert.equal(evictionMessage('memory', { pod: p }, ts, obs).message, 'The node was low on resource: memory. ');
});

test("grace period: 1s on a hard threshold; on a soft one the max, or the pod's own when shorter", () => {
  const [hard, soft] = parseThresholds({
    evictionHard: { 'memory.available': '100Mi' },
    evictionSoft: { 'memory.available': '1Gi' },
    evictionSoftGracePeriod: { 'memory.available': '1m' },
    enforceNodeAllocatable: [],
  }) as [Threshold, Threshold];
  const withGrace = (s?: number): Pod => ({ spec: { containers: [], terminationGracePeriodSeconds: s } });
  const cases: [string, Threshold, Pod, number, number][] = [
    ['hard', hard, withGrace(300), 30, 1],
    ['soft, pod silent', soft, withGrace(), 30, 30],
    ['soft, pod shorter', soft, withGrace(10), 30, 10],
    ['soft, pod longer', soft, withGrace(60), 30, 30],
    ['soft, max 0 (the default)', soft, withGrace(60), 0, 0],
  ];
  for (const [name, t, p, max, want] of cases) assert.equal(evictionGracePeriodSeconds(t, p, max), want, name);
});

test('chooseEviction: the first pod that is not critical, with its condition', () => {
  const mk = (name: string, meta: Partial<NonNullable<Pod['metadata']>> = {}, priority?: number): Candidate => ({
    pod: { metadata: { name, uid: name, ...meta }, spec: { containers: [{ name: 'c' }], priority } },
    stats: pstats([cstats('c', 200 * Mi)]),
  });
  const ranked = [
    mk('static', { annotations: { 'kubernetes.io/config.source': 'file' } }),
    mk('mirror', { annotations: { 'kubernetes.io/config.mirror': 'abc' } }),
    mk('dns', {}, 2_000_000_000),
    mk('victim', { generation: 3 }),
    mk('next'),
  ];
  const e = chooseEviction(ranked, {
    threshold: memThreshold[0]!,
    resource: 'memory',
    thresholds: memThreshold,
    observations: memObs,
    maxPodGracePeriodSeconds: 30,
  });
  const message =
    'The node was low on resource: memory. Threshold quantity: 100Mi, available: 12Ki. Container c was using 200Mi, request is 0, has larger consumption of memory. ';
  assert.deepEqual(e, {
    pod: ranked[3]!.pod,
    gracePeriodSeconds: 1,
    reason: 'Evicted',
    message,
    signal: 'memory.available',
    annotations: { offending_containers: 'c', offending_containers_usage: '200Mi', starved_resource: 'memory' },
    condition: { type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message, observedGeneration: 3 },
  });
  assert.equal(
    chooseEviction(ranked.slice(0, 3), {
      threshold: memThreshold[0]!,
      resource: 'memory',
      thresholds: memThreshold,
      observations: memObs,
      maxPodGracePeriodSeconds: 30,
    }),
    undefined,
  );
});

test('the DisruptionTarget condition of an evicted pod', () => {
  assert.deepEqual(disruptionCondition({}, 'm'), {
    type: 'DisruptionTarget',
    status: 'True',
    reason: 'TerminationByKubelet',
    message: 'm',
  });
});
