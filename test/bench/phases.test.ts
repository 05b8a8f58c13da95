import { test } from 'node:test';
import assert from 'node:assert/strict';
import { histograms, phases, seenToRunningMs } from './phases.ts';

const text = (
  sandbox: [number, number],
  start: [number, number],
) => `# HELP kubelet_runtime_operations_duration_seconds [ALPHA] Duration in seconds of runtime operations.
# TYPE kubelet_runtime_operations_duration_seconds histogram
kubelet_runtime_operations_duration_seconds_bucket{operation_type="run_podsandbox",le="0.005"} 0
kubelet_runtime_operations_duration_seconds_sum{operation_type="run_podsandbox"} ${sandbox[0]}
kubelet_runtime_operations_duration_seconds_count{operation_type="run_podsandbox"} ${sandbox[1]}
kubelet_runtime_operations_duration_seconds_sum{operation_type="start_container"} ${start[0]}
kubelet_runtime_operations_duration_seconds_count{operation_type="start_container"} ${start[1]}
kubelet_runtime_operations_duration_seconds_sum{operation_type="version"} 0.01
kubelet_runtime_operations_duration_seconds_count{operation_type="version"} 3
kubelet_runtime_operations_total{operation_type="version"} 3
kubelet_pod_start_sli_duration_seconds_sum 4.5
kubelet_pod_start_sli_duration_seconds_count 3
`;

test('histograms: sum and count by label set, of the one metric asked for', () => {
  const h = histograms(text([1.5, 2], [0.2, 2]), 'kubelet_runtime_operations_duration_seconds');
  assert.deepEqual(h.get('operation_type="run_podsandbox"'), { sum: 1.5, count: 2 });
  assert.equal(h.size, 3);
  assert.deepEqual(histograms(text([0, 0], [0, 0]), 'kubelet_pod_start_sli_duration_seconds').get(''), { sum: 4.5, count: 3 });
});

test('phases: the run as the difference, per pod and mean per call, the costliest first; still series left out', () => {
  const m = 'kubelet_runtime_operations_duration_seconds';
  const got = phases(histograms(text([1.5, 2], [0.2, 2]), m), histograms(text([13.5, 12], [1.2, 12]), m), 10);
  assert.deepEqual(got, [
    { what: 'operation_type="run_podsandbox"', perPod: 1, meanMs: 1200 },
    { what: 'operation_type="start_container"', perPod: 1, meanMs: 100 },
  ]);
});

test("seenToRunningMs: one observation a pod is the mean; upstream's extra first-sync one is taken off", () => {
  const cases: { name: string; perPod: number; meanMs: number; worker: number; want: number }[] = [
    { name: 'kubelet-ts: once a pod', perPod: 1, meanMs: 15471, worker: 1, want: 15471 },
    { name: 'upstream: twice a pod, the first at its worker start', perPod: 2, meanMs: 8413, worker: 43, want: 16783 },
    { name: 'no worker figure: the sum a pod', perPod: 2, meanMs: 100, worker: NaN, want: 200 },
  ];
  for (const c of cases) assert.equal(seenToRunningMs({ what: '', perPod: c.perPod, meanMs: c.meanMs }, c.worker), c.want, c.name);
  assert.ok(Number.isNaN(seenToRunningMs(undefined, 5)), 'not measured');
});
