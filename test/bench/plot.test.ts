import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type BenchRun, svg } from './plot.ts';

const run = (pods: number, ts: number, up: number, sequential = false): BenchRun => ({
  pods,
  sequential,
  date: '2026-11-26T18:00:00Z',
  kubelets: [
    { label: 'kubelet-ts', version: 'v1.36.3', p50: ts, p99: ts * 1.2, rssPeakMB: 120 },
    { label: 'upstream kubelet', version: 'v1.36.3', p50: up, p99: up * 1.2, rssPeakMB: 100 },
  ],
});

test('svg: a p50 and a p99 line per kubelet through the runs by pods, sequential runs left out', () => {
  const out = svg([run(100, 9000, 12000), run(30, 3000, 4000), run(100, 1, 1, true)], 'title');
  assert.match(out, /^<svg /);
  const lines = [...out.matchAll(/<polyline points="([^"]*)"/g)].map((m) => m[1]!.split(' '));
  assert.equal(lines.length, 4, 'two kubelets x two percentiles');
  for (const pts of lines) assert.equal(pts.length, 2, 'one point for each burst size');
  // x grows with pods: 30 before 100.
  const xs = lines[0]!.map((p) => Number(p.split(',')[0]));
  assert.ok(xs[0]! < xs[1]!);
  // The highest p99 (upstream at 100 pods) is at the top of the plot area.
  assert.equal(Number(lines[3]![1]!.split(',')[1]), 40);
  assert.match(out, /upstream kubelet p99/);
});

test('svg: a kubelet measured at one size only (a node-flags variant) draws no line', () => {
  const thirty = run(30, 3000, 4000);
  thirty.kubelets.push({ label: 'kubelet-ts, node flags', version: 'v1.36.3', p50: 3100, p99: 3500, rssPeakMB: 110 });
  const out = svg([thirty, run(100, 9000, 12000)], 'title');
  assert.equal([...out.matchAll(/<polyline /g)].length, 4);
  assert.doesNotMatch(out, /node flags/);
});
