import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cgroupReader,
  cgroupV1Sample,
  cgroupV2Sample,
  memoryFromMeminfo,
  parseKeyed,
  parsePsi,
  parseSwapLimit,
  type CgroupFileReader,
} from './cgroup.ts';

const files =
  (m: Record<string, string>): CgroupFileReader =>
  (controller, file) =>
    m[controller ? `${controller}/${file}` : file];

test('parseKeyed reads "key value" lines and skips the rest', () => {
  assert.deepEqual(parseKeyed('cache 10\nrss 20\n\nbad line here\nneg -1\n'), { cache: 10, rss: 20 });
  assert.deepEqual(parseKeyed(undefined), {});
});

test('cgroupV1Sample: cadvisor figures from a v1 hierarchy', () => {
  const cases: [name: string, files: Record<string, string>, want: ReturnType<typeof cgroupV1Sample>][] = [
    [
      'a container with a limit and a quota',
      {
        'cpuacct/cpuacct.usage': '5000000000\n',
        'cpuacct/cpuacct.usage_user': '3000000000\n',
        'cpuacct/cpuacct.usage_sys': '2000000000\n',
        'cpu/cpu.shares': '512\n',
        'cpu/cpu.cfs_quota_us': '50000\n',
        'cpu/cpu.cfs_period_us': '100000\n',
        'memory/memory.usage_in_bytes': '1000\n',
        'memory/memory.max_usage_in_bytes': '1500\n',
        'memory/memory.failcnt': '2\n',
        'memory/memory.limit_in_bytes': '4096\n',
        'memory/memory.memsw.limit_in_bytes': '8192\n',
        'memory/memory.stat':
          'cache 1\nrss 2\nmapped_file 3\npgfault 4\npgmajfault 5\ntotal_cache 300\ntotal_rss 200\ntotal_mapped_file 30\ntotal_swap 7\ntotal_pgfault 40\ntotal_pgmajfault 6\ntotal_inactive_file 100\n',
      },
      {
        cpu: { usageNs: 5e9, userNs: 3e9, systemNs: 2e9, shares: 512, quotaUs: 50000, periodUs: 100000 },
        memory: {
          usageBytes: 1000,
          workingSetBytes: 900,
          rssBytes: 200,
          cacheBytes: 300,
          mappedFileBytes: 30,
          swapBytes: 7,
          pageFaults: 40,
          majorPageFaults: 6,
          localPageFaults: 4,
          localMajorPageFaults: 5,
          maxUsageBytes: 1500,
          failcnt: 2,
          limitBytes: 4096,
          swapLimitBytes: 8192,
        },
      },
    ],
    [
      'unlimited, no quota, user/system only as ticks',
      {
        'cpuacct/cpuacct.usage': '7\n',
        'cpuacct/cpuacct.stat': 'user 3\nsystem 1\n',
        'cpu/cpu.cfs_quota_us': '-1\n',
        'memory/memory.usage_in_bytes': '50\n',
        'memory/memory.limit_in_bytes': '9223372036854771712\n',
        'memory/memory.memsw.limit_in_bytes': '9223372036854771712\n',
        'memory/memory.stat': 'total_inactive_file 80\n',
      },
      {
        cpu: { usageNs: 7, userNs: 30_000_000, systemNs: 10_000_000, shares: undefined, quotaUs: undefined, periodUs: undefined },
        memory: {
          usageBytes: 50,
          workingSetBytes: 0,
          rssBytes: 0,
          cacheBytes: 0,
          mappedFileBytes: 0,
          swapBytes: 0,
          pageFaults: 0,
          majorPageFaults: 0,
          localPageFaults: 0,
          localMajorPageFaults: 0,
          maxUsageBytes: undefined,
          failcnt: undefined,
          limitBytes: undefined,
          swapLimitBytes: undefined,
        },
      },
    ],
    [
      'no swap accounting: no memsw files, no swap figures, no swap to use',
      {
        'memory/memory.usage_in_bytes': '50\n',
        'memory/memory.stat': 'rss 10\n',
      },
      {
        memory: {
          usageBytes: 50,
          workingSetBytes: 50,
          rssBytes: 10,
          cacheBytes: 0,
          mappedFileBytes: 0,
          swapBytes: 0,
          pageFaults: 0,
          majorPageFaults: 0,
          localPageFaults: 0,
          localMajorPageFaults: 0,
          maxUsageBytes: undefined,
          failcnt: undefined,
          limitBytes: undefined,
          swapLimitBytes: 0,
        },
      },
    ],
    ['a cgroup that is gone', {}, {}],
  ];
  for (const [name, f, want] of cases) assert.deepEqual(cgroupV1Sample(files(f)), want, name);
});

