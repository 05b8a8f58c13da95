import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cgroupFiles,
  cgroupHierarchies,
  type CgroupHierarchy,
  cpuMemoryFiles,
  cpuSharesFromWeight,
  cpuWeight,
  parseV2Limits,
  qosCgroupFiles,
  reservedCgroupFiles,
  subtreeControl,
} from './cgroup-files.ts';

const files = (fs: { hierarchy: string; file: string; value: string; optional?: boolean }[]) =>
  fs.map((f) => `${f.hierarchy}/${f.file}=${f.value}${f.optional ? ' (optional)' : ''}`);

// upstream's getCPUWeight and cpuWeightToCPUShares (cgroup_manager_linux.go, cgroup_v2_manager_linux.go).
test('cpu.weight from cpu.shares and back, as upstream converts them', () => {
  for (const [shares, weight] of [
    [2, 1],
    [1, 1],
    [204, 8],
    [1024, 39],
    [2048, 79],
    [262_143, 9_999],
    [262_144, 10_000],
    [1_000_000, 10_000],
  ] as const)
    assert.equal(cpuWeight(shares), weight, `shares ${shares}`);
  for (const [weight, shares] of [
    [1, 2],
    [39, 998],
    [10_000, 262_144],
  ] as const)
    assert.equal(cpuSharesFromWeight(weight), shares, `weight ${weight}`);
});

test('qosCgroupFiles: the CPU weight, and the memory limit qosReserved sets (a zero one left unset, as libcontainer)', () => {
  const rows: [string, Parameters<typeof qosCgroupFiles>[0], 1 | 2, string[]][] = [
    ['v1 shares alone', { cpuShares: 2 }, 1, ['cpu/cpu.shares=2']],
    ['v1 with memory', { cpuShares: 512, memoryLimitBytes: 1024 }, 1, ['cpu/cpu.shares=512', 'memory/memory.limit_in_bytes=1024']],
    ['v2 with memory', { cpuShares: 1024, memoryLimitBytes: 1024 }, 2, ['/cpu.weight=39', '/memory.max=1024']],
    ['a zero limit', { cpuShares: 2, memoryLimitBytes: 0 }, 2, ['/cpu.weight=1']],
    [
      'a negative one, for the kernel to refuse',
      { cpuShares: 2, memoryLimitBytes: -5 },
      1,
      ['cpu/cpu.shares=2', 'memory/memory.limit_in_bytes=-5'],
    ],
  ];
  for (const [name, l, v, want] of rows) assert.deepEqual(files(qosCgroupFiles(l, v)), want, name);
});

test('cpuMemoryFiles: v1 per controller, v2 unified; an absent memory limit left alone unless a resize unsets it', () => {
  const cases: { name: string; v: 1 | 2; unlimited?: boolean; l: Parameters<typeof cpuMemoryFiles>[0]; want: string[] }[] = [
    {
      name: 'v1 limited',
      v: 1,
      l: { cpuShares: 512, cpuQuotaUs: 50_000, memoryLimitBytes: 1024 },
      want: ['cpu/cpu.shares=512', 'cpu/cpu.cfs_period_us=100000', 'cpu/cpu.cfs_quota_us=50000', 'memory/memory.limit_in_bytes=1024'],
    },
    {
      name: 'v1 unlimited',
      v: 1,
      l: { cpuShares: 2 },
      want: ['cpu/cpu.shares=2', 'cpu/cpu.cfs_period_us=100000', 'cpu/cpu.cfs_quota_us=-1'],
    },
    {
      name: 'v1 resized to no limits',
      v: 1,
      unlimited: true,
      l: { cpuShares: 2 },
      want: ['cpu/cpu.shares=2', 'cpu/cpu.cfs_period_us=100000', 'cpu/cpu.cfs_quota_us=-1', 'memory/memory.limit_in_bytes=-1'],
    },
    {
      name: 'v2 limited',
      v: 2,
      l: { cpuShares: 1024, cpuQuotaUs: 150_000, memoryLimitBytes: 64 * 2 ** 20 },
      want: ['/cpu.weight=39', '/cpu.max=150000 100000', '/memory.max=67108864'],
    },
    { name: 'v2 unlimited', v: 2, l: { cpuShares: 2 }, want: ['/cpu.weight=1', '/cpu.max=max 100000'] },
    {
      name: 'v2 at a 50 ms period (cpuCFSQuotaPeriod)',
      v: 2,
      l: { cpuShares: 2, cpuQuotaUs: 25_000, cpuPeriodUs: 50_000 },
      want: ['/cpu.weight=1', '/cpu.max=25000 50000'],
    },
    {
      name: 'v1 at a 50 ms period',
      v: 1,
      l: { cpuShares: 2, cpuQuotaUs: 25_000, cpuPeriodUs: 50_000 },
      want: ['cpu/cpu.shares=2', 'cpu/cpu.cfs_period_us=50000', 'cpu/cpu.cfs_quota_us=25000'],
    },
    {
      name: 'v2 resized to no limits',
      v: 2,
      unlimited: true,
      l: { cpuShares: 2 },
      want: ['/cpu.weight=1', '/cpu.max=max 100000', '/memory.max=max'],
    },
  ];
  for (const c of cases) assert.deepEqual(files(cpuMemoryFiles(c.l, c.v, c.unlimited)), c.want, c.name);
});

