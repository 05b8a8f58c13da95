import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { ensurePodCgroup, podCgroupLimits } from './pod-cgroup.ts';

const c = (requests?: Record<string, string>, limits?: Record<string, string>): Container => ({
  name: 'c',
  resources: { requests, limits },
});
const pod = (containers: Container[], initContainers: Container[] = []): Pod => ({ spec: { containers, initContainers } });

const cases: [string, Pod, ReturnType<typeof podCgroupLimits>][] = [
  ['BestEffort: minimum shares, no limits', pod([c()]), { cpuShares: 2 }],
  [
    'Guaranteed: shares, quota and memory from the sums',
    pod([c(undefined, { cpu: '200m', memory: '64Mi' }), c(undefined, { cpu: '300m', memory: '64Mi' })]),
    { cpuShares: 512, cpuQuotaUs: 50_000, memoryLimitBytes: 128 * 1024 * 1024 },
  ],
  [
    'Burstable with a container without limits: shares only',
    pod([c({ cpu: '100m' }, { cpu: '1' }), c({ memory: '10Mi' })]),
    { cpuShares: 102 },
  ],
  [
    'init containers: the larger of their max and the app sum',
    pod([c(undefined, { cpu: '100m', memory: '10Mi' })], [c(undefined, { cpu: '1', memory: '5Mi' })]),
    { cpuShares: 1024, cpuQuotaUs: 100_000, memoryLimitBytes: 10 * 1024 * 1024 },
  ],
];
for (const [name, p, want] of cases) test(`podCgroupLimits: ${name}`, () => assert.deepEqual(podCgroupLimits(p), want));

test('ensurePodCgroup writes the cpu and memory files of a v1 hierarchy, and skips other hierarchies', () => {
  const root = mkdtempSync(join(tmpdir(), 'kts-cg-'));
  ensurePodCgroup('/kubepods/podu', { cpuShares: 2 }, root); // no controllers: nothing happens
  mkdirSync(join(root, 'cpu'));
  mkdirSync(join(root, 'memory'));
  ensurePodCgroup('/kubepods/podu', { cpuShares: 512, cpuQuotaUs: 50_000, memoryLimitBytes: 1024 }, root);
  const read = (f: string) => readFileSync(join(root, f), 'utf8');
  assert.deepEqual(
    [read('cpu/kubepods/podu/cpu.shares'), read('cpu/kubepods/podu/cpu.cfs_quota_us'), read('memory/kubepods/podu/memory.limit_in_bytes')],
    ['512', '50000', '1024'],
  );
});
