import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  allocatableMemoryBytes,
  effectiveMaxPods,
  enforcesPods,
  invalidEnforcement,
  kubepodsLimits,
  reservedCgroupLimits,
  reservedEnforcements,
} from './node-allocatable.ts';

test('kubepods limits: capacity less the reservations, cpu as shares', () => {
  assert.deepEqual(kubepodsLimits({ cpuCores: 2, memoryBytes: 4 * 2 ** 30 }, []), { cpuShares: 2048, memoryLimitBytes: 4 * 2 ** 30 });
  assert.deepEqual(kubepodsLimits({ cpuCores: 2, memoryBytes: 4 * 2 ** 30 }, [{ cpu: '500m', memory: '1Gi' }, { cpu: '100m' }]), {
    cpuShares: 1433,
    memoryLimitBytes: 3 * 2 ** 30,
  });
  // Huge pages: what the node has, less what is reserved of them, by the cgroup's page size names.
  const hugepages = { 'hugepages-2Mi': 512 * 2 ** 20, 'hugepages-1Gi': 0 };
  assert.deepEqual(kubepodsLimits({ cpuCores: 2, memoryBytes: 4 * 2 ** 30, hugepages }, [{ 'hugepages-2Mi': '128Mi' }]).hugePageLimits, {
    '2MB': 384 * 2 ** 20,
    '1GB': 0,
  });
});

// upstream's getNodeAllocatableAbsoluteImpl (node_container_manager_linux.go), for memory.
test('allocatableMemoryBytes: capacity less system and kube reserved, not the eviction threshold, never negative', () => {
  const rows: [string, number, Record<string, string>[], number][] = [
    ['nothing reserved', 4 * 2 ** 30, [], 4 * 2 ** 30],
    ['both reserved', 4 * 2 ** 30, [{ memory: '512Mi', cpu: '1' }, { memory: '512Mi' }], 3 * 2 ** 30],
    ['no memory in them', 2 ** 30, [{ cpu: '1' }, {}], 2 ** 30],
    ['more reserved than there is', 2 ** 30, [{ memory: '2Gi' }], 0],
  ];
  for (const [name, capacity, reserved, want] of rows) assert.equal(allocatableMemoryBytes(capacity, reserved), want, name);
});

test('podsPerCore caps maxPods when set', () => {
  assert.equal(effectiveMaxPods(110, 0, 2), 110);
  assert.equal(effectiveMaxPods(110, 10, 2), 20);
  assert.equal(effectiveMaxPods(15, 10, 2), 15);
});

test('enforcesPods: the kubepods cgroup is held to node allocatable only when enforceNodeAllocatable lists pods', () => {
  for (const [enforce, held] of [
    [['pods'], true],
    [['pods', 'system-reserved', 'kube-reserved'], true],
    [['none'], false],
    [[], false],
    [['system-reserved'], false],
  ] as const)
    assert.equal(enforcesPods([...enforce]), held, enforce.join(','));
});

test('invalidEnforcement: upstream refusals', () => {
  const named = { systemReservedCgroup: '/system.slice', kubeReservedCgroup: '/kube.slice' };
  const rows: [string[], object, RegExp | undefined][] = [
    [['pods'], {}, undefined],
    [[], {}, undefined],
    [['none'], {}, undefined],
    [['pod'], {}, /option "pod" specified for enforceNodeAllocatable/],
    [['pods', 'pods'], {}, /duplicated enforcements "pods"/],
    [['none', 'pods'], {}, /may not contain additional enforcements when "none"/],
    [['pods', 'kube-reserved'], {}, /kubeReservedCgroup \(--kube-reserved-cgroup\) must be specified/],
    [['system-reserved', 'system-reserved-compressible'], named, /cannot be specified together/],
    [['pods', 'system-reserved'], named, undefined],
    [['kube-reserved-compressible', 'system-reserved'], named, undefined],
    [['system-reserved'], { kubeReservedCgroup: '/kube.slice' }, /systemReservedCgroup \(--system-reserved-cgroup\) must be specified/],
    // cgroupsPerQOS false: no enforcement at all (upstream's message, for each value).
    [[], { cgroupsPerQOS: false }, undefined],
    [['none'], { cgroupsPerQOS: false }, undefined],
    [['pods'], { cgroupsPerQOS: true }, undefined],
    [
      ['pods'],
      { cgroupsPerQOS: false },
      /^invalid configuration: cgroupsPerQOS \(--cgroups-per-qos\) must be set to true when "pods" contained in enforceNodeAllocatable \(--enforce-node-allocatable\)$/,
    ],
    [
      ['system-reserved'],
      { ...named, cgroupsPerQOS: false },
      /cgroupsPerQOS \(--cgroups-per-qos\) must be set to true when "system-reserved" contained/,
    ],
    [['kube-reserved-compressible'], { ...named, cgroupsPerQOS: false }, /must be set to true when "kube-reserved-compressible" contained/],
  ];
  for (const [values, cgroups, want] of rows) {
    const got = invalidEnforcement(values, cgroups);
    if (want) assert.match(got ?? '', want, values.join(','));
    else assert.equal(got, undefined, values.join(','));
  }
});

// upstream's TestGetCgroupConfig cases (getCgroupConfigInternal).
test('reservedCgroupLimits: cpu as shares; memory, pids and huge pages unless compressible only', () => {
  const rows: [string, Record<string, string>, boolean, object][] = [
    ['nothing', {}, false, {}],
    ['cpu and memory', { cpu: '100m', memory: '200Mi' }, false, { cpuShares: 102, memoryLimitBytes: 200 * 2 ** 20 }],
    ['compressible only: cpu', { cpu: '100m', memory: '200Mi' }, true, { cpuShares: 102 }],
    ['compressible only, no cpu: nothing', { memory: '200Mi' }, true, {}],
    [
      'pids and huge pages',
      { pid: '1000', 'hugepages-2Mi': '4Mi', 'ephemeral-storage': '1Gi' },
      false,
      { pidsLimit: 1000, hugePageLimits: { '2MB': 4 * 2 ** 20 } },
    ],
    ['cpu rounded up to a millicore, 0 is the least shares', { cpu: '0' }, false, { cpuShares: 2 }],
    ['two cores', { cpu: '2' }, false, { cpuShares: 2048 }],
  ];
  for (const [name, reserved, compressible, want] of rows) assert.deepEqual(reservedCgroupLimits(reserved, compressible), want, name);
});

test('reservedEnforcements: in upstream order, with its words', () => {
  const c = {
    systemReservedCgroup: '/system.slice',
    kubeReservedCgroup: '/kube',
    systemReserved: { cpu: '1' },
    kubeReserved: { memory: '1Gi' },
  };
  const got = reservedEnforcements(['kube-reserved-compressible', 'pods', 'system-reserved'], c);
  assert.deepEqual(
    got.map((e) => [e.key, e.cgroup, e.limits, e.failure, e.success]),
    [
      [
        'system-reserved',
        '/system.slice',
        { cpuShares: 1024 },
        'Failed to enforce System Reserved Cgroup Limits on "/system.slice"',
        'Updated limits on system reserved cgroup /system.slice',
      ],
      [
        'kube-reserved-compressible',
        '/kube',
        {},
        'Failed to enforce Kube Reserved Compressible Cgroup Limits on "/kube"',
        'Updated limits on kube reserved cgroup /kube',
      ],
    ],
  );
  assert.deepEqual(reservedEnforcements(['pods'], c), []);
});
