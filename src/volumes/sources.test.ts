import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiClient } from '../apiserver/client.ts';
import { logger } from '../log/log.ts';
import { NotFound, apiVolumeSources } from './sources.ts';

test('a missing ConfigMap or Secret is NotFound with upstream text', async () => {
  const api = {
    get: async <T>(): Promise<T> => ({ items: [], metadata: { resourceVersion: '1' } }) as T,
    watch: (_p: string, _on: unknown, signal?: AbortSignal) => new Promise<void>((r) => signal?.addEventListener('abort', () => r())),
    create: async <T>(): Promise<T> => ({}) as T,
  } as unknown as Pick<ApiClient, 'get' | 'watch' | 'create'>;
  const s = apiVolumeSources(api, logger('test'));
  await assert.rejects(s.configMap('ns', 'cfg'), (e) => e instanceof NotFound && e.message === 'configmap "cfg" not found');
  await assert.rejects(s.secret('ns', 'sec'), { message: 'secret "sec" not found' });
  s.stop();
});
