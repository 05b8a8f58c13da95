import { test } from 'node:test';
import assert from 'node:assert/strict';
import { earlier, later, T } from './testing.ts';
import { renderResourceMetrics } from './resource-metrics.ts';
import { buildSummary } from './summary.ts';

test('resource metrics: upstream names and labels, from the Summary, with the sample time (not the start time)', () => {
  const text = renderResourceMetrics(buildSummary('n', later, earlier));
  const start = Date.parse('2026-11-22T11:00:01Z');
  for (const line of [
    `node_cpu_usage_seconds_total 110 ${T}`,
    `node_memory_working_set_bytes 4000 ${T}`,
    `container_cpu_usage_seconds_total{container="app",namespace="ns",pod="web"} 6 ${T}`,
    `container_memory_working_set_bytes{container="app",namespace="ns",pod="web"} 300 ${T}`,
    `container_start_time_seconds{container="app",namespace="ns",pod="web"} ${start / 1000}`,
    // Swap: the usage, and the limit as what is available plus what is used.
    `container_swap_usage_bytes{container="app",namespace="ns",pod="web"} 0 ${T}`,
    `node_swap_usage_bytes 0 ${T}`,
    `pod_swap_usage_bytes{namespace="ns",pod="web"} 0 ${T}`,
    // From the runtime's figures, at the runtime's time.
    `container_cpu_usage_seconds_total{container="side",namespace="ns",pod="web"} 2 ${T - 1000}`,
    // The pod's cgroup, not its containers summed.
    `pod_cpu_usage_seconds_total{namespace="ns",pod="web"} 7 ${T}`,
    `pod_memory_working_set_bytes{namespace="ns",pod="web"} 500 ${T}`,
    '# TYPE container_memory_working_set_bytes gauge',
    '# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds',
    '# HELP node_swap_usage_bytes [ALPHA] Current swap usage of the node in bytes. Reported only on non-windows systems',
    'resource_scrape_error 0',
  ])
    assert.ok(text.split('\n').includes(line), `missing: ${line}\n${text}`);
  // Families in name order, as the registry gathers them.
  const names = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);
  assert.deepEqual(names, [...names].sort());
  assert.doesNotMatch(text, /^scrape_error/m, 'deprecated since 1.29, hidden upstream');
});

test('resource metrics: a family without series is left out; the swap limit is available plus used', () => {
  const summary = buildSummary('n', later, earlier);
  const app = summary.pods[0]!.containers.find((c) => c.name === 'app')!;
  app.swap = { time: app.swap!.time, swapAvailableBytes: 300, swapUsageBytes: 20 };
  const text = renderResourceMetrics({ ...summary, pods: [{ ...summary.pods[0]!, containers: [app] }] });
  assert.match(text, /^container_swap_limit_bytes\{container="app",namespace="ns",pod="web"\} 320 \d+$/m);
  const bare = renderResourceMetrics({ ...summary, pods: [] });
  assert.doesNotMatch(bare, /container_|pod_/, 'no pods, no pod or container families');
  assert.match(bare, /^node_cpu_usage_seconds_total /m);
});

test('resource metrics without a summary: only resource_scrape_error 1', () => {
  const text = renderResourceMetrics(undefined);
  assert.match(text, /^resource_scrape_error 1$/m);
  assert.equal(text.split('\n').filter((l) => l && !l.startsWith('#')).length, 1);
});
