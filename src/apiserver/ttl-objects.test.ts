import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from './client.ts';
import { fetchedObjects, isOlder, objectTTLMs, ttlCachedObjects } from './ttl-objects.ts';

type Obj = { metadata: { name: string; resourceVersion: string }; data?: Record<string, string> };

/** An apiserver of one namespace: GETs counted, answers set by the test. */
function fakeApi() {
  const objects = new Map<string, Obj | Error>();
  const gets: string[] = [];
  const api = {
    get: async <T>(path: string): Promise<T> => {
      gets.push(path);
      const o = objects.get(path.split('/').pop()!);
      if (o === undefined) throw new ApiError(404, 'NotFound', 'not found');
      if (o instanceof Error) throw o;
      return structuredClone(o) as T;
    },
  };
  return { api, objects, gets };
}
const obj = (name: string, rv: string, v = rv): Obj => ({ metadata: { name, resourceVersion: rv }, data: { v } });

test('objectTTLMs: the Node annotation in ms, else undefined (the one-minute default)', () => {
  const node = (ttl?: string) => ({
    metadata: { annotations: (ttl === undefined ? {} : { 'node.alpha.kubernetes.io/ttl': ttl }) as Record<string, string> },
  });
  assert.equal(objectTTLMs(undefined), undefined);
  assert.equal(objectTTLMs(node()), undefined);
  assert.equal(objectTTLMs(node('0')), 0);
  assert.equal(objectTTLMs(node('15')), 15_000);
  assert.equal(objectTTLMs(node('soon')), undefined, 'not an integer: as if absent (strconv.Atoi fails)');
});

test('isOlder: by resourceVersion, only when both are integers', () => {
  assert.equal(isOlder(obj('a', '5'), obj('a', '7')), true);
  assert.equal(isOlder(obj('a', '7'), obj('a', '5')), false);
  assert.equal(isOlder(obj('a', '5'), undefined), false);
  assert.equal(isOlder(obj('a', 'x'), obj('a', '7')), false);
});

test('Cache: read again only after the TTL; a failed read keeps the last object; NotFound is kept; released with the last pod', async () => {
  const { api, objects, gets } = fakeApi();
  let now = 0,
    ttl: number | undefined;
  const c = ttlCachedObjects<Obj>(
    api,
    'configmaps',
    () => ttl,
    () => now,
  );
  objects.set('cfg', obj('cfg', '1'));
  assert.equal((await c.get('ns', 'cfg', 'pod-a'))?.data?.v, '1');
  objects.set('cfg', obj('cfg', '2'));
  now = 59_999;
  assert.equal((await c.get('ns', 'cfg', 'pod-a'))?.data?.v, '1', 'fresh for a minute by default');
  assert.equal(gets.length, 1);
  now = 60_000;
  assert.equal((await c.get('ns', 'cfg', 'pod-b'))?.data?.v, '2', 'read again after the minute');
  ttl = 0;
  objects.set('cfg', new ApiError(503, 'ServiceUnavailable', 'unavailable'));
  assert.equal((await c.get('ns', 'cfg'))?.data?.v, '2', 'the apiserver fails: the last object stands');
  objects.set('cfg', obj('cfg', '1', 'stale'));
  assert.equal((await c.get('ns', 'cfg'))?.data?.v, '2', 'an older answer (a lagging cache) does not replace a newer object');
  objects.delete('cfg');
  assert.equal(await c.get('ns', 'cfg'), undefined, 'deleted: NotFound');
  const before = gets.length;
  c.release('pod-a');
  ttl = 60_000;
  assert.equal(await c.get('ns', 'cfg'), undefined, 'pod-b still reads it: the NotFound is kept');
  assert.equal(gets.length, before);
  c.release('pod-b');
  objects.set('cfg', obj('cfg', '9'));
  assert.equal((await c.get('ns', 'cfg'))?.data?.v, '9', 'no pod read it any more: dropped, read afresh');
  objects.set('new', new ApiError(500, 'InternalError', 'boom'));
  await assert.rejects(c.get('ns', 'new'), { message: 'boom' }, 'nothing to fall back on: the failure is the answer');
});

test('Get: every read is a GET; NotFound is undefined', async () => {
  const { api, objects, gets } = fakeApi();
  const c = fetchedObjects<Obj>(api, 'secrets');
  objects.set('s', obj('s', '1'));
  await c.get('ns', 's', 'pod');
  await c.get('ns', 's', 'pod');
  assert.equal(gets.length, 2);
  assert.equal(await c.get('ns', 'missing'), undefined);
});
