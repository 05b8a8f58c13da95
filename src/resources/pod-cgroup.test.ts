import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import {
  cgroupHierarchy,
  cgroupPresent,
  containerHugepageLimits,
  ensurePodCgroup,
  hugePageSizeName,
  hugePageSizes,
  podCgroupLimits,
  readMemoryUsage,
  readPodCgroup,
  removePodCgroup,
  validateCgroup,
  writePodCgroup,
} from './pod-cgroup.ts';
import { cgroupfsManager } from './cgroup-manager.ts';
import { container, cpuMemory, mountV1, podLevel, withResources } from './testing.ts';

const c = (requests?: Record<string, string>, limits?: Record<string, string>): Container => container('c', requests, limits);
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

test("podCgroupLimits with the node's CFS settings: quota off is unlimited (enforceCPULimits false), another period is named", () => {
  const guaranteed = pod([c(undefined, { cpu: '200m', memory: '64Mi' }), c(undefined, { cpu: '300m', memory: '64Mi' })]);
  assert.deepEqual(podCgroupLimits(guaranteed, -1, { quota: false, periodUs: 100_000 }), {
    cpuShares: 512,
    memoryLimitBytes: 128 * 1024 * 1024,
  });
  assert.deepEqual(podCgroupLimits(guaranteed, -1, { quota: true, periodUs: 50_000 }), {
    cpuShares: 512,
    cpuQuotaUs: 25_000,
    cpuPeriodUs: 50_000,
    memoryLimitBytes: 128 * 1024 * 1024,
  });
});

// test/e2e/common/node/pod_level_resources.go: the pod cgroup follows totalPodResources; as
// cgroup v1 values (cpu.shares, cpu.cfs_quota_us per 100 ms, memory.limit_in_bytes).
const Mi = 1024 * 1024;
const podLevelCases: [string, Pod, ReturnType<typeof podCgroupLimits>][] = [
  [
    'Guaranteed, no container resources',
    podLevel(cpuMemory('100m', '100m', '100Mi', '100Mi'), [withResources('c1'), withResources('c2')]),
    { cpuShares: 102, cpuQuotaUs: 10_000, memoryLimitBytes: 100 * Mi },
  ],
  [
    'Guaranteed, 1 container with resources',
    podLevel(cpuMemory('100m', '100m', '100Mi', '100Mi'), [
      withResources('c1', cpuMemory('50m', '100m', '50Mi', '100Mi')),
      withResources('c2'),
    ]),
    { cpuShares: 102, cpuQuotaUs: 10_000, memoryLimitBytes: 100 * Mi },
  ],
  [
    'Guaranteed, pod limits only',
    podLevel(cpuMemory(undefined, '100m', undefined, '100Mi'), [withResources('c1'), withResources('c2')]),
    { cpuShares: 102, cpuQuotaUs: 10_000, memoryLimitBytes: 100 * Mi },
  ],
  [
    'Burstable, pod limits, container limits: shares from the containers',
    podLevel(cpuMemory(undefined, '100m', undefined, '100Mi'), [
      withResources('c1', cpuMemory(undefined, '50m', undefined, '50Mi')),
      withResources('c2', cpuMemory(undefined, '30m', undefined, '30Mi')),
    ]),
    { cpuShares: 81, cpuQuotaUs: 10_000, memoryLimitBytes: 100 * Mi },
  ],
  [
    'Burstable, pod requests, no container resources: shares only',
    podLevel(cpuMemory('100m', undefined, '100Mi'), [withResources('c1'), withResources('c2')]),
    { cpuShares: 102 },
  ],
  [
    'Burstable, pod requests, containers with partial limits: unlimited',
    podLevel(cpuMemory('100m', undefined, '100Mi'), [
      withResources('c1', cpuMemory('50m', '50m', '50Mi', '50Mi')),
      withResources('c2', cpuMemory('30m', undefined, '30Mi')),
    ]),
    { cpuShares: 102 },
  ],
  [
    'Burstable, pod requests, every container limited: their sum',
    podLevel(cpuMemory('100m', undefined, '100Mi'), [
      withResources('c1', cpuMemory('30m', '30m', '30Mi', '30Mi')),
      withResources('c2', cpuMemory('30m', '30m', '30Mi', '30Mi')),
    ]),
    { cpuShares: 102, cpuQuotaUs: 6000, memoryLimitBytes: 60 * Mi },
  ],
  [
    'Burstable, pod requests and limits',
    podLevel(cpuMemory('50m', '100m', '50Mi', '100Mi'), [
      withResources('c1', cpuMemory('20m', '100m', '20Mi', '100Mi')),
      withResources('c2', cpuMemory('30m', '100m', '30Mi', '100Mi')),
    ]),
    { cpuShares: 51, cpuQuotaUs: 10_000, memoryLimitBytes: 100 * Mi },
  ],
  [
    'Burstable, partial pod requests: cpu shares from the containers',
    podLevel(cpuMemory(undefined, '200m', '200Mi', '200Mi'), [
      withResources('c1', cpuMemory('100m', '100m', '100Mi', '100Mi')),
      withResources('c2'),
    ]),
    { cpuShares: 102, cpuQuotaUs: 20_000, memoryLimitBytes: 200 * Mi },
  ],
  [
    'Burstable, pod memory limit only: no quota without cpu limits',
    podLevel(cpuMemory('100m', undefined, undefined, '64Mi'), [withResources('c1')]),
    { cpuShares: 102, memoryLimitBytes: 64 * Mi },
  ],
];
for (const [name, p, want] of podLevelCases)
  test(`podCgroupLimits with pod-level resources: ${name}`, () => assert.deepEqual(podCgroupLimits(p), want));

