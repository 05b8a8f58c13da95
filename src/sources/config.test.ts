import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import { PodConfig, podOperation, route, withLocalAnnotations } from './config.ts';
import { rfc3339NanoLocal } from '../apiserver/time.ts';

const pod = (
  uid: string,
  o: {
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    image?: string;
    phase?: string;
    rv?: string;
    deleting?: boolean;
  } = {},
): Pod => ({
  metadata: {
    name: `p-${uid}`,
    namespace: 'ns',
    uid,
    resourceVersion: o.rv ?? '1',
    labels: o.labels,
    annotations: o.annotations,
    ...(o.deleting ? { deletionTimestamp: '2026-11-24T20:00:00Z', deletionGracePeriodSeconds: 30 } : {}),
  },
  spec: { containers: [{ name: 'c', image: o.image ?? 'busybox' }] },
  status: o.phase ? { phase: o.phase } : {},
});

test('podOperation: upstream checkAndUpdatePod', () => {
  const rows: [string, Pod | undefined, Pod | undefined, string | undefined][] = [
    ['new', undefined, pod('a'), 'ADD'],
    ['gone', pod('a'), undefined, 'REMOVE'],
    ['never seen, gone', undefined, undefined, undefined],
    ['only the resourceVersion', pod('a'), pod('a', { rv: '2' }), undefined],
    ['the spec', pod('a'), pod('a', { image: 'nginx' }), 'UPDATE'],
    ['a label', pod('a'), pod('a', { labels: { x: 'y' } }), 'UPDATE'],
    ['an annotation', pod('a'), pod('a', { annotations: { x: 'y' } }), 'UPDATE'],
    ['deletion requested', pod('a'), pod('a', { deleting: true }), 'DELETE'],
    ['a spec change while deleting', pod('a', { deleting: true }), pod('a', { deleting: true, image: 'nginx' }), 'DELETE'],
    ['only the status', pod('a'), pod('a', { phase: 'Running' }), 'RECONCILE'],
    ['the spec and the status', pod('a'), pod('a', { phase: 'Running', image: 'nginx' }), 'UPDATE'],
  ];
  for (const [name, prev, next, want] of rows) assert.equal(podOperation(prev, next), want, name);
});

test('route: mirror pods only from the apiserver, file and URL pods are static', () => {
  const mirror = pod('m', { annotations: { 'kubernetes.io/config.mirror': 'h' } });
  assert.equal(route('api', pod('a')), 'pod');
  assert.equal(route('api', mirror), 'mirror');
  assert.equal(route('file', pod('a')), 'static');
  assert.equal(route('http', pod('a')), 'static');
});

test("PodConfig: each source's reports reach the workers, the mirror manager and the start-up tracker as upstream routes them", () => {
  const calls: string[] = [];
  const noop = () => {};
  const config = new PodConfig({
    pods: {
      update: (uid, p) => calls.push(`worker ${uid} ${p ? p.spec!.containers[0]!.image : 'gone'}`),
      reconcile: (uid, _p, resync) => calls.push(`reconcile ${uid}${resync ? ' and sync' : ''}`),
    },
    mirrors: {
      observe: (m) => calls.push(`mirror ${m.metadata!.uid}`),
      forget: (uid) => calls.push(`forget mirror ${uid}`),
      setStatic: (p) => calls.push(`static ${p.metadata!.uid}`),
      removeStatic: (uid) => calls.push(`unstatic ${uid}`),
    },
    watch: { observedOnWatch: (p) => calls.push(`watch ${p.metadata!.uid}`), forget: (uid) => calls.push(`unwatch ${uid}`) },
    log: { info: noop, warn: noop, error: noop, v: noop } as unknown as Logger,
    changed: {
      added: (p) => calls.push(`added ${p.metadata!.uid}`),
      updated: (before, now) => calls.push(`updated ${before.spec!.containers[0]!.image} -> ${now.spec!.containers[0]!.image}`),
      removed: (p) => calls.push(`removed ${p.metadata!.uid}`),
    },
  });
  const api = config.source('api');
  const files = config.source('file');
  api.update(pod('a'));
  api.update(pod('a', { rv: '2' })); // nothing that matters changed
  api.update(pod('a', { rv: '3', phase: 'Running' }));
  api.update(pod('a', { rv: '4', phase: 'Running', image: 'nginx' }));
  api.update(pod('m', { annotations: { 'kubernetes.io/config.mirror': 'h' } }));
  files.update(pod('s'));
  api.remove('m');
  api.remove('a');
  api.remove('a'); // twice: once is enough
  files.remove('s');
  files.remove('never');
  assert.deepEqual(calls, [
    'watch a',
    'worker a busybox',
    'added a',
    'watch a',
    'reconcile a',
    'watch a',
    'worker a nginx',
    // A spec change, with the version before, once the workers have the new one (upstream's HandlePodUpdates).
    'updated busybox -> nginx',
    // A mirror pod is the mirror pod manager's alone.
    'mirror m',
    'worker s busybox',
    'static s',
    'added s',
    'forget mirror m',
    'unwatch a',
    'worker a gone',
    'removed a',
    'worker s gone',
    'unstatic s',
    'removed s',
  ]);
});

test("PodConfig: every pod carries its source and when it was first seen, kept across updates (upstream's local annotations)", () => {
  const got: Pod[] = [];
  const noop = () => {};
  const config = new PodConfig({
    pods: { update: (_uid, p) => p && got.push(p), reconcile: noop },
    mirrors: { observe: noop, forget: noop, setStatic: noop, removeStatic: noop },
    log: { info: noop, warn: noop, error: noop, v: noop } as unknown as Logger,
  });
  const api = config.source('api');
  api.update(pod('a', { annotations: { team: 'x' } }));
  const first = got[0]!.metadata!.annotations!;
  assert.equal(first['kubernetes.io/config.source'], 'api');
  assert.match(first['kubernetes.io/config.seen']!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
  assert.equal(first.team, 'x');
  api.update(pod('a', { annotations: { team: 'y' }, rv: '2' }));
  assert.equal(got.length, 2, 'a change of annotations is an UPDATE');
  assert.equal(got[1]!.metadata!.annotations!['kubernetes.io/config.seen'], first['kubernetes.io/config.seen'], 'first seen stays');
  api.update(pod('a', { annotations: { team: 'y' }, rv: '3' }));
  assert.equal(got.length, 2, 'the local annotations make no UPDATE of their own');
});

test('withLocalAnnotations and rfc3339NanoLocal: the time as Go formats RFC3339Nano in the host zone', () => {
  const p = withLocalAnnotations(pod('s', { annotations: { 'kubernetes.io/config.source': 'file' } }), 'file', undefined, () => 'T');
  assert.deepEqual(p.metadata!.annotations, { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.seen': 'T' });
  const t = new Date(Date.UTC(2026, 11, 6, 9, 5, 1, 120));
  assert.equal(rfc3339NanoLocal(t, 0), '2026-12-06T09:05:01.12Z');
  assert.equal(rfc3339NanoLocal(t, 60), '2026-12-06T10:05:01.12+01:00');
  assert.equal(rfc3339NanoLocal(t, -210), '2026-12-06T05:35:01.12-03:30');
  assert.equal(rfc3339NanoLocal(new Date(Date.UTC(2026, 0, 1)), 0), '2026-01-01T00:00:00Z', 'no fraction when it is zero');
});