test('cgroupFiles: every huge page size limited (0 unless asked for) and pids.max, where their controllers are', () => {
  const l = { cpuShares: 2, hugePageLimits: { '2MB': 4_194_304 }, pidsLimit: 100 };
  const v1: CgroupHierarchy = { version: 1, controllers: new Set(['cpu', 'memory', 'hugetlb', 'pids']), pageSizes: ['2MB', '1GB'] };
  assert.deepEqual(files(cgroupFiles(l, v1)).slice(3), [
    'hugetlb/hugetlb.2MB.limit_in_bytes=4194304',
    'hugetlb/hugetlb.1GB.limit_in_bytes=0',
    'pids/pids.max=100',
  ]);
  assert.deepEqual(cgroupHierarchies(cgroupFiles(l, v1), 1), ['cpu', 'memory', 'hugetlb', 'pids']);
  const v2: CgroupHierarchy = { version: 2, controllers: new Set(['cpu', 'memory', 'hugetlb', 'pids']), pageSizes: ['2MB'] };
  assert.deepEqual(files(cgroupFiles(l, v2)).slice(2), [
    '/hugetlb.2MB.max=4194304',
    '/hugetlb.2MB.rsvd.max=4194304 (optional)',
    '/pids.max=100',
  ]);
  assert.deepEqual(cgroupHierarchies(cgroupFiles(l, v2), 2), ['']);
  const bare: CgroupHierarchy = { version: 2, controllers: new Set(['cpu', 'memory']), pageSizes: ['2MB'] };
  assert.deepEqual(files(cgroupFiles(l, bare)), ['/cpu.weight=1', '/cpu.max=max 100000'], 'no hugetlb or pids controller: neither written');
});

test("subtreeControl: the root and each ancestor enable the root's controllers, not the cgroup itself", () => {
  assert.deepEqual(subtreeControl('/kubepods/burstable/podu', new Set(['cpu', 'memory', 'pids'])), {
    parents: ['', '/kubepods', '/kubepods/burstable'],
    value: '+cpu +memory +pids',
  });
  assert.deepEqual(subtreeControl('/kubepods', new Set(['cpu'])).parents, ['']);
});

test('parseV2Limits: "max" is no limit', () => {
  assert.deepEqual(parseV2Limits('39\n', '150000 100000\n', '67108864\n'), {
    cpuShares: 998,
    cpuQuotaUs: 150_000,
    memoryLimitBytes: 67_108_864,
  });
  assert.deepEqual(parseV2Limits('1', 'max 100000', 'max'), { cpuShares: 2 });
  // A period other than the default is named beside its quota.
  assert.deepEqual(parseV2Limits('1', '25000 50000', 'max'), { cpuShares: 2, cpuQuotaUs: 25_000, cpuPeriodUs: 50_000 });
});

// upstream's enforceExistingCgroup: cgroupManager.Update through libcontainer's Set, no quota written.
test('reservedCgroupFiles: what the reservation names, the huge pages held to 0 unless reserved, on either version', () => {
  const v1: CgroupHierarchy = { version: 1, controllers: new Set(['cpu', 'memory', 'hugetlb', 'pids']), pageSizes: ['2MB'] };
  const v2: CgroupHierarchy = { version: 2, controllers: new Set(['cpu', 'memory', 'pids']), pageSizes: ['2MB'] };
  const rows: [string, Parameters<typeof reservedCgroupFiles>[0], CgroupHierarchy, string[]][] = [
    [
      'v1: all of it',
      { cpuShares: 512, memoryLimitBytes: 2 ** 30, pidsLimit: 1000, hugePageLimits: { '2MB': 2097152 } },
      v1,
      ['cpu/cpu.shares=512', 'memory/memory.limit_in_bytes=1073741824', 'hugetlb/hugetlb.2MB.limit_in_bytes=2097152', 'pids/pids.max=1000'],
    ],
    [
      'v1: compressible only (cpu), the huge pages still 0',
      { cpuShares: 102 },
      v1,
      ['cpu/cpu.shares=102', 'hugetlb/hugetlb.2MB.limit_in_bytes=0'],
    ],
    ['v1: nothing reserved', {}, v1, ['hugetlb/hugetlb.2MB.limit_in_bytes=0']],
    ['a zero memory limit is left unset', { memoryLimitBytes: 0, pidsLimit: 0 }, v1, ['hugetlb/hugetlb.2MB.limit_in_bytes=0']],
    [
      'v2: weight, memory.max, pids.max',
      { cpuShares: 1024, memoryLimitBytes: 2 ** 29, pidsLimit: 50 },
      v2,
      ['/cpu.weight=39', '/memory.max=536870912', '/pids.max=50'],
    ],
  ];
  for (const [name, l, h, want] of rows) assert.deepEqual(files(reservedCgroupFiles(l, h)), want, name);
});
