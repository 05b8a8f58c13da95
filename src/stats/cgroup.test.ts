import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupReader, cgroupV1Sample, cgroupV2Sample, memoryFromMeminfo, parseKeyed, podCgroupCandidates, type CgroupFileReader } from './cgroup.ts';

const files = (m: Record<string, string>): CgroupFileReader => (controller, file) => m[controller ? `${controller}/${file}` : file];

test('parseKeyed reads "key value" lines and skips the rest', () => {
  assert.deepEqual(parseKeyed('cache 10\nrss 20\n\nbad line here\nneg -1\n'), { cache: 10, rss: 20 });
  assert.deepEqual(parseKeyed(undefined), {});
});

test('cgroupV1Sample: cadvisor figures from a v1 hierarchy', () => {
  const cases: [name: string, files: Record<string, string>, want: ReturnType<typeof cgroupV1Sample>][] = [
    ['a container with a limit and a quota', {
      'cpuacct/cpuacct.usage': '5000000000\n', 'cpuacct/cpuacct.usage_user': '3000000000\n', 'cpuacct/cpuacct.usage_sys': '2000000000\n',
      'cpu/cpu.shares': '512\n', 'cpu/cpu.cfs_quota_us': '50000\n', 'cpu/cpu.cfs_period_us': '100000\n',
      'memory/memory.usage_in_bytes': '1000\n', 'memory/memory.max_usage_in_bytes': '1500\n', 'memory/memory.failcnt': '2\n',
      'memory/memory.limit_in_bytes': '4096\n',
      'memory/memory.stat': 'cache 1\nrss 2\nmapped_file 3\npgfault 4\npgmajfault 5\ntotal_cache 300\ntotal_rss 200\ntotal_mapped_file 30\ntotal_swap 7\ntotal_pgfault 40\ntotal_pgmajfault 6\ntotal_inactive_file 100\n',
    }, {
      cpu: { usageNs: 5e9, userNs: 3e9, systemNs: 2e9, shares: 512, quotaUs: 50000, periodUs: 100000 },
      memory: {
        usageBytes: 1000, workingSetBytes: 900, rssBytes: 200, cacheBytes: 300, mappedFileBytes: 30, swapBytes: 7,
        pageFaults: 40, majorPageFaults: 6, localPageFaults: 4, localMajorPageFaults: 5, maxUsageBytes: 1500, failcnt: 2, limitBytes: 4096,
      },
    }],
    ['unlimited, no quota, user/system only as ticks', {
      'cpuacct/cpuacct.usage': '7\n', 'cpuacct/cpuacct.stat': 'user 3\nsystem 1\n', 'cpu/cpu.cfs_quota_us': '-1\n',
      'memory/memory.usage_in_bytes': '50\n', 'memory/memory.limit_in_bytes': '9223372036854771712\n',
      'memory/memory.stat': 'total_inactive_file 80\n',
    }, {
      cpu: { usageNs: 7, userNs: 30_000_000, systemNs: 10_000_000, shares: undefined, quotaUs: undefined, periodUs: undefined },
      memory: {
        usageBytes: 50, workingSetBytes: 0, rssBytes: 0, cacheBytes: 0, mappedFileBytes: 0, swapBytes: 0,
        pageFaults: 0, majorPageFaults: 0, localPageFaults: 0, localMajorPageFaults: 0, maxUsageBytes: undefined, failcnt: undefined, limitBytes: undefined,
      },
    }],
    ['a cgroup that is gone', {}, {}],
  ];
  for (const [name, f, want] of cases) assert.deepEqual(cgroupV1Sample(files(f)), want, name);
});

test('cgroupV2Sample: the same figures from the unified hierarchy', () => {
  const got = cgroupV2Sample(files({
    'cpu.stat': 'usage_usec 2000\nuser_usec 1500\nsystem_usec 500\nnr_periods 0\n', 'cpu.weight': '100\n', 'cpu.max': '50000 100000\n',
    'memory.current': '1000\n', 'memory.max': 'max\n', 'memory.peak': '1200\n', 'memory.events': 'low 0\nhigh 0\nmax 3\noom 0\n',
    'memory.swap.current': '9\n', 'memory.stat': 'anon 200\nfile 300\nfile_mapped 30\npgfault 40\npgmajfault 6\ninactive_file 100\n',
  }));
  assert.deepEqual(got, {
    cpu: { usageNs: 2_000_000, userNs: 1_500_000, systemNs: 500_000, shares: 2597, quotaUs: 50000, periodUs: 100000 },
    memory: {
      usageBytes: 1000, workingSetBytes: 900, rssBytes: 200, cacheBytes: 300, mappedFileBytes: 30, swapBytes: 9,
      pageFaults: 40, majorPageFaults: 6, localPageFaults: 40, localMajorPageFaults: 6, maxUsageBytes: 1200, failcnt: 3, limitBytes: undefined,
    },
  });
  assert.equal(cgroupV2Sample(files({ 'cpu.stat': 'usage_usec 1\n', 'cpu.max': 'max 100000\n' })).cpu?.quotaUs, undefined, 'no quota');
});

test('memoryFromMeminfo: the node when the root cgroup has no memory files', () => {
  const m = memoryFromMeminfo('MemTotal:       1000 kB\nMemFree:         200 kB\nMemAvailable:    600 kB\nCached:  100 kB\nAnonPages: 50 kB\n');
  assert.equal(m.usageBytes, 800 * 1024);
  assert.equal(m.workingSetBytes, 400 * 1024);
  assert.equal(m.rssBytes, 50 * 1024);
  assert.equal(m.cacheBytes, 100 * 1024);
});

test('podCgroupCandidates follows the kubepods layout of each QoS class', () => {
  assert.deepEqual(podCgroupCandidates('u1'), ['/kubepods/podu1', '/kubepods/burstable/podu1', '/kubepods/besteffort/podu1']);
});

test('cgroupReader on a v1 tree: samples, existence, pids and process counts', () => {
  const root = mkdtempSync(join(tmpdir(), 'cgroup-'));
  const put = (path: string, content: string) => { mkdirSync(join(root, path, '..'), { recursive: true }); writeFileSync(join(root, path), content); };
  put('cpuacct/kubepods/podu/cgroup.procs', '');
  put('cpuacct/kubepods/podu/sandbox/cgroup.procs', '42\n');
  put('cpuacct/kubepods/podu/app/cgroup.procs', '43\n44\n');
  put('cpuacct/kubepods/podu/cpuacct.usage', '123\n');
  put('memory/kubepods/podu/memory.usage_in_bytes', '10\n');
  const r = cgroupReader(root);
  assert.equal(r.version, 1);
  assert.equal(r.exists('/kubepods/podu'), true);
  assert.equal(r.exists('/kubepods/podv'), false);
  assert.deepEqual(r.pids('/kubepods/podu/sandbox'), [42]);
  assert.equal(r.processCount('/kubepods/podu'), 3);
  assert.equal(r.sample('/kubepods/podu').cpu?.usageNs, 123);
  assert.equal(r.sample('/kubepods/podu').memory?.usageBytes, 10);
  assert.deepEqual(r.sample('/kubepods/gone'), {});
});