test('podCgroupLimits: overhead and hugepages (ResourceConfigForPod, HugePageLimits)', () => {
  const p: Pod = {
    spec: {
      containers: [
        withResources('c', { requests: { 'hugepages-2Mi': '4Mi' }, limits: { cpu: '1', memory: '64Mi', 'hugepages-2Mi': '4Mi' } }),
      ],
      overhead: { cpu: '100m', memory: '10Mi' },
    },
  };
  assert.deepEqual(podCgroupLimits(p), {
    cpuShares: 1126,
    cpuQuotaUs: 110_000,
    memoryLimitBytes: 74 * Mi,
    hugePageLimits: { '2MB': 4 * Mi },
  });
  assert.deepEqual([2 * Mi, 1024 * Mi, 64 * 1024].map(hugePageSizeName), ['2MB', '1GB', '64KB']);
});

test("containerHugepageLimits (GetHugepageLimitsFromResources): every host size, 0 unless the container's limits, else the pod's, name it", () => {
  const sizes = ['2MB', '1GB'];
  const own = withResources('c', { limits: { 'hugepages-2Mi': '4Mi' } });
  const none = withResources('d', { limits: { memory: '64Mi' } });
  const cases: [string, Pod, ReturnType<typeof containerHugepageLimits>][] = [
    [
      'none asked: 0 for each size',
      pod([none]),
      [
        { pageSize: '2MB', limit: 0 },
        { pageSize: '1GB', limit: 0 },
      ],
    ],
    [
      "the container's own",
      pod([own]),
      [
        { pageSize: '2MB', limit: 4 * Mi },
        { pageSize: '1GB', limit: 0 },
      ],
    ],
    [
      "the pod's limit for a container that names none",
      podLevel({ limits: { 'hugepages-1Gi': '2Gi' } }, [none]),
      [
        { pageSize: '2MB', limit: 0 },
        { pageSize: '1GB', limit: 2 * 1024 * Mi },
      ],
    ],
    [
      "the container's over the pod's",
      podLevel({ limits: { 'hugepages-2Mi': '8Mi' } }, [own]),
      [
        { pageSize: '2MB', limit: 4 * Mi },
        { pageSize: '1GB', limit: 0 },
      ],
    ],
  ];
  for (const [name, p, want] of cases)
    assert.deepEqual(containerHugepageLimits(p, p.spec!.containers[0]!.resources?.limits, sizes), want, name);
  assert.deepEqual(containerHugepageLimits(pod([own]), own.resources?.limits, []), [], 'a host without huge pages: none');
});

test('a v1 pod cgroup at another CFS period: written, read back with it, and the same limits again', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-cg-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mountV1(root, 'cpu', 'memory');
  const limits = { cpuShares: 512, cpuQuotaUs: 25_000, cpuPeriodUs: 50_000 };
  ensurePodCgroup('/kubepods/podp', limits, root);
  assert.equal(readFileSync(join(root, 'cpu/kubepods/podp/cpu.cfs_period_us'), 'utf8'), '50000');
  writeFileSync(join(root, 'memory/kubepods/podp/memory.limit_in_bytes'), String(2 ** 63 - 4096));
  assert.deepEqual(readPodCgroup('/kubepods/podp', root), limits);
});

test('ensurePodCgroup writes the cpu and memory files of a v1 hierarchy, and skips other hierarchies', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-cg-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  ensurePodCgroup('/kubepods/podu', { cpuShares: 2 }, root); // no controllers: nothing happens
  mountV1(root, 'cpu', 'memory');
  ensurePodCgroup('/kubepods/podu', { cpuShares: 512, cpuQuotaUs: 50_000, memoryLimitBytes: 1024 }, root);
  const read = (f: string) => readFileSync(join(root, f), 'utf8');
  assert.deepEqual(
    [read('cpu/kubepods/podu/cpu.shares'), read('cpu/kubepods/podu/cpu.cfs_quota_us'), read('memory/kubepods/podu/memory.limit_in_bytes')],
    ['512', '50000', '1024'],
  );
});

