import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, type ApiClient, type WatchEvent } from './client.ts';
import { reflector } from './reflector.ts';
import { logger } from '../log/log.ts';

type Obj = { metadata: { name: string; resourceVersion: string } };
const obj = (name: string, rv: string): Obj => ({ metadata: { name, resourceVersion: rv } });

/** An apiserver whose watches follow a script: each entry is one watch call's fate. */
function fakeApi(script: ((on: (e: WatchEvent<Obj>) => void) => Promise<void>)[]) {
  const calls: string[] = [];
  let lists = 0;
  const api = {
    async get() {
      lists++;
      calls.push(`list`);
      return { items: [obj('a', String(lists * 10))], metadata: { resourceVersion: String(lists * 10) } };
    },
    async watch(path: string, on: (e: WatchEvent<Obj>) => void, signal?: AbortSignal) {
      calls.push(`watch rv=${/resourceVersion=(\d+)/.exec(path)![1]}`);
      const step = script.shift();
      if (step) return step(on);
      await new Promise((r) => signal?.addEventListener('abort', r));
    },
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
