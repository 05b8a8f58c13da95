import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, type ApiClient, type WatchEvent } from './client.ts';
import { watchedObjects } from './object-cache.ts';
import { logger } from '../log/log.ts';

type Cm = { metadata: { name: string; resourceVersion: string }; data?: Record<string, string>; immutable?: boolean };
const cm = (name: string, rv: string, extra: Partial<Cm> = {}): Cm => ({ metadata: { name, resourceVersion: rv }, ...extra });

/** An apiserver holding objects by path; each watch (keyed COLLECTION/NAME) stays open until aborted and can be sent events. */
function fakeApi(objects: Record<string, Cm[]>, failLists = 0, failWatches = 0) {
  const calls: string[] = [];
  const open = new Map<string, (e: WatchEvent<Cm>) => void>();
  const timeouts: number[] = [];
  const api = {
    async get(path: string) {
      calls.push(`list ${path}`);
      if (failLists-- > 0) throw new ApiError(403, 'Forbidden', 'no relationship found between node and this object');
      return { items: objects[path.split('?')[0]!] ?? [], metadata: { resourceVersion: '1' } };
    },
    async watch(path: string, on: (e: WatchEvent<Cm>) => void, signal?: AbortSignal) {
      const base = `${path.split('?')[0]!}/${/metadata\.name%3D([^&]+)/.exec(path)![1]}`;
      calls.push(`watch ${base}`);
      timeouts.push(Number(/timeoutSeconds=(\d+)/.exec(path)![1]));
      if (failWatches-- > 0) throw new ApiError(403, 'Forbidden', 'no relationship found between node and this object');
      open.set(base, on);
      await new Promise((r) => signal?.addEventListener('abort', r));
      open.delete(base);
      calls.push(`unwatch ${base}`);
    },
  } as unknown as ApiClient;
  return { api, calls, open, timeouts };
}

const until = async (cond: () => boolean) => {
  const end = Date.now() + 3000;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
};

const CMS = '/api/v1/namespaces/ns/configmaps';
const CFG = `${CMS}/cfg`;

test('objectCache: one list and one watch per object, however many reads; changes and deletion arrive by the watch', async () => {
  const { api, calls, open } = fakeApi({ [CMS]: [cm('cfg', '5', { data: { k: 'v1' } })] });
  const c = watchedObjects<Cm>(api, 'configmaps', logger('test'));
  const [a, b] = await Promise.all([c.get('ns', 'cfg'), c.get('ns', 'cfg')]);
  assert.deepEqual([a?.data, b?.data], [{ k: 'v1' }, { k: 'v1' }]);
  assert.equal(await c.get('ns', 'missing'), undefined);
  await until(() => open.has(CFG));
  open.get(CFG)!({ type: 'MODIFIED', object: cm('cfg', '6', { data: { k: 'v2' } }) });
  assert.deepEqual((await c.get('ns', 'cfg'))?.data, { k: 'v2' });
  open.get(CFG)!({ type: 'DELETED', object: cm('cfg', '7') });
  assert.equal(await c.get('ns', 'cfg'), undefined);
  c.stop();
  await until(() => calls.includes(`unwatch ${CFG}`));
  assert.deepEqual(
    calls.filter((l) => l.includes('cfg')),
    [`list ${CMS}?fieldSelector=metadata.name%3Dcfg`, `watch ${CFG}`, `unwatch ${CFG}`],
  );
  assert.equal(calls.filter((l) => l.startsWith('list')).length, 2);
});

test("objectCache: a watch asks to be ended after 30-60 min, as upstream's objectCache (MinWatchTimeout 30 min), not a reflector's 5-10", async () => {
  const { api, open, timeouts } = fakeApi({ [CMS]: [cm('cfg', '5')] });
  const c = watchedObjects<Cm>(api, 'configmaps', logger('test'));
  await c.get('ns', 'cfg');
  await until(() => open.has(CFG));
  c.stop();
  assert.equal(timeouts.length, 1);
  assert.ok(timeouts[0]! >= 1800 && timeouts[0]! <= 3600, `timeoutSeconds=${timeouts[0]}`);
});