test('ensurePodCgroup limits every huge page size when the hugetlb controller is there: 0 unless asked for', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-cg-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mountV1(root, 'cpu', 'memory', 'hugetlb');
  ensurePodCgroup(
    '/kubepods/podh',
    { cpuShares: 2, hugePageLimits: { '2MB': 4194304 } },
    root,
    cgroupHierarchy(root, () => ['2MB', '1GB']),
  );
  const read = (f: string) => readFileSync(join(root, 'hugetlb/kubepods/podh', f), 'utf8');
  assert.deepEqual([read('hugetlb.2MB.limit_in_bytes'), read('hugetlb.1GB.limit_in_bytes')], ['4194304', '0']);
  const sysfs = mkdtempSync(join(tmpdir(), 'kts-hp-'));
  t.after(() => rmSync(sysfs, { recursive: true, force: true }));
  for (const d of ['hugepages-2048kB', 'hugepages-1048576kB', 'other']) mkdirSync(join(sysfs, d));
  assert.deepEqual(hugePageSizes(sysfs).sort(), ['1GB', '2MB']);
  assert.deepEqual(hugePageSizes(join(sysfs, 'absent')), []);
});

// podContainerManager.EnsureExists: the kubelet's podPidsLimit on every pod's cgroup, when above 0.
test('podPidsLimit: pids.max of the pod cgroup when above 0, whatever the QoS', (t) => {
  const guaranteed: Pod = { spec: { containers: [withResources('c', { limits: { cpu: '1', memory: '64Mi' } })] } };
  const bestEffort: Pod = { spec: { containers: [withResources('c')] } };
  assert.equal(podCgroupLimits(guaranteed, 100).pidsLimit, 100);
  assert.equal(podCgroupLimits(bestEffort, 100).pidsLimit, 100);
  assert.equal(podCgroupLimits(guaranteed, -1).pidsLimit, undefined, '-1: no limit');
  assert.equal(podCgroupLimits(guaranteed, 0).pidsLimit, undefined, '0: no limit');
  assert.equal(podCgroupLimits(guaranteed).pidsLimit, undefined);
  const root = mkdtempSync(join(tmpdir(), 'kts-cg-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mountV1(root, 'cpu', 'memory');
  ensurePodCgroup('/kubepods/podp', { cpuShares: 2, pidsLimit: 100 }, root);
  assert.ok(!existsSync(join(root, 'pids')), 'no pids controller: nothing written');
  mountV1(root, 'pids');
  ensurePodCgroup('/kubepods/podp', { cpuShares: 2, pidsLimit: 100 }, root);
  assert.equal(readFileSync(join(root, 'pids/kubepods/podp/pids.max'), 'utf8'), '100');
});

test('removePodCgroup removes a pod cgroup with the empty container cgroups below it, and says when one is busy', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'cg-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const pod = '/kubepods/besteffort/podu1';
  mountV1(root, 'memory', 'cpu', 'pids');
  // A container cgroup left by a cancelled task creation, in two controllers.
  for (const ctl of ['memory', 'cpu']) mkdirSync(`${root}/${ctl}${pod}/94eebd85`, { recursive: true });
  assert.equal(cgroupPresent(pod, root), true);
  assert.equal(cgroupPresent('/kubepods/besteffort/podnone', root), false);
  assert.equal(removePodCgroup(pod, root), true);
  assert.equal(cgroupPresent(pod, root), false);
  assert.equal(existsSync(`${root}/memory${pod}`), false);
  assert.equal(existsSync(`${root}/cpu${pod}`), false);
  assert.equal(existsSync(`${root}/memory/kubepods/besteffort`), true, 'only the pod cgroup goes');
  // A busy one: a file stands for what makes rmdir refuse (on cgroupfs, a process).
  mkdirSync(`${root}/pids${pod}/busy`, { recursive: true });
  writeFileSync(`${root}/pids${pod}/busy/other`, '');
  assert.equal(removePodCgroup(pod, root), false);
  assert.equal(existsSync(`${root}/pids${pod}/busy`), true);
  assert.equal(removePodCgroup('/kubepods/besteffort/podnone', root), true, 'an absent one is gone');
});

// cgroup v2 (a unified hierarchy: cgroup.controllers at its root), as upstream's cgroupV2impl
// has libcontainer's fs2 make it. A directory stands for the cgroupfs: the kernel's own files
// (cgroup.subtree_control, cpu.weight, ...) are plain files here.
test('cgroup v2: the pod cgroup made below parents that enable its controllers, read, resized, removed', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-cg2-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, 'cgroup.controllers'), 'cpuset cpu io memory hugetlb pids\n');
  const h = cgroupHierarchy(root, () => ['2MB']);
  assert.equal(h.version, 2);
  const pod = '/kubepods/burstable/podu';
  ensurePodCgroup(pod, { cpuShares: 1024, cpuQuotaUs: 50_000, memoryLimitBytes: 2 ** 26, pidsLimit: 20 }, root, h);
  const read = (f: string) => readFileSync(join(root, f), 'utf8');
  const all = '+cpuset +cpu +io +memory +hugetlb +pids';
  assert.deepEqual(['cgroup.subtree_control', 'kubepods/cgroup.subtree_control', 'kubepods/burstable/cgroup.subtree_control'].map(read), [
    all,
    all,
    all,
  ]);
  assert.ok(!existsSync(join(root, pod, 'cgroup.subtree_control')), 'the pod cgroup itself: runc enables what its containers need');
  assert.deepEqual(
    ['cpu.weight', 'cpu.max', 'memory.max', 'hugetlb.2MB.max', 'pids.max'].map((f) => read(`${pod}/${f}`)),
    ['39', '50000 100000', '67108864', '0', '20'],
  );
  assert.ok(!existsSync(join(root, pod, 'hugetlb.2MB.rsvd.max')) || read(`${pod}/hugetlb.2MB.rsvd.max`) === '0');
  assert.deepEqual(readPodCgroup(pod, root, h), { cpuShares: 998, cpuQuotaUs: 50_000, memoryLimitBytes: 2 ** 26 });

  writePodCgroup(pod, { cpuShares: 2048 }, root, h);
  assert.deepEqual(
    ['cpu.weight', 'cpu.max', 'memory.max'].map((f) => read(`${pod}/${f}`)),
    ['79', 'max 100000', 'max'],
  );
  assert.deepEqual(readPodCgroup(pod, root, h), { cpuShares: 2046 });

  writeFileSync(join(root, pod, 'memory.current'), '12345\n');
  assert.equal(readMemoryUsage(pod, root, h), 12345);
  for (const f of readdirSync(join(root, pod))) rmSync(join(root, pod, f)); // the kernel's files go with the directory
  mkdirSync(join(root, pod, 'c1'));
  assert.equal(removePodCgroup(pod, root), true);
  assert.equal(existsSync(join(root, pod)), false);
  assert.equal(existsSync(join(root, 'kubepods/burstable')), true, 'only the pod cgroup goes');
});

