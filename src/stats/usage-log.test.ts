import { test } from 'node:test';
import assert from 'node:assert/strict';
import { humanSize, selfContainer, usageLine, usageLog, type UsagePoint } from './usage-log.ts';
import type { RawSample } from './sample.ts';

test("humanSize is go-units' HumanSize", () => {
  const cases: [number, string][] = [
    [0, '0B'],
    [999, '999B'],
    [1000, '1kB'],
    [95_320_000, '95.32MB'],
    [95_300_000, '95.3MB'],
    [123_456_789, '123.5MB'],
    [2.5e9, '2.5GB'],
  ];
  for (const [bytes, want] of cases) assert.equal(humanSize(bytes), want, String(bytes));
});

// One point every 10 s: 0.01 cores for 58 steps, then 0.5 cores for the last.
const points = (n: number): UsagePoint[] =>
  Array.from({ length: n }, (_, i) => ({
    timeMs: i * 10_000,
    cpuNs: i < n - 1 ? i * 1e8 : (n - 2) * 1e8 + 5e9,
    memoryBytes: 95_320_000,
  }));

test("the line is cAdvisor's, once 60 samples are kept; instant and average cores, memory", () => {
  assert.equal(usageLine('/kubelet', points(59)), undefined, 'not enough stats yet');
  assert.equal(usageLine('/kubelet', points(60)), '[/kubelet] 0.500 cores (average: 0.018 cores), 95.32MB of memory');
  // Only the last 60 count.
  assert.equal(usageLine('/kubelet', points(70)), '[/kubelet] 0.500 cores (average: 0.018 cores), 95.32MB of memory');
});

test("usageLog follows cAdvisor's self container, keeping 60 samples", () => {
  const log = usageLog('/kubelet.slice');
  const sample = (i: number) =>
    ({
      timeMs: i * 10_000,
      root: { cpu: { usageNs: i * 1e9 }, memory: { usageBytes: 8e9 } },
      system: [
        { name: 'pods', cgroupPath: '/kubepods', startTimeMs: 0, cgroup: { cpu: { usageNs: 0 }, memory: { usageBytes: 1 } } },
        {
          name: 'kubelet',
          cgroupPath: '/kubelet.slice',
          startTimeMs: 0,
          cgroup: { cpu: { usageNs: i * 1e8 }, memory: { usageBytes: 2e6 } },
        },
      ],
    }) as unknown as RawSample;
  const lines = Array.from({ length: 61 }, (_, i) => log(sample(i)));
  assert.deepEqual(lines.slice(0, 59), Array(59).fill(undefined));
  assert.equal(lines[59], '[/kubelet.slice] 0.010 cores (average: 0.010 cores), 2MB of memory');
  assert.equal(lines[60], '[/kubelet.slice] 0.010 cores (average: 0.010 cores), 2MB of memory');
  const root = usageLog('/');
  const rootLines = Array.from({ length: 60 }, (_, i) => root(sample(i)));
  assert.equal(rootLines[59], '[/] 0.100 cores (average: 0.100 cores), 8GB of memory');
});

test("selfContainer is manager.New's: the own cgroup on v1, the root on v2", () => {
  assert.equal(selfContainer({ version: 1, ofProcess: () => '/kubelet.slice' }), '/kubelet.slice');
  assert.equal(selfContainer({ version: 1, ofProcess: () => undefined }), '/');
  assert.equal(selfContainer({ version: 2, ofProcess: () => '/kubelet.slice' }), '/');
});