const psi = (some: [number, number, number, number], full: [number, number, number, number]) => {
  const line = ([avg10, avg60, avg300, total]: number[]) => ({ total: total!, avg10: avg10!, avg60: avg60!, avg300: avg300! });
  return { some: line(some), full: line(full) };
};

test('cgroupV2Sample: the same figures from the unified hierarchy, with pressure and swap', () => {
  const got = cgroupV2Sample(
    files({
      'cpu.stat': 'usage_usec 2000\nuser_usec 1500\nsystem_usec 500\nnr_periods 0\n',
      'cpu.weight': '100\n',
      'cpu.max': '50000 100000\n',
      'memory.current': '1000\n',
      'memory.max': 'max\n',
      'memory.peak': '1200\n',
      'memory.events': 'low 0\nhigh 0\nmax 3\noom 0\n',
      'memory.swap.current': '9\n',
      'memory.swap.max': '4096\n',
      'memory.stat': 'anon 200\nfile 300\nfile_mapped 30\npgfault 40\npgmajfault 6\ninactive_file 100\n',
      'cpu.pressure': 'some avg10=1.50 avg60=0.75 avg300=0.10 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n',
      'memory.pressure': 'some avg10=0.00 avg60=0.00 avg300=0.00 total=77\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=55\n',
      'io.pressure': 'some avg10=12.34 avg60=5.00 avg300=1.00 total=9999999\nfull avg10=10.00 avg60=4.00 avg300=0.50 total=8888888\n',
    }),
  );
  assert.deepEqual(got, {
    cpu: { usageNs: 2_000_000, userNs: 1_500_000, systemNs: 500_000, shares: 2597, quotaUs: 50000, periodUs: 100000 },
    memory: {
      usageBytes: 1000,
      workingSetBytes: 900,
      rssBytes: 200,
      cacheBytes: 300,
      mappedFileBytes: 30,
      swapBytes: 9,
      pageFaults: 40,
      majorPageFaults: 6,
      localPageFaults: 40,
      localMajorPageFaults: 6,
      maxUsageBytes: 1200,
      failcnt: 3,
      limitBytes: undefined,
      swapLimitBytes: 4096,
    },
    psi: {
      cpu: psi([1.5, 0.75, 0.1, 123456], [0, 0, 0, 0]),
      memory: psi([0, 0, 0, 77], [0, 0, 0, 55]),
      io: psi([12.34, 5, 1, 9999999], [10, 4, 0.5, 8888888]),
    },
  });
  const bare = cgroupV2Sample(files({ 'cpu.stat': 'usage_usec 1\n', 'memory.current': '5\n', 'memory.swap.max': 'max\n' }));
  assert.deepEqual(bare.psi, { cpu: undefined, memory: undefined, io: undefined }, 'PSI off: no pressure files');
  assert.equal(bare.memory?.swapLimitBytes, undefined, 'swap.max "max": unlimited');
  assert.equal(
    cgroupV2Sample(files({ 'cpu.stat': 'usage_usec 1\n', 'memory.current': '5\n' })).memory?.swapLimitBytes,
    0,
    'no swap accounting',
  );
  assert.deepEqual(
    cgroupV2Sample(files({ 'cpu.pressure': 'some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n' })),
    {},
    'a cgroup that is gone reads no pressure',
  );
  assert.equal(cgroupV2Sample(files({ 'cpu.stat': 'usage_usec 1\n', 'cpu.max': 'max 100000\n' })).cpu?.quotaUs, undefined, 'no quota');
});

test("parsePsi: the kernel's pressure files", () => {
  const cases: [name: string, text: string | undefined, want: ReturnType<typeof parsePsi>][] = [
    [
      'some and full',
      'some avg10=0.12 avg60=3.40 avg300=56.78 total=9007199254740991\nfull avg10=0.01 avg60=0.02 avg300=0.03 total=42\n',
      psi([0.12, 3.4, 56.78, 9007199254740991], [0.01, 0.02, 0.03, 42]),
    ],
    [
      'cpu.pressure before Linux 5.13: no "full" line, zeros as runc leaves them',
      'some avg10=2.00 avg60=1.00 avg300=0.50 total=1000\n',
      psi([2, 1, 0.5, 1000], [0, 0, 0, 0]),
    ],
    [
      'fields in any order, unknown and malformed ones skipped',
      'full total=7 avg300=0.30 bogus=1 avg10= avg60\nsome total=3\n',
      psi([0, 0, 0, 3], [0, 0, 0.3, 7]),
    ],
    ['no file (v1, or PSI off)', undefined, undefined],
    ['an empty or foreign file', 'nothing here\n', undefined],
  ];
  for (const [name, text, want] of cases) assert.deepEqual(parsePsi(text), want, name);
});