test('objectCache: an immutable object is not watched and is still served', async () => {
  const { api, calls } = fakeApi({ [CMS]: [cm('frozen', '5', { immutable: true, data: { k: 'v' } })] });
  const c = watchedObjects<Cm>(api, 'configmaps', logger('test'));
  assert.deepEqual((await c.get('ns', 'frozen'))?.data, { k: 'v' });
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual((await c.get('ns', 'frozen'))?.data, { k: 'v' });
  assert.deepEqual(calls, [`list ${CMS}?fieldSelector=metadata.name%3Dfrozen`]);
  c.stop();
});

test('objectCache: an object nobody read for idleMs loses its watch; a later read watches it again', async () => {
  let t = 0;
  const { api, calls, open } = fakeApi({ [CMS]: [cm('cfg', '5')] });
  const c = watchedObjects<Cm>(api, 'configmaps', logger('test'), { idleMs: 1000, sweepEveryMs: 5, now: () => t });
  await c.get('ns', 'cfg');
  await until(() => open.has(CFG));
  t = 1000;
  await until(() => calls.includes(`unwatch ${CFG}`));
  assert.ok(!open.has(CFG));
  t = 1001;
  await c.get('ns', 'cfg');
  assert.equal(calls.filter((l) => l.startsWith('list')).length, 2);
  c.stop();
});

test('objectCache: a first list that keeps failing is an error naming why, after syncWaitMs', async () => {
  const { api } = fakeApi({ [CMS]: [cm('cfg', '5')] }, 100);
  const c = watchedObjects<Cm>(api, 'configmaps', logger('test'), { syncWaitMs: 300 });
  await assert.rejects(c.get('ns', 'cfg'), {
    message: 'failed to sync configmaps cache: no relationship found between node and this object',
  });
  c.stop();
});

test('objectCache: a watch refused (403) for an object nobody read for a resync period is dropped, not retried for good', async () => {
  let t = 0;
  const { api, calls } = fakeApi({ [CMS]: [cm('cfg', '5')] }, 0, 100);
  const c = watchedObjects<Cm>(api, 'configmaps', logger('test'), { now: () => t });
  await c.get('ns', 'cfg');
  await until(() => calls.filter((l) => l.startsWith('watch')).length >= 1);
  // Read within the resync period, a refusal is taken as passing (the authorizer's graph lags a new
  // pod): the watch is tried again 0.8-1 s later. Then nothing reads it (its namespace went): the
  // second refusal drops it, where a third try would have come within 2.9 s.
  t = 100_000;
  await new Promise((r) => setTimeout(r, 3200));
  assert.equal(calls.filter((l) => l.startsWith('watch')).length, 2);
  // A later read starts anew.
  await c.get('ns', 'cfg');
  assert.equal(calls.filter((l) => l.startsWith('list')).length, 2);
  c.stop();
});

test('objectCache: the watch stops when the last pod reading the object is released, not before', async () => {
  const { api, calls, open } = fakeApi({ [CMS]: [cm('cfg', '5')] });
  const c = watchedObjects<Cm>(api, 'configmaps', logger('test'));
  await c.get('ns', 'cfg', 'pod-a');
  await c.get('ns', 'cfg', 'pod-b');
  await until(() => open.has(CFG));
  c.release('pod-a');
  await new Promise((r) => setTimeout(r, 20));
  assert.ok(open.has(CFG), 'pod-b still reads it');
  c.release('pod-b');
  await until(() => calls.includes(`unwatch ${CFG}`));
  assert.ok(!open.has(CFG));
  await c.get('ns', 'cfg', 'pod-c');
  assert.equal(calls.filter((l) => l.startsWith('list')).length, 2, 'a new reader lists it anew');
  c.stop();
});
