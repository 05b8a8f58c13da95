import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, type ApiClient, type WatchEvent } from './client.ts';
import { reflector } from './reflector.ts';
import { logger } from '../log/log.ts';

type Obj = { metadata: { name: string; resourceVersion: string } };
const obj = (name: string, rv: string): Obj => ({ metadata: { name, resourceVersion: rv } });

/** An apiserver whose watches follow a script: each entry is one watch call's fate. */
function fakeApi(script: ((on: (e: WatchEvent<Obj>) => void) => Promise<void>)[], watchList = false) {
  const calls: string[] = [];
  let lists = 0;
  const api = {
    async get() {
      lists++;
      calls.push(`list`);
      return { items: [obj('a', String(lists * 10))], metadata: { resourceVersion: String(lists * 10) } };
    },
    async watch(path: string, on: (e: WatchEvent<Obj>) => void, signal?: AbortSignal) {
      calls.push(
        path.includes('sendInitialEvents=true')
          ? `watch-list ${new URLSearchParams(path.split('?')[1]).get('resourceVersionMatch')} rv=${/resourceVersion=(\d*)/.exec(path)![1]}`
          : `watch rv=${/resourceVersion=(\d+)/.exec(path)![1]}`,
      );
      const step = script.shift();
      if (step) return step(on);
      await new Promise((r) => signal?.addEventListener('abort', r));
    },
    watchList,
  } as unknown as ApiClient;
  return { api, calls };
}

test('reflector: a dropped connection resumes the watch from its resourceVersion; 410 Gone lists again', async () => {
  const { api, calls } = fakeApi([
    async (on) => {
      on({ type: 'MODIFIED', object: obj('a', '11') });
      throw new Error('connect ECONNREFUSED');
    },
    async () => {
      throw new ApiError(410, 'Expired', 'too old resource version');
    },
  ]);
  const seen: string[] = [];
  const r = reflector<Obj>(
    api,
    '/api/v1/pods',
    'pods',
    { list: (items) => seen.push(`list ${items.length}`), event: (t, o) => seen.push(`${t} ${o.metadata.resourceVersion}`) },
    logger('test'),
  );
  const until = Date.now() + 5000;
  while (calls.length < 5 && Date.now() < until) await new Promise((res) => setTimeout(res, 20));
  r.stop();
  assert.deepEqual(calls, ['list', 'watch rv=10', 'watch rv=11', 'list', 'watch rv=20']);
  assert.deepEqual(seen, ['list 1', 'MODIFIED 11', 'list 1']);
});

const bookmark = (rv: string, end = false): WatchEvent<Obj> => ({
  type: 'BOOKMARK',
  object: { metadata: { name: '', resourceVersion: rv, ...(end ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}) } } as Obj,
});

async function run(api: ApiClient, calls: string[], n: number) {
  const seen: string[] = [];
  const r = reflector<Obj>(
    api,
    '/api/v1/pods?fieldSelector=spec.nodeName%3Dn',
    'pods',
    {
      list: (items) => seen.push(`list ${items.map((i) => i.metadata.name).join(',')}`),
      event: (t, o) => seen.push(`${t} ${o.metadata.name} ${o.metadata.resourceVersion}`),
    },
    logger('test'),
  );
  const until = Date.now() + 5000;
  while (calls.length < n && Date.now() < until) await new Promise((res) => setTimeout(res, 20));
  r.stop();
  return seen;
}

test("reflector, watchList: the list as a watch's initial events up to the bookmark, then the same watch goes on (client-go's watchList)", async () => {
  const { api, calls } = fakeApi(
    [
      async (on) => {
        on({ type: 'ADDED', object: obj('a', '5') });
        on({ type: 'ADDED', object: obj('b', '6') });
        on({ type: 'DELETED', object: obj('b', '7') });
        on({ type: 'ADDED', object: obj('c', '8') });
        on(bookmark('9'));
        on(bookmark('20', true));
        on({ type: 'MODIFIED', object: obj('a', '21') });
        on(bookmark('22'));
        throw new Error('connect ECONNREFUSED');
      },
      // Resumed from the last resourceVersion, as a plain watch; then expired: a watch-list again.
      async () => {
        throw new ApiError(410, 'Expired', 'too old resource version');
      },
      async (on) => on(bookmark('30', true)),
    ],
    true,
  );
  const seen = await run(api, calls, 4);
  assert.deepEqual(calls, ['watch-list NotOlderThan rv=', 'watch rv=22', 'watch-list NotOlderThan rv=', 'watch rv=30']);
  assert.deepEqual(seen, ['list a,c', 'MODIFIED a 21', 'list ']);
});

test('reflector, watchList: an apiserver that refuses it, or a stream cut before the bookmark, lists as before', async () => {
  const refused = fakeApi(
    [
      async () => {
        throw new ApiError(422, 'Invalid', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled');
      },
    ],
    true,
  );
  assert.deepEqual(await run(refused.api, refused.calls, 3), ['list a']);
  assert.deepEqual(refused.calls, ['watch-list NotOlderThan rv=', 'list', 'watch rv=10']);

  const cut = fakeApi(
    [
      async (on) => {
        on({ type: 'ADDED', object: obj('a', '5') });
        throw new Error('read ECONNRESET');
      },
    ],
    true,
  );
  // A half-streamed list is never given out.
  assert.deepEqual(await run(cut.api, cut.calls, 3), ['list a']);
  assert.deepEqual(cut.calls, ['watch-list NotOlderThan rv=', 'list', 'watch rv=10']);
});

test('reflector: a first list refused by an apiserver behind the pod is asked again after 0.1 s, then 0.2, not the 0.8 s of other failures; once listed, such a refusal waits the 0.8 s', async () => {
  const behind = () =>
    new ApiError(
      403,
      'Forbidden',
      `configmaps "kube-root-ca.crt" is forbidden: User "system:node:vm" cannot list resource "configmaps" in API group "" in the namespace "ns": no relationship found between node 'vm' and this object`,
    );
  const at: [string, number][] = [];
  let listFails = 2;
  let watches = 0;
  const api = {
    async get() {
      at.push(['list', Date.now()]);
      if (listFails-- > 0) throw behind();
      return { items: [obj('kube-root-ca.crt', '5')], metadata: { resourceVersion: '5' } };
    },
    async watch(_path: string, _on: unknown, signal?: AbortSignal) {
      at.push(['watch', Date.now()]);
      // The first watch is refused as the pods that referenced the object went.
      if (watches++ === 0) throw behind();
      await new Promise((r) => signal?.addEventListener('abort', r));
    },
  } as unknown as ApiClient;
  const r = reflector<Obj>(api, '/api/v1/namespaces/ns/configmaps', 'configmaps', { list: () => {}, event: () => {} }, logger('test'));
  const until = Date.now() + 5000;
  while (at.length < 5 && Date.now() < until) await new Promise((res) => setTimeout(res, 10));
  r.stop();
  assert.deepEqual(
    at.map(([what]) => what),
    ['list', 'list', 'list', 'watch', 'watch'],
  );
  const gap = (i: number) => at[i]![1] - at[i - 1]![1];
  // Bounds loose enough for a loaded machine, and under the 800 ms of any other failure.
  assert.ok(gap(1) >= 95 && gap(1) < 750, `first wait ${gap(1)} ms`);
  assert.ok(gap(2) >= 195 && gap(2) < 750, `second wait ${gap(2)} ms`);
  assert.ok(gap(4) >= 790, `a refused watch after the list: ${gap(4)} ms`);
});
