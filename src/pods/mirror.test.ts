import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { mirrorAction, mirrorPodFor } from './mirror.ts';

const st = (hash: string): Pod => ({
  metadata: {
    name: 'web-vm',
    namespace: 'default',
    uid: hash,
    annotations: { 'kubernetes.io/config.hash': hash, 'kubernetes.io/config.source': 'file' },
  },
  spec: { containers: [{ name: 'c', image: 'i' }] },
});
const mirror = (hash: string, extra: Partial<NonNullable<Pod['metadata']>> = {}): Pod => ({
  metadata: { name: 'web-vm', namespace: 'default', uid: 'm-1', annotations: { 'kubernetes.io/config.mirror': hash }, ...extra },
});

test('mirrorAction: create, keep, recreate when stale or deleted, delete when the static pod is gone', () => {
  assert.equal(mirrorAction(st('a'), undefined), 'create');
  assert.equal(mirrorAction(st('a'), mirror('a')), 'keep');
  assert.equal(mirrorAction(st('b'), mirror('a')), 'recreate');
  assert.equal(mirrorAction(st('a'), mirror('a', { deletionTimestamp: '2026-11-22T12:00:00Z' })), 'recreate');
  assert.equal(mirrorAction(undefined, mirror('a')), 'delete');
  assert.equal(mirrorAction(undefined, undefined), 'keep');
});

test('the mirror pod: no UID, the mirror annotation, owned by the node', () => {
  const m = mirrorPodFor(st('a'), { name: 'vm', uid: 'node-uid' });
  assert.equal(m.metadata!.uid, undefined);
  assert.equal(m.metadata!.annotations!['kubernetes.io/config.mirror'], 'a');
  assert.deepEqual(m.metadata!.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'vm', uid: 'node-uid', controller: true }]);
});
