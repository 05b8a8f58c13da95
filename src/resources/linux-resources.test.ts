import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  changedResources,
  cpuAndMemory,
  fromLinux,
  linuxResources,
  milliCPU,
  podRequests,
  quotaFromMilli,
  sharesFromMilli,
} from './linux-resources.ts';

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

test('podRequests: app containers and sidecars add up, a regular init container counts alone', () => {
  const c = (cpu: string, restartPolicy?: string) => ({
    name: cpu,
    resources: { requests: { cpu, memory: '1Mi' } },
    ...(restartPolicy ? { restartPolicy } : {}),
  });
  assert.deepEqual(podRequests([c('100m'), c('200m')], [c('250m'), c('100m', 'Always')]), { cpu: 0.4, memory: 3 * 2 ** 20 });
  assert.deepEqual(podRequests([c('100m')], [c('1')]), { cpu: 1, memory: 2 ** 20 });
});
