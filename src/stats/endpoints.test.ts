import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SampleCache } from './cache.ts';
import { statsEndpoints } from './endpoints.ts';
import { earlier, later } from './testing.ts';
import type { RawSample } from './sample.ts';

const cacheOf = (cur: RawSample, prev?: RawSample): SampleCache => ({
  get: async () => ({ cur, prev }),
  fresh: async () => ({ cur, prev }),
  stop: () => {},
});

test('each view is rendered once per sample', async () => {
  const e = statsEndpoints(cacheOf(later, earlier), 'node-1');
  const a = await e.summaryJSON(false);
  assert.equal(await e.summaryJSON(false), a);
  assert.equal(JSON.parse(a).node.nodeName, 'node-1');
  assert.equal(JSON.parse(a).pods[0].cpu.usageNanoCores, 200_000_000);
  assert.equal(JSON.parse(await e.summaryJSON(true)).node.fs, undefined);
  assert.match(await e.cadvisorMetrics(), /^container_memory_working_set_bytes\{/m);
  assert.match(await e.resourceMetrics(), /^resource_scrape_error 0$/m);
});

test('without the runtime: the summary fails (500 upstream), resource metrics say resource_scrape_error 1', async () => {
  const e = statsEndpoints(cacheOf({ ...later, pods: [], containers: [], runtimeError: 'connection refused' }), 'node-1');
  await assert.rejects(e.summaryJSON(false), /failed to list pod stats: connection refused/);
  assert.match(await e.resourceMetrics(), /^resource_scrape_error 1$/m);
  assert.match(
    await e.cadvisorMetrics(),
    /^container_cpu_usage_seconds_total\{container="",cpu="total",id="\/"/m,
    'the node is still reported',
  );
});
