import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderResourceMetrics, workingSet } from './resource-metrics.ts';

test('working set is usage minus inactive file pages', () => {
  assert.equal(workingSet(1000, 'cache 10\ntotal_inactive_file 300\n'), 700);
  assert.equal(workingSet(1000, 'inactive_file 100\n'), 900, 'cgroup v2 name');
  assert.equal(workingSet(100, 'total_inactive_file 300\n'), 0);
});

test('resource metrics: upstream names, labels, timestamps, pods summed from containers', () => {
  const text = renderResourceMetrics({ cpuSeconds: 12.5, memoryWorkingSetBytes: 1024, timestampMs: 1000 }, [
    { container: 'a', pod: 'p', namespace: 'ns', cpuSeconds: 1, memoryWorkingSetBytes: 10, timestampMs: 900 },
    { container: 'b', pod: 'p', namespace: 'ns', cpuSeconds: 2, memoryWorkingSetBytes: 20, timestampMs: 950 },
  ]);
  assert.match(text, /^node_cpu_usage_seconds_total 12\.5 1000$/m);
  assert.match(text, /^node_memory_working_set_bytes 1024 1000$/m);
  assert.match(text, /^container_cpu_usage_seconds_total\{container="a",namespace="ns",pod="p"\} 1 900$/m);
  assert.match(text, /^pod_cpu_usage_seconds_total\{namespace="ns",pod="p"\} 3 950$/m);
  assert.match(text, /^pod_memory_working_set_bytes\{namespace="ns",pod="p"\} 30 950$/m);
  assert.match(text, /^# TYPE container_memory_working_set_bytes gauge$/m);
  assert.match(text, /^scrape_error 0$/m);
  assert.match(renderResourceMetrics(undefined, []), /^scrape_error 1$/m);
});
