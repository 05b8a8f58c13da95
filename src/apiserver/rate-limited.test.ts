import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiClient } from './client.ts';
import { rateLimited } from './rate-limited.ts';

test('kubeAPIQPS: each request, a watch included, waits for its token; reload passes through', async () => {
  const calls: string[] = [];
  const api = {
    get: async (p: string) => calls.push(`GET ${p}`),
    patch: async (p: string) => calls.push(`PATCH ${p}`),
    watch: async (p: string) => void calls.push(`WATCH ${p}`),
    reload: () => calls.push('reload'),
  } as unknown as ApiClient;
  const waits = [0, 0, 30];
  const observed: string[] = [];
  const limited = rateLimited(api, { reserve: () => waits.shift() ?? 0 }, (verb, s) => observed.push(`${verb} ${s}`));
  const t0 = Date.now();
  await limited.get('/a');
  await limited.patch('/b', {}, 'strategic');
  assert.ok(Date.now() - t0 < 25, 'within the burst: no wait');
  await limited.watch('/c', () => {});
  assert.ok(Date.now() - t0 >= 29, 'past the burst: the wait the bucket gave');
  limited.reload({} as never);
  assert.deepEqual(calls, ['GET /a', 'PATCH /b', 'WATCH /c', 'reload']);
  // client-go's tryThrottle: every request's wait, none too, by its verb (a watch is a GET).
  assert.deepEqual(observed, ['GET 0', 'PATCH 0', 'GET 0.03']);
});
