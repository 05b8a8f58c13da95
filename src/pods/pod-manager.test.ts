import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { PodState } from './lifecycle.ts';
import { PodManager } from './pod-manager.ts';

const pod = (uid: string, opts: { static?: boolean; name?: string; deleted?: boolean } = {}): Pod => ({
  metadata: {
    uid,
    name: opts.name ?? uid,
    namespace: 'ns',
    annotations: opts.static ? { 'kubernetes.io/config.source': 'file' } : { 'kubernetes.io/config.source': 'api' },
    ...(opts.deleted ? { deletionTimestamp: '2026-12-02T00:00:00Z' } : {}),
  },
});

test('PodManager: what each read question answers for pods in every state', () => {
  const m = new PodManager();
  const rows: [string, PodState, { removed?: boolean; deleted?: boolean }][] = [
    ['syncing', 'syncing', {}],
    ['terminating', 'terminating', {}],
    ['terminated', 'terminated', {}],
    ['removed-but-stopping', 'terminating', { removed: true }],
    ['deleted-syncing', 'syncing', { deleted: true }],
  ];
  for (const [uid, state, o] of rows) {
    const r = m.add(uid, pod(uid, { deleted: o.deleted }), state);
    if (o.removed) {
      r.removed = true;
      r.pod = undefined;
    }
  }
  const uids = (pods: Pod[]) => pods.map((p) => p.metadata!.uid);
  // Upstream's GetActivePods leaves out what the source dropped, even while it is still stopping.
  assert.deepEqual(uids(m.active()), ['syncing', 'terminating', 'deleted-syncing']);
  assert.deepEqual(m.activeUIDs(), ['syncing', 'terminating', 'deleted-syncing']);
  assert.deepEqual(uids(m.running()), ['syncing', 'deleted-syncing']);
  assert.deepEqual(
    uids(m.pods()),
    rows.map(([uid]) => uid),
  );
  assert.deepEqual(
    [...m.states()].map(([uid, s]) => [uid, s.state, s.deleted]),
    [
      ['syncing', 'syncing', false],
      ['terminating', 'terminating', false],
      ['terminated', 'terminated', false],
      ['removed-but-stopping', 'terminating', true],
      ['deleted-syncing', 'syncing', true],
    ],
  );
  assert.deepEqual(
    m.snapshot().map((s) => [s.pod.metadata!.uid, s.desired]),
    rows.map(([uid, , o]) => [uid, !o.removed]),
  );
  assert.equal(m.latest('terminated')?.metadata?.uid, 'terminated');
  assert.equal(m.latest('unknown'), undefined);
  m.delete('terminated');
  assert.equal(m.get('terminated'), undefined);
  assert.equal(m.pods().length, rows.length - 1);
});

test('PodManager: static pods by full name, and whether one of them still runs or stops', () => {
  const m = new PodManager();
  const old = m.add('old', pod('old', { static: true, name: 'web' }), 'terminating');
  m.add('new', pod('new', { static: true, name: 'web' }), 'syncing');
  m.add('api', pod('api', { name: 'web' }), 'syncing');
  assert.ok(old.seq < m.get('new')!.seq, 'records sort in the order they were added');
  assert.deepEqual(
    m.staticPodsNamed('ns/web', 'new').map((r) => r.uid),
    ['old'],
    'an apiserver pod of the same name is not a static pod',
  );
  for (const [except, active] of [
    [undefined, true],
    ['old', true],
    ['new', true],
  ] as const)
    assert.equal(m.staticPodActive('ns/web', except), active, `except ${except}`);
  old.state = 'terminated';
  assert.equal(m.staticPodActive('ns/web', 'new'), false, 'the only other one has terminated');
  assert.equal(m.staticPodActive('ns/other'), false);
});

test('PodManager: the sources are not ready until the apiserver source says so', () => {
  const m = new PodManager();
  assert.equal(m.sourcesReady(), false);
  let synced = false;
  m.sourcesReadyWhen(() => synced);
  assert.equal(m.sourcesReady(), false);
  synced = true;
  assert.equal(m.sourcesReady(), true);
});
