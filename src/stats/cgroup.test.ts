import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  blkioV1,
  cgroupReader,
  cgroupV1Sample,
  cgroupV2Sample,
  memoryFromMeminfo,
  parseBlkioV1,
  parseIoStat,
  parseKeyed,
  parsePids,
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
        'cpuacct/cpuacct.stat': 'user 300\nsystem 200\n',
        'cpu/cpu.shares': '512\n',
        'cpu/cpu.cfs_quota_us': '50000\n',
        'cpu/cpu.cfs_period_us': '100000\n',
        'cpu/cpu.stat': 'nr_periods 10\nnr_throttled 2\nthrottled_time 3000\nnr_bursts 1\nburst_time 500\n',
        'memory/memory.usage_in_bytes': '1000\n',
        'memory/memory.kmem.usage_in_bytes': '64\n',
        'memory/memory.max_usage_in_bytes': '1500\n',
        'memory/memory.failcnt': '2\n',
        'memory/memory.limit_in_bytes': '4096\n',
        'memory/memory.memsw.limit_in_bytes': '8192\n',
        'memory/memory.soft_limit_in_bytes': '2048\n',
        'memory/memory.oom_control': 'oom_kill_disable 0\nunder_oom 0\noom_kill 1\n',
        'memory/memory.stat':
          'cache 1\nrss 2\nmapped_file 3\npgfault 4\npgmajfault 5\ntotal_cache 300\ntotal_rss 200\ntotal_mapped_file 30\ntotal_swap 7\ntotal_pgfault 40\ntotal_pgmajfault 6\ntotal_active_file 150\ntotal_inactive_file 100\n',
        'blkio/blkio.bfq.io_serviced_recursive': 'Total 0\n',
        'blkio/blkio.throttle.io_serviced_recursive': '254:0 Read 3\n254:0 Write 1\n254:0 Total 4\nTotal 4\n',
        'blkio/blkio.throttle.io_service_bytes_recursive': '254:0 Read 12288\n254:0 Write 4096\n254:0 Total 16384\nTotal 16384\n',
        'pids/pids.current': '3\n',
        'pids/pids.max': '1024\n',
      },
      {
        cpu: {
          usageNs: 5e9,
          userNs: 3e9,
          systemNs: 2e9,
          shares: 512,
          quotaUs: 50000,
          periodUs: 100000,
          cfs: { periods: 10, throttledPeriods: 2, throttledNs: 3000, bursts: 1, burstNs: 500 },
        },
        memory: {
          usageBytes: 1000,
          workingSetBytes: 900,
          rssBytes: 200,
          cacheBytes: 300,
          mappedFileBytes: 30,
          swapBytes: 7,
          activeFileBytes: 150,
          inactiveFileBytes: 100,
          kernelBytes: 64,
          pageFaults: 40,
          majorPageFaults: 6,
          localPageFaults: 4,
          localMajorPageFaults: 5,
          maxUsageBytes: 1500,
          failcnt: 2,
          limitBytes: 4096,
          swapLimitBytes: 8192,
          reservationBytes: 2048,
          oomKills: 1,
        },
        blkio: {
          serviced: [{ major: 254, minor: 0, stats: { Read: 3, Write: 1, Total: 4 } }],
          serviceBytes: [{ major: 254, minor: 0, stats: { Read: 12288, Write: 4096, Total: 16384 } }],
        },
        pids: { current: 3, max: 1024 },
      },
    ],
    [
      'unlimited, no quota',
      {
        'cpuacct/cpuacct.usage': '7\n',
        'cpuacct/cpuacct.stat': 'user 3\nsystem 1\n',
        'cpu/cpu.cfs_quota_us': '-1\n',
        'memory/memory.usage_in_bytes': '50\n',
        'memory/memory.limit_in_bytes': '9223372036854771712\n',
        'memory/memory.memsw.limit_in_bytes': '9223372036854771712\n',
        'memory/memory.soft_limit_in_bytes': '9223372036854771712\n',
        'memory/memory.stat': 'total_inactive_file 80\n',
        'blkio/blkio.throttle.io_serviced_recursive': 'Total 0\n',
        'blkio/blkio.throttle.io_serviced': 'Total 0\n',
        'pids/pids.current': '0\n',
        'pids/pids.max': 'max\n',
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
          activeFileBytes: 0,
          inactiveFileBytes: 80,
          kernelBytes: 0,
          pageFaults: 0,
          majorPageFaults: 0,
          localPageFaults: 0,
          localMajorPageFaults: 0,
          maxUsageBytes: undefined,
          failcnt: undefined,
          limitBytes: undefined,
          swapLimitBytes: undefined,
          reservationBytes: undefined,
          oomKills: undefined,
        },
        pids: { current: 0, max: 0 },
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
          activeFileBytes: 0,
          inactiveFileBytes: 0,
          kernelBytes: 0,
          pageFaults: 0,
          majorPageFaults: 0,
          localPageFaults: 0,
          localMajorPageFaults: 0,
          maxUsageBytes: undefined,
          failcnt: undefined,
          limitBytes: undefined,
          swapLimitBytes: 0,
          reservationBytes: undefined,
          oomKills: undefined,
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
      'cpu.stat':
        'usage_usec 2000\nuser_usec 1500\nsystem_usec 500\nnr_periods 4\nnr_throttled 1\nthrottled_usec 7\nnr_bursts 2\nburst_usec 3\n',
      'cpu.weight': '100\n',
      'cpu.max': '50000 100000\n',
      'memory.current': '1000\n',
      'memory.max': 'max\n',
      'memory.peak': '1200\n',
      'memory.events': 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n',
      'memory.min': '1024\n',
      'io.stat': '254:0 rbytes=8192 wbytes=4096 rios=2 wios=1 dbytes=0 dios=0\n7:0 rbytes=512 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n',
      'pids.current': '4\n',
      'pids.max': 'max\n',
      'memory.swap.current': '9\n',
      'memory.swap.max': '4096\n',
      'memory.stat': 'anon 200\nfile 300\nkernel 64\nfile_mapped 30\npgfault 40\npgmajfault 6\nactive_file 150\ninactive_file 100\n',
      'cpu.pressure': 'some avg10=1.50 avg60=0.75 avg300=0.10 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n',
      'memory.pressure': 'some avg10=0.00 avg60=0.00 avg300=0.00 total=77\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=55\n',
      'io.pressure': 'some avg10=12.34 avg60=5.00 avg300=1.00 total=9999999\nfull avg10=10.00 avg60=4.00 avg300=0.50 total=8888888\n',
    }),
  );
  assert.deepEqual(got, {
    cpu: {
      usageNs: 2_000_000,
      userNs: 1_500_000,
      systemNs: 500_000,
      shares: 2597,
      quotaUs: 50000,
      periodUs: 100000,
      cfs: { periods: 4, throttledPeriods: 1, throttledNs: 7000, bursts: 2, burstNs: 3000 },
    },
    memory: {
      usageBytes: 1000,
      workingSetBytes: 900,
      rssBytes: 200,
      cacheBytes: 300,
      mappedFileBytes: 30,
      swapBytes: 9,
      activeFileBytes: 150,
      inactiveFileBytes: 100,
      kernelBytes: 64,
      pageFaults: 40,
      majorPageFaults: 6,
      localPageFaults: 40,
      localMajorPageFaults: 6,
      maxUsageBytes: 1200,
      failcnt: 3,
      limitBytes: undefined,
      swapLimitBytes: 4096,
      reservationBytes: 1024,
      oomKills: 1,
    },
    blkio: {
      serviceBytes: [
        { major: 254, minor: 0, stats: { Read: 8192, Write: 4096 } },
        { major: 7, minor: 0, stats: { Read: 512, Write: 0 } },
      ],
      serviced: [
        { major: 254, minor: 0, stats: { Read: 2, Write: 1 } },
        { major: 7, minor: 0, stats: { Read: 1, Write: 0 } },
      ],
    },
    pids: { current: 4, max: 0 },
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

test('parseBlkioV1: a blkio file by device, as cadvisor groups it', () => {
  const cases: [name: string, text: string | undefined, want: ReturnType<typeof parseBlkioV1>][] = [
    [
      'two devices, every operation',
      '8:0 Read 10\n8:0 Write 20\n8:0 Sync 5\n8:0 Async 25\n8:0 Discard 0\n8:0 Total 30\n254:16 Read 1\n254:16 Total 1\nTotal 31\n',
      [
        { major: 8, minor: 0, stats: { Read: 10, Write: 20, Sync: 5, Async: 25, Discard: 0, Total: 30 } },
        { major: 254, minor: 16, stats: { Read: 1, Total: 1 } },
      ],
    ],
    ['a line without an operation (blkio.time_recursive) is a Count', '8:0 1234\n', [{ major: 8, minor: 0, stats: { Count: 1234 } }]],
    ['no I/O: only the Total line', 'Total 0\n', []],
    ['malformed lines are skipped', '8:0 Read x\ngarbage\n8:0 Write 2\n', [{ major: 8, minor: 0, stats: { Write: 2 } }]],
    ['no file', undefined, undefined],
  ];
  for (const [name, text, want] of cases) assert.deepEqual(parseBlkioV1(text), want, name);
});

test("blkioV1: libcontainer's sources in order, the first that lists a device", () => {
  const dev = (n: number) => `8:0 Read ${n}\n8:0 Write 0\n8:0 Total ${n}\nTotal ${n}\n`;
  const cases: [name: string, files: Record<string, string>, want: number | undefined][] = [
    [
      'BFQ when it counts',
      {
        'blkio/blkio.bfq.io_serviced_recursive': dev(1),
        'blkio/blkio.bfq.io_service_bytes_recursive': dev(100),
        'blkio/blkio.throttle.io_serviced_recursive': dev(2),
      },
      100,
    ],
    [
      'BFQ built in but not the scheduler: its files are empty, the throttle ones count',
      {
        'blkio/blkio.bfq.io_serviced_recursive': 'Total 0\n',
        'blkio/blkio.bfq.io_service_bytes_recursive': 'Total 0\n',
        'blkio/blkio.throttle.io_serviced_recursive': dev(2),
        'blkio/blkio.throttle.io_service_bytes_recursive': dev(200),
      },
      200,
    ],
    ['CFQ', { 'blkio/blkio.io_serviced_recursive': dev(3), 'blkio/blkio.io_service_bytes_recursive': dev(300) }, 300],
    [
      'the non-recursive throttle files last',
      { 'blkio/blkio.throttle.io_serviced': dev(4), 'blkio/blkio.throttle.io_service_bytes': dev(400) },
      400,
    ],
    [
      'nothing counted anywhere (a kernel whose throttling was never set up counts no v1 I/O)',
      { 'blkio/blkio.throttle.io_serviced_recursive': 'Total 0\n', 'blkio/blkio.throttle.io_serviced': 'Total 0\n' },
      undefined,
    ],
  ];
  for (const [name, f, want] of cases) assert.equal(blkioV1(files(f))?.serviceBytes[0]?.stats.Read, want, name);
});

test('parseIoStat: io.stat in v1 terms, as libcontainer maps it', () => {
  assert.deepEqual(parseIoStat('259:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=5 dios=6 cost.usage=7\n'), {
    serviceBytes: [{ major: 259, minor: 0, stats: { Read: 1, Write: 2 } }],
    serviced: [{ major: 259, minor: 0, stats: { Read: 3, Write: 4 } }],
  });
  assert.equal(parseIoStat(''), undefined, 'no I/O yet: an empty file');
  assert.equal(parseIoStat(undefined), undefined, 'no file');
});

test('parsePids: threads and their limit', () => {
  const cases: [current: string | undefined, max: number | undefined, want: ReturnType<typeof parsePids>][] = [
    ['5\n', 100, { current: 5, max: 100 }],
    ['5\n', undefined, { current: 5, max: 0 }],
    [undefined, 0, undefined],
  ];
  for (const [current, max, want] of cases) assert.deepEqual(parsePids(current, max), want, `${current} ${max}`);
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

/** A scratch cgroup tree, removed after the test; put writes a file, making its dirs. */
function cgroupTree(t: TestContext) {
  const root = mkdtempSync(join(tmpdir(), 'cgroup-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const put = (path: string, content: string) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  };
  return { root, put };
}

test('cgroupReader on a v1 tree: samples, existence, pids and process counts', (t) => {
  const { root, put } = cgroupTree(t);
  put('cpuacct/kubepods/podu/cgroup.procs', '');
  put('cpuacct/kubepods/podu/sandbox/cgroup.procs', '42\n');
  put('cpuacct/kubepods/podu/app/cgroup.procs', '43\n44\n');
  put('cpuacct/kubepods/podu/cpuacct.usage', '123\n');
  put('memory/kubepods/podu/memory.usage_in_bytes', '10\n');
  put('memory/kubepods/podu/memory.memsw.limit_in_bytes', '4096\n');
  put('pids/kubepods/podu/pids.current', '3\n');
  put('pids/kubepods/podu/pids.max', 'max\n');
  // The root has the files of the kernel's blkio sources (CFQ's are not there: not on this kernel).
  put('blkio/blkio.throttle.io_serviced_recursive', 'Total 0\n');
  put('blkio/kubepods/podu/blkio.throttle.io_serviced_recursive', '254:0 Read 1\nTotal 1\n');
  put('blkio/kubepods/podu/blkio.throttle.io_service_bytes_recursive', '254:0 Read 4096\nTotal 4096\n');
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
  assert.deepEqual(r.sample('/kubepods/podu').pids, { current: 3, max: 0 }, 'threads from the pids hierarchy');
  assert.equal(r.sample('/kubepods/podu').blkio?.serviceBytes[0]?.stats.Read, 4096, 'I/O from the blkio hierarchy');
  assert.deepEqual(r.sample('/kubepods/gone'), {});
});

test('cgroupReader on a v2 tree: pressure and swap from the unified hierarchy, the root included', (t) => {
  const { root, put } = cgroupTree(t);
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

test('cgroupReader: limits are read again only after a minute; a blkio source missing at the root is never read', (t) => {
  const { root, put } = cgroupTree(t);
  const dev = (n: number) => `8:0 Read ${n}\nTotal ${n}\n`;
  put('cpuacct/kubepods/podu/cpuacct.usage', '1\n');
  put('cpu/kubepods/podu/cpu.shares', '2\n');
  put('memory/kubepods/podu/memory.usage_in_bytes', '10\n');
  put('memory/kubepods/podu/memory.limit_in_bytes', '100\n');
  put('pids/kubepods/podu/pids.current', '3\n');
  put('pids/kubepods/podu/pids.max', '50\n');
  put('blkio/blkio.throttle.io_serviced', 'Total 0\n');
  // CFQ files under the pod but not at the root: a kernel without CFQ would have none; they are not read.
  put('blkio/kubepods/podu/blkio.io_serviced_recursive', dev(1));
  put('blkio/kubepods/podu/blkio.io_service_bytes_recursive', dev(100));
  put('blkio/kubepods/podu/blkio.throttle.io_serviced', dev(2));
  put('blkio/kubepods/podu/blkio.throttle.io_service_bytes', dev(200));
  let clock = 1_000_000;
  const r = cgroupReader(root, () => clock);
  const figures = () => {
    const s = r.sample('/kubepods/podu');
    return [s.cpu?.usageNs, s.cpu?.shares, s.memory?.usageBytes, s.memory?.limitBytes, s.pids?.current, s.pids?.max];
  };
  assert.deepEqual(figures(), [1, 2, 10, 100, 3, 50]);
  assert.equal(r.sample('/kubepods/podu').blkio?.serviceBytes[0]?.stats.Read, 200, 'the throttle source, the one the root has');
  // A resize: new limits, and usage moves on.
  put('cpuacct/kubepods/podu/cpuacct.usage', '5\n');
  put('cpu/kubepods/podu/cpu.shares', '20\n');
  put('memory/kubepods/podu/memory.limit_in_bytes', '1000\n');
  put('pids/kubepods/podu/pids.max', '500\n');
  clock += 59_000;
  assert.deepEqual(figures(), [5, 2, 10, 100, 3, 50], 'usage every sample, the limits as read within the minute');
  clock += 2_000;
  assert.deepEqual(figures(), [5, 20, 10, 1000, 3, 500], 'the limits again after it');
  // Another cgroup's limits are its own.
  put('cpuacct/kubepods/podv/cpuacct.usage', '7\n');
  put('cpu/kubepods/podv/cpu.shares', '9\n');
  assert.equal(r.sample('/kubepods/podv').cpu?.shares, 9);
});

test("CFS throttling from cpu.stat on both versions (cadvisor's container_cpu_cfs_*), none without its counters", () => {
  const v1 = cgroupV1Sample(
    files({
      'cpuacct/cpuacct.usage': '100\n',
      'cpuacct/cpuacct.stat': 'user 1\nsystem 1\n',
      'cpu/cpu.stat': 'nr_periods 40\nnr_throttled 7\nthrottled_time 350000000\n',
    }),
  );
  // A kernel before 5.14 has no burst counters: zeros.
  assert.deepEqual(v1.cpu?.cfs, { periods: 40, throttledPeriods: 7, throttledNs: 350_000_000, bursts: 0, burstNs: 0 });
  const v2 = cgroupV2Sample(
    files({ 'cpu.stat': 'usage_usec 1\nnr_periods 40\nnr_throttled 7\nthrottled_usec 350000\nnr_bursts 2\nburst_usec 1500\n' }),
  );
  assert.deepEqual(v2.cpu?.cfs, { periods: 40, throttledPeriods: 7, throttledNs: 350_000_000, bursts: 2, burstNs: 1_500_000 });
  assert.equal(cgroupV2Sample(files({ 'cpu.stat': 'usage_usec 1\n' })).cpu?.cfs, undefined);
});
