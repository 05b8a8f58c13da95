import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceRequirements } from 'kubernetes-types/core/v1.js';
import {
  type CFS,
  cfsOf,
  changedResources,
  DEFAULT_CFS,
  cpuAndMemory,
  fromLinux,
  withOtherResources,
  linuxResources,
  milliCPU,
  quotaFromMilli,
  sharesFromMilli,
  singleProcessOOMKill,
  cgroupV1Refused,
} from './linux-resources.ts';
import { requirements } from './testing.ts';

test('milliCPU rounds up as MilliValue, without float noise', () => {
  assert.deepEqual(['25m', '0.57', '1', '2.5', '0.0255', undefined].map(milliCPU), [25, 570, 1000, 2500, 26, 0]);
});

test('upstream conversions: MilliCPUToShares and MilliCPUToQuota', () => {
  assert.deepEqual([0, 1, 2, 20, 25, 1000].map(sharesFromMilli), [2, 2, 2, 20, 25, 1024]);
  assert.deepEqual(
    [0, 5, 10, 35, 570].map((m) => quotaFromMilli(m)),
    [0, 1000, 1000, 3500, 57000],
  );
  // At another period (cpuCFSQuotaPeriod): 570m of a 50 ms period; still at least 1 ms.
  assert.deepEqual(
    [570, 5].map((m) => quotaFromMilli(m, 50_000)),
    [28500, 1000],
  );
});

// Upstream's NewMainKubelet and validation_linux.go.
const oomCases: [string, boolean | undefined, boolean, boolean | RegExp][] = [
  ['cgroup v2, unset: the whole container', undefined, true, false],
  ['cgroup v2, true: one process', true, true, true],
  ['cgroup v2, false', false, true, false],
  ['cgroup v1, unset: one process', undefined, false, true],
  ['cgroup v1, true', true, false, true],
  ['cgroup v1, false: refused', false, false, /must not be explicitly set to false when using cgroup v1/],
];
for (const [name, configured, v2, want] of oomCases)
  test(`singleProcessOOMKill: ${name}`, () => {
    if (want instanceof RegExp) assert.throws(() => singleProcessOOMKill(configured, v2), want);
    else assert.equal(singleProcessOOMKill(configured, v2), want);
  });

const linuxCases: [string, ResourceRequirements, ReturnType<typeof linuxResources>][] = [
  // The period whatever the limit, as calculateLinuxResources with cpuCFSQuota on.
  ['nothing: minimum shares, no limits', requirements(), { cpuShares: 2, cpuPeriod: 100000, cpuQuota: 0, memoryLimitInBytes: 0 }],
  ['requests only', requirements({ cpu: '20m', memory: '35Mi' }), { cpuShares: 20, cpuPeriod: 100000, cpuQuota: 0, memoryLimitInBytes: 0 }],
  [
    'limits only: shares from the limit',
    requirements(undefined, { cpu: '30m', memory: '45Mi' }),
    { cpuShares: 30, cpuPeriod: 100000, cpuQuota: 3000, memoryLimitInBytes: 45 * 2 ** 20 },
  ],
  ['both', requirements({ cpu: '2m' }, { cpu: '10m' }), { cpuShares: 2, cpuPeriod: 100000, cpuQuota: 1000, memoryLimitInBytes: 0 }],
];
for (const [name, r, want] of linuxCases) test(`linuxResources: ${name}`, () => assert.deepEqual(linuxResources(r), want));

