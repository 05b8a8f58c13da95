import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../apiserver/client.ts';
import { NotFound, apiVolumeSources } from './sources.ts';

test('objects are read once per TTL; NotFound has upstream text and is not cached', async () => {
  let t = 0;
  const gets: string[] = [];
  let exists = false;
  const api = {
    get: async <T>(p: string): Promise<T> => {
      gets.push(p);
      if (!exists) throw new ApiError(404, 'NotFound', `GET ${p}: 404 configmaps "cfg" not found`);
      return { data: { k: String(gets.length) } } as T;
    },
    create: async <T>(): Promise<T> => ({}) as T,
  };
  const s = apiVolumeSources(api, { ttlMs: 1000, now: () => t });
  await assert.rejects(s.configMap('ns', 'cfg'), (e) => e instanceof NotFound && e.message === 'configmap "cfg" not found');
  await assert.rejects(s.secret('ns', 'sec'), { message: 'secret "sec" not found' });
  exists = true;
  const [a, b] = await Promise.all([s.configMap('ns', 'cfg'), s.configMap('ns', 'cfg')]);
  assert.deepEqual([a.data, b.data], [{ k: '3' }, { k: '3' }]);
  t = 1500;
  assert.deepEqual((await s.configMap('ns', 'cfg')).data, { k: '4' });
  assert.deepEqual(gets, [
    '/api/v1/namespaces/ns/configmaps/cfg',
    '/api/v1/namespaces/ns/secrets/sec',
    '/api/v1/namespaces/ns/configmaps/cfg',
    '/api/v1/namespaces/ns/configmaps/cfg',
  ]);
});
