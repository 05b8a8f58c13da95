import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changedResources, cpuAndMemory, fromLinux, linuxResources, milliCPU, quotaFromMilli, sharesFromMilli } from './linux-resources.ts';

const rr = (requests?: Record<string, string>, limits?: Record<string, string>) => ({
  ...(requests ? { requests } : {}),
  ...(limits ? { limits } : {}),
});

test('milliCPU rounds up as MilliValue, without float noise', () => {
  assert.deepEqual(['25m', '0.57', '1', '2.5', '0.0255', undefined].map(milliCPU), [25, 570, 1000, 2500, 26, 0]);
});

test('upstream conversions: MilliCPUToShares and MilliCPUToQuota', () => {
  assert.deepEqual([0, 1, 2, 20, 25, 1000].map(sharesFromMilli), [2, 2, 2, 20, 25, 1024]);
  assert.deepEqual([0, 5, 10, 35, 570].map(quotaFromMilli), [0, 1000, 1000, 3500, 57000]);
});

const linuxCases: [string, ReturnType<typeof rr>, ReturnType<typeof linuxResources>][] = [
  ['nothing: minimum shares, no limits', rr(), { cpuShares: 2, cpuPeriod: 0, cpuQuota: 0, memoryLimitInBytes: 0 }],
  ['requests only', rr({ cpu: '20m', memory: '35Mi' }), { cpuShares: 20, cpuPeriod: 0, cpuQuota: 0, memoryLimitInBytes: 0 }],
  [
    'limits only: shares from the limit',
    rr(undefined, { cpu: '30m', memory: '45Mi' }),
    { cpuShares: 30, cpuPeriod: 100000, cpuQuota: 3000, memoryLimitInBytes: 45 * 2 ** 20 },
  ],
  ['both', rr({ cpu: '2m' }, { cpu: '10m' }), { cpuShares: 2, cpuPeriod: 100000, cpuQuota: 1000, memoryLimitInBytes: 0 }],
];
for (const [name, r, want] of linuxCases) test(`linuxResources: ${name}`, () => assert.deepEqual(linuxResources(r), want));

// kuberuntime's getCPULimit and getMemoryLimit: a pod with pod-level resources lends its limits.
const Mi = 2 ** 20;
const podLevelCases: [string, ReturnType<typeof rr>, { cpu?: number; memory?: number }, ReturnType<typeof linuxResources>][] = [
  [
    'no container resources: quota, memory and shares from the pod limits',
    rr(),
    { cpu: 100, memory: 100 * Mi },
    { cpuShares: 102, cpuPeriod: 100000, cpuQuota: 10000, memoryLimitInBytes: 100 * Mi },
  ],
  [
    'a cpu request keeps its shares; the limits still come from the pod',
    rr({ cpu: '50m', memory: '50Mi' }),
    { cpu: 100, memory: 100 * Mi },
    { cpuShares: 51, cpuPeriod: 100000, cpuQuota: 10000, memoryLimitInBytes: 100 * Mi },
  ],
  [
    "the container's own limits win",
    rr(undefined, { cpu: '30m', memory: '30Mi' }),
    { cpu: 100, memory: 100 * Mi },
    { cpuShares: 30, cpuPeriod: 100000, cpuQuota: 3000, memoryLimitInBytes: 30 * Mi },
  ],
  [
    'a zero container limit counts as unset (its request, defaulted from it, stays zero)',
    rr(undefined, { cpu: '0', memory: '0' }),
    { cpu: 200, memory: 64 * Mi },
    { cpuShares: 2, cpuPeriod: 100000, cpuQuota: 20000, memoryLimitInBytes: 64 * Mi },
  ],
  ['pod-level requests only: nothing to lend', rr(), {}, { cpuShares: 2, cpuPeriod: 0, cpuQuota: 0, memoryLimitInBytes: 0 }],
];
for (const [name, r, podLimits, want] of podLevelCases)
  test(`linuxResources with pod-level limits: ${name}`, () => assert.deepEqual(linuxResources(r, podLimits), want));

const changeCases: [string, ReturnType<typeof rr>, ReturnType<typeof rr>, string[]][] = [
  ['same', rr({ cpu: '20m' }), rr({ cpu: '20m' }), []],
  ['same value in other units', rr({ cpu: '1', memory: '1Gi' }), rr({ cpu: '1000m', memory: '1073741824' }), []],
  ['cpu request', rr({ cpu: '20m' }), rr({ cpu: '25m' }), ['cpu']],
  ['memory limit added', rr({ memory: '35Mi' }), rr({ memory: '35Mi' }, { memory: '45Mi' }), ['memory']],
  ['both', rr({ cpu: '1', memory: '1Mi' }), rr({ cpu: '2', memory: '2Mi' }), ['cpu', 'memory']],
  ['equivalent in the cgroup is still a change', rr({ cpu: '2m' }), rr({ cpu: '1m' }), ['cpu']],
];
for (const [name, a, b, want] of changeCases) test(`changedResources: ${name}`, () => assert.deepEqual(changedResources(a, b), want));

test('cpuAndMemory drops other resources and empty lists', () => {
  assert.deepEqual(cpuAndMemory({ requests: { cpu: '1', 'ephemeral-storage': '1Gi' }, limits: { 'example.com/x': '1' } }), {
    requests: { cpu: '1' },
  });
  assert.deepEqual(cpuAndMemory(undefined), {});
});

const fromCases: [string, Parameters<typeof fromLinux>[0], ReturnType<typeof rr>, ReturnType<typeof rr>][] = [
  [
    'what the allocation makes: the allocated values as written',
    linuxResources(rr({ cpu: '1m' }, { cpu: '5m' })),
    rr({ cpu: '1m' }, { cpu: '5m' }),
    rr({ cpu: '1m' }, { cpu: '5m' }),
  ],
  [
    'other cgroup values: converted back',
    linuxResources(rr({ cpu: '500m', memory: '1Mi' }, { cpu: '1', memory: '64Mi' })),
    rr({ cpu: '250m', memory: '2Mi' }, { cpu: '2', memory: '128Mi' }),
    rr({ cpu: '500m', memory: '2Mi' }, { cpu: '1', memory: '64Mi' }),
  ],
  ['a limit not applied yet is not shown', linuxResources(rr({ cpu: '20m' })), rr({ cpu: '20m' }, { cpu: '30m' }), rr({ cpu: '20m' }, {})],
];
for (const [name, l, alloc, want] of fromCases) test(`fromLinux: ${name}`, () => assert.deepEqual(fromLinux(l, alloc), want));
