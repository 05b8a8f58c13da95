import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { CrashBackoff, crashBackoffKey, crashLoopBackOffPeriods, fnv64a } from './crash-backoff.ts';

const pod: Pod = { metadata: { name: 'web', namespace: 'shop', uid: 'u1' }, spec: { containers: [] } };
const c: Container = { name: 'a', image: 'busybox:1.36', command: ['sh'] };

test('fnv64a: hash/fnv New64a in hex', () => {
  assert.equal(fnv64a(''), 'cbf29ce484222325');
  assert.equal(fnv64a('a'), 'af63dc4c8601ec8c');
});

test('crashBackoffKey: as GetBackoffKey, a new image or resources give a new key, other fields do not', () => {
  const key = crashBackoffKey(pod, c);
  assert.ok(key.startsWith('u1/a/'));
  const rows: [string, Pod, Container, boolean][] = [
    ['the same container', pod, { ...c }, true],
    ['a new image', pod, { ...c, image: 'nginx:1.27' }, false],
    ['new resources', pod, { ...c, resources: { limits: { cpu: '1' } } }, false],
    ['another container name', pod, { ...c, name: 'b' }, false],
    ['another pod uid', { ...pod, metadata: { ...pod.metadata, uid: 'u2' } }, c, false],
    ['another command (not in upstream key)', pod, { ...c, command: ['true'] }, true],
  ];
  for (const [name, p, x, same] of rows) assert.equal(crashBackoffKey(p, x) === key, same, name);
  const r1 = { ...c, resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1' } } };
  const r2 = { ...c, resources: { requests: { cpu: '1' }, limits: { memory: '1Gi', cpu: '1' } } };
  assert.equal(crashBackoffKey(pod, r1), crashBackoffKey(pod, r2), 'key order does not matter');
});

function clock(start = 1_000_000_000) {
  const t = { now: start };
  return { t, backoff: new CrashBackoff({ now: () => t.now }) };
}

test('CrashBackoff: 10s, doubled on each restart, capped at 5m', () => {
  const { t, backoff } = clock();
  const delays: number[] = [];
  for (let i = 0; i < 8; i++) {
    const finished = t.now;
    backoff.next('k', finished);
    delays.push(backoff.get('k'));
    t.now += 1_000;
    assert.equal(backoff.isInBackOffSince('k', finished), true, `still backing off after ${i} restarts`);
    t.now += backoff.get('k');
    assert.equal(backoff.isInBackOffSince('k', finished), false, `done backing off after ${i} restarts`);
  }
  assert.deepEqual(delays, [10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
});

test('CrashBackoff: a container that finished over 600s after its last restart earns the initial back-off', () => {
  const { t, backoff } = clock();
  for (let i = 0; i < 4; i++) backoff.next('k', t.now);
  assert.equal(backoff.get('k'), 80_000);
  t.now += 601_000;
  assert.equal(backoff.isInBackOffSince('k', t.now), false);
  backoff.next('k', t.now);
  assert.equal(backoff.get('k'), 10_000);
});

test('CrashBackoff: gc drops entries not advanced for 600s (an old image key), forget drops a pod', () => {
  const { t, backoff } = clock();
  backoff.next('u1/a/old', t.now);
  t.now += 300_000;
  backoff.next('u1/a/new', t.now);
  backoff.next('u2/a/x', t.now);
  t.now += 300_001;
  backoff.gc();
  assert.equal(backoff.get('u1/a/old'), 0);
  assert.equal(backoff.size, 2);
  backoff.forget('u1/');
  assert.equal(backoff.size, 1);
  assert.equal(backoff.get('u2/a/x'), 10_000);
});

test('crashLoopBackOffPeriods: as newCrashLoopBackOff, the configured cap with KubeletCrashLoopBackOffMax', () => {
  const rows: [string, Record<string, boolean>, number | undefined, { initialMs: number; maxMs: number }][] = [
    ['the release defaults (gate on, 300 s)', {}, 300_000, { initialMs: 10_000, maxMs: 300_000 }],
    ['a shorter cap', {}, 60_000, { initialMs: 10_000, maxMs: 60_000 }],
    ['a cap below the initial delay lowers it too', {}, 2_000, { initialMs: 2_000, maxMs: 2_000 }],
    ['gate off: upstream constants', { KubeletCrashLoopBackOffMax: false }, undefined, { initialMs: 10_000, maxMs: 300_000 }],
    [
      'ReduceDefaultCrashLoopBackOffDecay alone',
      { KubeletCrashLoopBackOffMax: false, ReduceDefaultCrashLoopBackOffDecay: true },
      undefined,
      { initialMs: 1_000, maxMs: 60_000 },
    ],
    [
      'ReduceDefaultCrashLoopBackOffDecay with the cap: the cap wins',
      { ReduceDefaultCrashLoopBackOffDecay: true },
      300_000,
      { initialMs: 1_000, maxMs: 300_000 },
    ],
  ];
  for (const [name, featureGates, max, want] of rows)
    assert.deepEqual(
      crashLoopBackOffPeriods({ featureGates, crashLoopBackOff: max === undefined ? {} : { maxContainerRestartPeriodMs: max } }),
      want,
      name,
    );
});

test('CrashBackoff with a configured cap: doubles up to it', () => {
  const t = { now: 1_000_000_000 };
  const backoff = new CrashBackoff({
    now: () => t.now,
    ...crashLoopBackOffPeriods({ featureGates: {}, crashLoopBackOff: { maxContainerRestartPeriodMs: 30_000 } }),
  });
  const delays: number[] = [];
  for (let i = 0; i < 4; i++) {
    backoff.next('k', t.now);
    delays.push(backoff.get('k'));
    t.now += backoff.get('k') + 1;
  }
  assert.deepEqual(delays, [10_000, 20_000, 30_000, 30_000]);
});
