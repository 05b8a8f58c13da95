import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { MirrorPods, mirrorAction, mirrorPodFor } from './mirror.ts';
import { ApiError, type ApiClient } from '../apiserver/client.ts';
import type { Logger } from '../log/log.ts';
import { CONFIG_HASH, CONFIG_MIRROR } from '../podutil/podutil.ts';

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

test('a create that finds a stale pod of the name keeps it as the mirror seen, and the next beat replaces it (upstream CreateMirrorPod)', async () => {
  const stat: Pod = {
    metadata: { name: 'web-n1', namespace: 'kube-system', uid: 'static-2', annotations: { [CONFIG_HASH]: 'new' } },
    spec: { containers: [{ name: 'c', image: 'i' }] },
  };
  let inApi: Pod | undefined = {
    metadata: { name: 'web-n1', namespace: 'kube-system', uid: 'm1', annotations: { [CONFIG_MIRROR]: 'old' } },
  };
  const calls: string[] = [];
  const api = {
    create: async (_path: string, body: Pod) => {
      calls.push('create');
      if (inApi) throw new ApiError(409, 'AlreadyExists', 'pods "web-n1" already exists');
      inApi = { ...body, metadata: { ...body.metadata, uid: 'm2' } };
      return inApi;
    },
    get: async () => {
      calls.push('get');
      return inApi;
    },
    delete: async (_path: string, opts: { preconditions: { uid: string } }) => {
      calls.push(`delete ${opts.preconditions.uid}`);
      inApi = undefined;
      return {};
    },
  } as unknown as ApiClient;
  const warnings: string[] = [];
  const log = { info: () => {}, warn: (m: string) => warnings.push(m), error: () => {}, v: () => {} } as unknown as Logger;
  const onMirror: string[] = [];
  const mirrors = new MirrorPods(
    api,
    () => ({ name: 'n1', uid: 'node-uid' }),
    log,
    (uid) => onMirror.push(uid),
  );
  // The watch has not shown the stale mirror (a delete was thought done): only the static pod is known.
  mirrors.setStatic(stat);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(calls, ['create', 'get']);
  assert.deepEqual(warnings, ['Failed to reconcile mirror pod, will retry']);
  assert.equal(mirrors.mirror(stat), undefined, 'the stale pod is not the mirror');
  // The next beat deletes the stale pod by its UID and creates the mirror.
  await mirrors.reconcile('kube-system/web-n1');
  assert.deepEqual(calls.slice(2), ['delete m1', 'create']);
  assert.equal(mirrors.mirror(stat)?.metadata?.uid, 'm2');
  assert.deepEqual(onMirror, ['static-2']);
});

test('a mirror the apiserver answers 404 for stays known until the watch says it is gone: the next beat deletes it again', async () => {
  const calls: string[] = [];
  const answers = [new ApiError(404, 'NotFound', 'the server could not find the requested resource')];
  const api = {
    delete: async (_path: string, opts: { preconditions: { uid: string } }) => {
      calls.push(`delete ${opts.preconditions.uid}`);
      const e = answers.shift();
      if (e) throw e;
      return {};
    },
  } as unknown as ApiClient;
  const log = { info: () => {}, warn: () => {}, error: () => {}, v: () => {} } as unknown as Logger;
  const mirrors = new MirrorPods(
    api,
    () => ({ name: 'vm', uid: 'node-uid' }),
    log,
    () => {},
  );
  // A mirror whose static pod was removed while the apiserver was down; it answers 404 as it starts.
  mirrors.observe(mirror('h1'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(calls, ['delete m-1']);
  await mirrors.reconcile('default/web-vm');
  assert.deepEqual(calls, ['delete m-1', 'delete m-1'], 'deleted again: this time it took');
  await mirrors.reconcile('default/web-vm');
  assert.equal(calls.length, 2, 'a successful delete is the end of it');
});