// upstream's enforceExistingCgroup with the cgroupfs driver: Validate, then Update.
test('a reserved cgroup: refused in upstream words while a hierarchy lacks it, then held to its reservation', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-res-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mountV1(root, 'cpu', 'memory', 'pids', 'blkio');
  const m = cgroupfsManager(root);
  mkdirSync(join(root, 'cpu', 'system.slice'), { recursive: true });
  await assert.rejects(
    m.setReserved('/system.slice', { cpuShares: 512 }),
    new Error(`cgroup ["system.slice"] has some missing paths: ${root}/memory/system.slice, ${root}/pids/system.slice`),
    'blkio is not among the hierarchies upstream looks in',
  );
  for (const c of ['memory', 'pids']) mkdirSync(join(root, c, 'system.slice'));
  await m.setReserved('/system.slice', { cpuShares: 512, memoryLimitBytes: 2 ** 30, pidsLimit: 100 });
  const read = (f: string) => readFileSync(join(root, f), 'utf8');
  assert.deepEqual(['cpu/system.slice/cpu.shares', 'memory/system.slice/memory.limit_in_bytes', 'pids/system.slice/pids.max'].map(read), [
    '512',
    '1073741824',
    '100',
  ]);
  assert.ok(!existsSync(join(root, 'cpu/system.slice/cpu.cfs_quota_us')), 'no quota');
});

test('validateCgroup on cgroup v2: the controllers the root offers and the kubelet uses, enabled in the cgroup', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-res2-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
  const h = cgroupHierarchy(root, () => []);
  assert.throws(
    () => validateCgroup('/kube.slice', ['kube'], root, h),
    new Error(`could not read controllers for cgroup ["kube"]: open ${root}/kube.slice/cgroup.controllers: no such file or directory`),
  );
  mkdirSync(join(root, 'kube.slice'));
  writeFileSync(join(root, 'kube.slice/cgroup.controllers'), 'cpu io memory\n');
  assert.throws(
    () => validateCgroup('/kube.slice', ['kube'], root, h),
    new Error('cgroup ["kube"] has some missing controllers: cpuset, pids'),
  );
  writeFileSync(join(root, 'kube.slice/cgroup.controllers'), 'cpuset cpu io memory pids\n');
  validateCgroup('/kube.slice', ['kube'], root, h);
});