// kuberuntime's getCPULimit and getMemoryLimit: a pod with pod-level resources lends its limits.
const Mi = 2 ** 20;
const podLevelCases: [string, ResourceRequirements, { cpu?: number; memory?: number }, ReturnType<typeof linuxResources>][] = [
  [
    'no container resources: quota, memory and shares from the pod limits',
    requirements(),
    { cpu: 100, memory: 100 * Mi },
    { cpuShares: 102, cpuPeriod: 100000, cpuQuota: 10000, memoryLimitInBytes: 100 * Mi },
  ],
  [
    'a cpu request keeps its shares; the limits still come from the pod',
    requirements({ cpu: '50m', memory: '50Mi' }),
    { cpu: 100, memory: 100 * Mi },
    { cpuShares: 51, cpuPeriod: 100000, cpuQuota: 10000, memoryLimitInBytes: 100 * Mi },
  ],
  [
    "the container's own limits win",
    requirements(undefined, { cpu: '30m', memory: '30Mi' }),
    { cpu: 100, memory: 100 * Mi },
    { cpuShares: 30, cpuPeriod: 100000, cpuQuota: 3000, memoryLimitInBytes: 30 * Mi },
  ],
  [
    'a zero container limit counts as unset (its request, defaulted from it, stays zero)',
    requirements(undefined, { cpu: '0', memory: '0' }),
    { cpu: 200, memory: 64 * Mi },
    { cpuShares: 2, cpuPeriod: 100000, cpuQuota: 20000, memoryLimitInBytes: 64 * Mi },
  ],
  ['pod-level requests only: nothing to lend', requirements(), {}, { cpuShares: 2, cpuPeriod: 100000, cpuQuota: 0, memoryLimitInBytes: 0 }],
];
for (const [name, r, podLimits, want] of podLevelCases)
  test(`linuxResources with pod-level limits: ${name}`, () => assert.deepEqual(linuxResources(r, podLimits), want));

// calculateLinuxResources with the node's cpuCFSQuota and cpuCFSQuotaPeriod.
const cfsCases: [string, CFS, ReturnType<typeof linuxResources>][] = [
  [
    'quota off: neither quota nor period, shares and memory as ever',
    { quota: false, periodUs: 100_000 },
    { cpuShares: 256, cpuPeriod: 0, cpuQuota: 0, memoryLimitInBytes: 64 * Mi },
  ],
  [
    'a 50 ms period: the quota of the limit in it',
    { quota: true, periodUs: 50_000 },
    { cpuShares: 256, cpuPeriod: 50_000, cpuQuota: 25_000, memoryLimitInBytes: 64 * Mi },
  ],
];
for (const [name, cfs, want] of cfsCases)
  test(`linuxResources with the node's CFS settings: ${name}`, () =>
    assert.deepEqual(linuxResources(requirements({ cpu: '250m' }, { cpu: '500m', memory: '64Mi' }), undefined, cfs), want));

test('cfsOf: the configured period in whole microseconds', () => {
  assert.deepEqual(cfsOf(true, 100), DEFAULT_CFS);
  assert.deepEqual(cfsOf(false, 0.0015), { quota: false, periodUs: 1 });
  assert.deepEqual(cfsOf(true, 33.3337), { quota: true, periodUs: 33333 });
});

const changeCases: [string, ResourceRequirements, ResourceRequirements, string[]][] = [
  ['same', requirements({ cpu: '20m' }), requirements({ cpu: '20m' }), []],
  ['same value in other units', requirements({ cpu: '1', memory: '1Gi' }), requirements({ cpu: '1000m', memory: '1073741824' }), []],
  ['cpu request', requirements({ cpu: '20m' }), requirements({ cpu: '25m' }), ['cpu']],
  ['memory limit added', requirements({ memory: '35Mi' }), requirements({ memory: '35Mi' }, { memory: '45Mi' }), ['memory']],
  ['both', requirements({ cpu: '1', memory: '1Mi' }), requirements({ cpu: '2', memory: '2Mi' }), ['cpu', 'memory']],
  ['equivalent in the cgroup is still a change', requirements({ cpu: '2m' }), requirements({ cpu: '1m' }), ['cpu']],
];
for (const [name, a, b, want] of changeCases) test(`changedResources: ${name}`, () => assert.deepEqual(changedResources(a, b), want));