test("parseSwapLimit: cadvisor's swap limit from memory.swap.max or memory.memsw.limit_in_bytes", () => {
  const cases: [text: string | undefined, want: number | undefined][] = [
    ['1073741824\n', 1073741824],
    ['0\n', 0],
    ['max\n', undefined],
    ['9223372036854771712\n', undefined],
    [undefined, 0],
    ['garbage', 0],
  ];
  for (const [text, want] of cases) assert.equal(parseSwapLimit(text), want, String(text));
});

test('memoryFromMeminfo: the node when the root cgroup has no memory files', () => {
  const m = memoryFromMeminfo(
    'MemTotal:       1000 kB\nMemFree:         200 kB\nMemAvailable:    600 kB\nCached:  100 kB\nAnonPages: 50 kB\n',
  );
  assert.equal(m.usageBytes, 800 * 1024);
  assert.equal(m.workingSetBytes, 400 * 1024);
  assert.equal(m.rssBytes, 50 * 1024);
  assert.equal(m.cacheBytes, 100 * 1024);
});

test('cgroupReader on a v1 tree: samples, existence, pids and process counts', () => {
  const root = mkdtempSync(join(tmpdir(), 'cgroup-'));
  const put = (path: string, content: string) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  };
  put('cpuacct/kubepods/podu/cgroup.procs', '');
  put('cpuacct/kubepods/podu/sandbox/cgroup.procs', '42\n');
  put('cpuacct/kubepods/podu/app/cgroup.procs', '43\n44\n');
  put('cpuacct/kubepods/podu/cpuacct.usage', '123\n');
  put('memory/kubepods/podu/memory.usage_in_bytes', '10\n');
  put('memory/kubepods/podu/memory.memsw.limit_in_bytes', '4096\n');
  const r = cgroupReader(root);
  assert.equal(r.version, 1);
  assert.equal(r.exists('/kubepods/podu'), true);
  assert.equal(r.exists('/kubepods/podv'), false);
  assert.deepEqual(r.pids('/kubepods/podu/sandbox'), [42]);
  assert.equal(r.processCount('/kubepods/podu'), 3);
  assert.equal(r.sample('/kubepods/podu').cpu?.usageNs, 123);
  assert.equal(r.sample('/kubepods/podu').memory?.usageBytes, 10);
  assert.equal(r.sample('/kubepods/podu').memory?.swapLimitBytes, 4096, 'memsw from the memory hierarchy');
  assert.equal(r.sample('/kubepods/podu').psi, undefined, 'v1: no pressure files');
  assert.deepEqual(r.sample('/kubepods/gone'), {});
});

test('cgroupReader on a v2 tree: pressure and swap from the unified hierarchy, the root included', () => {
  const root = mkdtempSync(join(tmpdir(), 'cgroup2-'));
  const put = (path: string, content: string) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  };
  const pressure = (total: number) =>
    `some avg10=1.00 avg60=0.50 avg300=0.25 total=${total}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n`;
  put('cgroup.controllers', 'cpu io memory pids\n');
  put('cpu.stat', 'usage_usec 10\n');
  put('cpu.pressure', pressure(1));
  put('memory.pressure', pressure(2));
  put('io.pressure', pressure(3));
  put('kubepods/podu/cpu.stat', 'usage_usec 5\n');
  put('kubepods/podu/memory.current', '100\n');
  put('kubepods/podu/memory.swap.current', '7\n');
  put('kubepods/podu/memory.swap.max', 'max\n');
  put('kubepods/podu/io.pressure', pressure(9));
  const r = cgroupReader(root);
  assert.equal(r.version, 2);
  const top = r.sample('/');
  assert.equal(top.memory, undefined, 'the root has no memory.current (the collector falls back to /proc/meminfo)');
  assert.deepEqual([top.psi?.cpu?.some.total, top.psi?.memory?.some.total, top.psi?.io?.some.total], [1, 2, 3]);
  const pod = r.sample('/kubepods/podu');
  assert.deepEqual([pod.psi?.cpu, pod.psi?.memory, pod.psi?.io?.some.total], [undefined, undefined, 9]);
  assert.deepEqual([pod.memory?.swapBytes, pod.memory?.swapLimitBytes], [7, undefined]);
});
