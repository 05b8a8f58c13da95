import { test } from 'node:test';
import assert from 'node:assert/strict';
import { earlier, later, T } from './testing.ts';
import { renderResourceMetrics } from './resource-metrics.ts';
import { buildSummary } from './summary.ts';

test('resource metrics: upstream names and labels, from the Summary, with the sample time', () => {
  const text = renderResourceMetrics(buildSummary('n', later, earlier));
  const start = Date.parse('2026-11-22T11:00:01Z');
  for (const line of [
    `node_cpu_usage_seconds_total 110 ${T}`,
    `node_memory_working_set_bytes 4000 ${T}`,
    `container_cpu_usage_seconds_total{container="app",namespace="ns",pod="web"} 6 ${T}`,
    `container_memory_working_set_bytes{container="app",namespace="ns",pod="web"} 300 ${T}`,
    `container_start_time_seconds{container="app",namespace="ns",pod="web"} ${start / 1000} ${start}`,
    // From the runtime's figures, at the runtime's time.
    `container_cpu_usage_seconds_total{container="side",namespace="ns",pod="web"} 2 ${T - 1000}`,
    // The pod's cgroup, not its containers summed.
    `pod_cpu_usage_seconds_total{namespace="ns",pod="web"} 7 ${T}`,
    `pod_memory_working_set_bytes{namespace="ns",pod="web"} 500 ${T}`,
    '# TYPE container_memory_working_set_bytes gauge',
    '# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds',
    'scrape_error 0',
  ])
    assert.ok(text.split('\n').includes(line), `missing: ${line}\n${text}`);
});

test('resource metrics without a summary: only scrape_error 1', () => {
  const text = renderResourceMetrics(undefined);
  assert.match(text, /^scrape_error 1$/m);
  assert.equal(text.split('\n').filter((l) => l && !l.startsWith('#')).length, 1);
});