test('cpuAndMemory drops other resources and empty lists', () => {
  assert.deepEqual(cpuAndMemory({ requests: { cpu: '1', 'ephemeral-storage': '1Gi' }, limits: { 'example.com/x': '1' } }), {
    requests: { cpu: '1' },
  });
  assert.deepEqual(cpuAndMemory(undefined), {});
});

const otherCases: [string, ResourceRequirements, ResourceRequirements | undefined, ResourceRequirements][] = [
  ['no spec: cpu and memory alone', { requests: { cpu: '1' } }, undefined, { requests: { cpu: '1' } }],
  [
    "the spec's others added, its cpu and memory not (the allocated ones stand)",
    { requests: { cpu: '1', memory: '1Gi' } },
    { requests: { cpu: '2', memory: '2Gi', 'ephemeral-storage': '1' }, limits: { 'example.com/x': '1' } },
    { requests: { 'ephemeral-storage': '1', cpu: '1', memory: '1Gi' }, limits: { 'example.com/x': '1' } },
  ],
  ['only cpu and memory in the spec: nothing added', {}, { limits: { cpu: '1' } }, {}],
];
for (const [name, cm, spec, want] of otherCases) {
  test(`withOtherResources: ${name}`, () => assert.deepEqual(withOtherResources(cm, spec), want));
}

const fromCases: [string, Parameters<typeof fromLinux>[0], ResourceRequirements, ResourceRequirements][] = [
  [
    'what the allocation makes: the allocated values as written',
    linuxResources(requirements({ cpu: '1m' }, { cpu: '5m' })),
    requirements({ cpu: '1m' }, { cpu: '5m' }),
    requirements({ cpu: '1m' }, { cpu: '5m' }),
  ],
  [
    'other cgroup values: converted back',
    linuxResources(requirements({ cpu: '500m', memory: '1Mi' }, { cpu: '1', memory: '64Mi' })),
    requirements({ cpu: '250m', memory: '2Mi' }, { cpu: '2', memory: '128Mi' }),
    requirements({ cpu: '500m', memory: '2Mi' }, { cpu: '1', memory: '64Mi' }),
  ],
  [
    'a limit not applied yet is not shown',
    linuxResources(requirements({ cpu: '20m' })),
    requirements({ cpu: '20m' }, { cpu: '30m' }),
    requirements({ cpu: '20m' }, {}),
  ],
];
for (const [name, l, alloc, want] of fromCases) test(`fromLinux: ${name}`, () => assert.deepEqual(fromLinux(l, alloc), want));

test('fromLinux with CFS quota off: the cpu limit as allocated, which no cgroup holds (upstream: CPULimit nil)', () => {
  const off = { quota: false, periodUs: 100_000 };
  const alloc = requirements({ cpu: '250m' }, { cpu: '500m', memory: '64Mi' });
  assert.deepEqual(fromLinux(linuxResources(alloc, undefined, off), alloc, off), alloc);
});

test('fromLinux at another period: the quota the allocation makes at that period keeps the allocated text', () => {
  const p50 = { quota: true, periodUs: 50_000 };
  const alloc = requirements(undefined, { cpu: '0.5' });
  assert.deepEqual(fromLinux(linuxResources(alloc, undefined, p50), alloc, p50), alloc);
  // A quota the allocation does not make, read back at its period: 30 ms of 50 is 600m.
  assert.deepEqual(fromLinux({ cpuShares: 512, cpuPeriod: 50_000, cpuQuota: 30_000, memoryLimitInBytes: 0 }, alloc, p50).limits, {
    cpu: '600m',
  });
});

test("cgroupV1Refused: upstream's validateKubeletOSConfiguration; failCgroupV1 false lets a v1 host run", () => {
  assert.match(cgroupV1Refused(true, false) ?? '', /^kubelet is configured to not run on a host using cgroup v1\./);
  assert.equal(cgroupV1Refused(false, false), undefined);
  assert.equal(cgroupV1Refused(true, true), undefined);
});
