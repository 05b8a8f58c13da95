// CPU, memory, swap and pressure of one cgroup, read from its files the way cadvisor reads
// them, for cgroup v1 (this host: one hierarchy per controller) and v2 (one unified
// hierarchy). The parsing is pure over a `read` function; cgroupReader does the file I/O.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import type { BlkioSample, CgroupSample, CpuSample, DiskStats, MemorySample, PidsSample, Psi, PsiData } from './sample.ts';

/** Reads one file of a cgroup; undefined when it does not exist. v2 ignores the controller. */
export type CgroupFileReader = (controller: string, file: string) => string | undefined;

// Limits above this are the kernel's "unlimited" rounded to a page (upstream's isMemoryUnlimited).
const UNLIMITED = 2 ** 62;

/** Pure: "key value" lines (memory.stat, cpu.stat, cpuacct.stat) as numbers. */
export function parseKeyed(text: string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of (text ?? '').split('\n')) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined && /^\d+$/.test(v)) out[k] = Number(v);
  }
  return out;
}

const num = (text: string | undefined): number | undefined => {
  const t = text?.trim();
  return t && /^-?\d+$/.test(t) ? Number(t) : undefined;
};

const PSI_FIELDS = ['total', 'avg10', 'avg60', 'avg300'] as const;

/**
 * Pure: a pressure file (cpu.pressure, memory.pressure, io.pressure), lines like
 * "some avg10=0.12 avg60=0 avg300=0 total=1234"; undefined when there is no file.
 * A missing line or field stays 0, as runc leaves it (cpu.pressure has no "full"
 * line before Linux 5.13).
 */
export function parsePsi(text: string | undefined): Psi | undefined {
  if (text === undefined) return undefined;
  const zero = (): PsiData => ({ total: 0, avg10: 0, avg60: 0, avg300: 0 });
  const out: Psi = { some: zero(), full: zero() };
  let seen = false;
  for (const line of text.split('\n')) {
    const [kind, ...fields] = line.trim().split(/\s+/);
    if (kind !== 'some' && kind !== 'full') continue;
    seen = true;
    for (const field of fields) {
      const [key, value] = field.split('=');
      const n = Number(value);
      const k = PSI_FIELDS.find((f) => f === key);
      if (k && value !== undefined && value !== '' && Number.isFinite(n)) out[kind][k] = n;
    }
  }
  return seen ? out : undefined;
}

/**
 * Pure: cadvisor's swap limit from its file: "max" (v2) or a page-rounded 2^63 (v1) is
 * unlimited (undefined); no file is 0 (cadvisor's readUInt64 reads an absent file as 0:
 * without swap accounting there is no swap to use).
 */
export function parseSwapLimit(text: string | undefined): number | undefined {
  if (text?.trim() === 'max') return undefined;
  const n = num(text) ?? 0;
  return n < UNLIMITED ? n : undefined;
}

/** Pure: a memory limit file's value; "max" (v2) and the page-rounded 2^63 (v1) are unlimited (undefined). */
function memoryLimit(text: string | undefined): number | undefined {
  const n = num(text);
  return n !== undefined && n < UNLIMITED ? n : undefined;
}

/** Appends one counter to its device's entry, keyed major:minor (cadvisor's diskStatsCopy). */
function addDiskStat(byDev: Map<string, DiskStats>, major: number, minor: number, op: string, value: number): void {
  const key = `${major}:${minor}`;
  let d = byDev.get(key);
  if (!d) byDev.set(key, (d = { major, minor, stats: {} }));
  d.stats[op] = value;
}

/**
 * Pure: a v1 blkio file, lines "8:0 Read 4096" (or "8:0 4096", which cadvisor counts as
 * "Count"), by device; the "Total" line and malformed lines are skipped. undefined: no file.
 */
export function parseBlkioV1(text: string | undefined): DiskStats[] | undefined {
  if (text === undefined) return undefined;
  const byDev = new Map<string, DiskStats>();
  for (const line of text.split('\n')) {
    const f = line.trim().split(/[\s:]+/);
    if (f.length !== 3 && f.length !== 4) continue;
    const [major, minor, value] = [f[0], f[1], f[f.length - 1]].map((x) => (/^\d+$/.test(x!) ? Number(x) : undefined));
    if (major === undefined || minor === undefined || value === undefined) continue;
    addDiskStat(byDev, major, minor, f.length === 4 ? f[2]! : 'Count', value);
  }
  return [...byDev.values()];
}

// libcontainer's v1 blkio sources in its order (fs/blkio.go GetStats): BFQ, CFQ, then the
// throttle files, recursive first. A source counts only when it lists a device: the BFQ
// files exist, empty, wherever BFQ is built in but not the disk's scheduler. libcontainer
// probes CFQ by blkio.sectors_recursive; the serviced file it reads next tells the same.
export type BlkioV1Source = [serviced: string, serviceBytes: string];
export const BLKIO_V1_SOURCES: BlkioV1Source[] = [
  ['blkio.bfq.io_serviced_recursive', 'blkio.bfq.io_service_bytes_recursive'],
  ['blkio.io_serviced_recursive', 'blkio.io_service_bytes_recursive'],
  ['blkio.throttle.io_serviced_recursive', 'blkio.throttle.io_service_bytes_recursive'],
  ['blkio.throttle.io_serviced', 'blkio.throttle.io_service_bytes'],
];

/**
 * Pure: cadvisor's DiskIo from a v1 blkio hierarchy; undefined when no source lists a device.
 * `sources`: those this kernel has (cgroupReader drops the ones its root lacks).
 */
export function blkioV1(read: CgroupFileReader, sources = BLKIO_V1_SOURCES): BlkioSample | undefined {
  for (const [serviced, serviceBytes] of sources) {
    const ios = parseBlkioV1(read('blkio', serviced));
    if (ios?.length) return { serviced: ios, serviceBytes: parseBlkioV1(read('blkio', serviceBytes)) ?? [] };
  }
  return undefined;
}

/**
 * Pure: v2 io.stat ("254:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0") in v1's two
 * tables, as libcontainer's fs2 statIo maps it: rbytes/wbytes are the bytes Read/Write,
 * rios/wios the I/Os; the rest it drops. undefined: no file or no device.
 */
export function parseIoStat(text: string | undefined): BlkioSample | undefined {
  const bytes = new Map<string, DiskStats>();
  const ios = new Map<string, DiskStats>();
  const ops: Record<string, [Map<string, DiskStats>, string]> = {
    rbytes: [bytes, 'Read'],
    wbytes: [bytes, 'Write'],
    rios: [ios, 'Read'],
    wios: [ios, 'Write'],
  };
  for (const line of (text ?? '').split('\n')) {
    const [dev, ...fields] = line.trim().split(/\s+/);
    const m = /^(\d+):(\d+)$/.exec(dev ?? '');
    if (!m) continue;
    for (const field of fields) {
      const [key, value] = field.split('=');
      const op = ops[key!];
      if (op && value !== undefined && /^\d+$/.test(value)) addDiskStat(op[0], Number(m[1]), Number(m[2]), op[1], Number(value));
    }
  }
  return bytes.size || ios.size ? { serviceBytes: [...bytes.values()], serviced: [...ios.values()] } : undefined;
}

/** Pure: pids.current and the limit; undefined without pids.current. */
export function parsePids(current: string | undefined, max: number | undefined): PidsSample | undefined {
  const n = num(current);
  return n === undefined ? undefined : { current: n, max: max ?? 0 };
}

/**
 * What a cgroup's limit files say. They change only when something writes them (runc when it
 * makes a container, the kubelet for pod cgroups and on a resize), so cgroupReader re-reads
 * them at most every LIMITS_TTL_MS rather than on every sample: ~7 of a v1 sample's ~20 reads.
 * cadvisor likewise keeps a container's spec and refreshes it only when asked for its info, at
 * most every 5 s (containerData.GetInfo -> updateSpec).
 */
export interface CgroupLimits {
  cpuShares?: number;
  /** undefined: no quota. */
  cpuQuotaUs?: number;
  cpuPeriodUs?: number;
  memoryLimitBytes?: number;
  swapLimitBytes?: number;
  memoryReservationBytes?: number;
  /** pids.max; "max" is 0, runc's "no limit" that cadvisor reports. */
  pidsMax?: number;
}

/** Pure: the limits of a v1 cgroup (cadvisor's common.GetSpec for v1). */
export function cgroupV1Limits(read: CgroupFileReader): CgroupLimits {
  const quota = num(read('cpu', 'cpu.cfs_quota_us'));
  return {
    cpuShares: num(read('cpu', 'cpu.shares')),
    cpuQuotaUs: quota !== undefined && quota > 0 ? quota : undefined,
    cpuPeriodUs: num(read('cpu', 'cpu.cfs_period_us')),
    memoryLimitBytes: memoryLimit(read('memory', 'memory.limit_in_bytes')),
    swapLimitBytes: parseSwapLimit(read('memory', 'memory.memsw.limit_in_bytes')),
    memoryReservationBytes: memoryLimit(read('memory', 'memory.soft_limit_in_bytes')),
    pidsMax: num(read('pids', 'pids.max')) ?? 0,
  };
}

/** Pure: the limits of a v2 cgroup; "max" is no quota, no memory limit and no pids limit. */
export function cgroupV2Limits(read: CgroupFileReader): CgroupLimits {
  const f = (file: string) => read('', file);
  const weight = num(f('cpu.weight'));
  const [quota, period] = (f('cpu.max') ?? '').trim().split(/\s+/);
  return {
    // The inverse of upstream's shares -> weight conversion, so both versions report shares.
    cpuShares: weight !== undefined ? Math.round(2 + ((weight - 1) * 262142) / 9999) : undefined,
    cpuQuotaUs: num(quota),
    cpuPeriodUs: num(period),
    memoryLimitBytes: memoryLimit(f('memory.max')),
    swapLimitBytes: parseSwapLimit(f('memory.swap.max')),
    // memory.min, not memory.low: what cadvisor's GetSpec reads as the reservation.
    memoryReservationBytes: memoryLimit(f('memory.min')),
    pidsMax: num(f('pids.max')) ?? 0,
  };
}

/** How a sample gets a cgroup's limits (called only when the cgroup is there), and v1's blkio sources. */
export interface SampleOptions {
  limits?: () => CgroupLimits;
  blkioSources?: BlkioV1Source[];
}

/**
 * CFS throttling and bursting as cpu.stat counts them (v1's times in ns, v2's in µs, made ns);
 * none without the throttling counters. The burst counters (Linux 5.14+) are read on v1 too,
 * where cadvisor's libcontainer reads only v2's and shows v1's as 0.
 */
function cfsOf(stat: Record<string, number>, v: 1 | 2): Pick<CpuSample, 'cfs'> {
  const ns = (v1: string, v2: string) => (v === 1 ? stat[v1] : stat[v2] === undefined ? undefined : stat[v2] * 1000);
  const periods = stat.nr_periods;
  const throttled = stat.nr_throttled;
  const throttledNs = ns('throttled_time', 'throttled_usec');
  if (periods === undefined || throttled === undefined || throttledNs === undefined) return {};
  return {
    cfs: { periods, throttledPeriods: throttled, throttledNs, bursts: stat.nr_bursts ?? 0, burstNs: ns('burst_time', 'burst_usec') ?? 0 },
  };
}

// cpuacct.stat counts USER_HZ ticks (100 per second on Linux).
const TICK_NS = 10_000_000;

/** Pure: a cgroup v1 sample; parts whose files are missing are left out. */
export function cgroupV1Sample(read: CgroupFileReader, o: SampleOptions = {}): CgroupSample {
  const out: CgroupSample = {};
  let limits: CgroupLimits | undefined;
  const limitsOf = () => (limits ??= o.limits?.() ?? cgroupV1Limits(read));
  const usage = num(read('cpuacct', 'cpuacct.usage'));
  if (usage !== undefined) {
    // One file for both, in ticks, as libcontainer's getCpuUsageBreakdown reads them (the same
    // figures as cadvisor's), rather than cpuacct.usage_user and usage_sys: two reads.
    const ticks = parseKeyed(read('cpuacct', 'cpuacct.stat'));
    const userNs = ticks.user !== undefined ? ticks.user * TICK_NS : undefined;
    const systemNs = ticks.system !== undefined ? ticks.system * TICK_NS : undefined;
    const { cpuShares, cpuQuotaUs, cpuPeriodUs } = limitsOf();
    const stat = parseKeyed(read('cpu', 'cpu.stat'));
    out.cpu = {
      usageNs: usage,
      userNs,
      systemNs,
      shares: cpuShares,
      quotaUs: cpuQuotaUs,
      periodUs: cpuPeriodUs,
      ...cfsOf(stat, 1),
    };
  }
  const memUsage = num(read('memory', 'memory.usage_in_bytes'));
  if (memUsage !== undefined) {
    const s = parseKeyed(read('memory', 'memory.stat'));
    const l = limitsOf();
    // The total_* figures cover the subtree (pods hold their containers' tasks).
    // total_swap is cadvisor's v1 swap figure: the same as memsw.usage_in_bytes minus
    // usage_in_bytes, and present only with swap accounting (else 0), without two more reads.
    out.memory = {
      usageBytes: memUsage,
      workingSetBytes: Math.max(0, memUsage - (s.total_inactive_file ?? s.inactive_file ?? 0)),
      rssBytes: s.total_rss ?? s.rss ?? 0,
      cacheBytes: s.total_cache ?? s.cache ?? 0,
      mappedFileBytes: s.total_mapped_file ?? s.mapped_file ?? 0,
      swapBytes: s.total_swap ?? s.swap ?? 0,
      activeFileBytes: s.total_active_file ?? 0,
      inactiveFileBytes: s.total_inactive_file ?? 0,
      kernelBytes: num(read('memory', 'memory.kmem.usage_in_bytes')) ?? 0,
      pageFaults: s.total_pgfault ?? s.pgfault ?? 0,
      majorPageFaults: s.total_pgmajfault ?? s.pgmajfault ?? 0,
      localPageFaults: s.pgfault ?? 0,
      localMajorPageFaults: s.pgmajfault ?? 0,
      maxUsageBytes: num(read('memory', 'memory.max_usage_in_bytes')),
      failcnt: num(read('memory', 'memory.failcnt')),
      limitBytes: l.memoryLimitBytes,
      swapLimitBytes: l.swapLimitBytes,
      reservationBytes: l.memoryReservationBytes,
      // cadvisor counts the OOM kills it reads from the kernel log since it started, on the
      // cgroup whose limit was hit. The kernel's counter (Linux 4.13+) needs no log watcher and
      // agrees for a container; it also counts kills from before a kubelet restart, and a pod's
      // includes its containers'.
      oomKills: parseKeyed(read('memory', 'memory.oom_control')).oom_kill,
    };
  }
  const blkio = blkioV1(read, o.blkioSources);
  if (blkio) out.blkio = blkio;
  const pidsCurrent = read('pids', 'pids.current');
  const pids = pidsCurrent !== undefined ? parsePids(pidsCurrent, limitsOf().pidsMax) : undefined;
  if (pids) out.pids = pids;
  // No psi: v1 has no per-cgroup pressure files (and /proc/pressure is the whole host's,
  // which cadvisor does not use for the root either). The Summary reports zeros, as upstream.
  return out;
}

/** Pure: a cgroup v2 sample. */
export function cgroupV2Sample(read: CgroupFileReader, o: SampleOptions = {}): CgroupSample {
  const out: CgroupSample = {};
  const f = (file: string) => read('', file);
  let limits: CgroupLimits | undefined;
  const limitsOf = () => (limits ??= o.limits?.() ?? cgroupV2Limits(read));
  const cpuStat = parseKeyed(f('cpu.stat'));
  if (cpuStat.usage_usec !== undefined) {
    const { cpuShares, cpuQuotaUs, cpuPeriodUs } = limitsOf();
    out.cpu = {
      usageNs: cpuStat.usage_usec * 1000,
      userNs: cpuStat.user_usec !== undefined ? cpuStat.user_usec * 1000 : undefined,
      systemNs: cpuStat.system_usec !== undefined ? cpuStat.system_usec * 1000 : undefined,
      shares: cpuShares,
      quotaUs: cpuQuotaUs,
      periodUs: cpuPeriodUs,
      ...cfsOf(cpuStat, 2),
    };
  }
  const current = num(f('memory.current'));
  if (current !== undefined) {
    const s = parseKeyed(f('memory.stat'));
    const events = parseKeyed(f('memory.events'));
    const l = limitsOf();
    out.memory = {
      usageBytes: current,
      workingSetBytes: Math.max(0, current - (s.inactive_file ?? 0)),
      rssBytes: s.anon ?? 0,
      cacheBytes: s.file ?? 0,
      mappedFileBytes: s.file_mapped ?? 0,
      swapBytes: num(f('memory.swap.current')) ?? 0,
      activeFileBytes: s.active_file ?? 0,
      inactiveFileBytes: s.inactive_file ?? 0,
      // cadvisor's libcontainer leaves v2's kernel usage at 0; memory.stat has it.
      kernelBytes: s.kernel ?? 0,
      pageFaults: s.pgfault ?? 0,
      majorPageFaults: s.pgmajfault ?? 0,
      localPageFaults: s.pgfault ?? 0,
      localMajorPageFaults: s.pgmajfault ?? 0,
      maxUsageBytes: num(f('memory.peak')),
      failcnt: events.max,
      limitBytes: l.memoryLimitBytes,
      swapLimitBytes: l.swapLimitBytes,
      reservationBytes: l.memoryReservationBytes,
      // The kernel's count, where cadvisor counts the kills it sees in the kernel log (see v1).
      oomKills: events.oom_kill,
    };
  }
  const blkio = parseIoStat(f('io.stat'));
  if (blkio) out.blkio = blkio;
  const pidsCurrent = f('pids.current');
  const pids = pidsCurrent !== undefined ? parsePids(pidsCurrent, limitsOf().pidsMax) : undefined;
  if (pids) out.pids = pids;
  // Every v2 cgroup has cpu.stat, so without it the cgroup is gone: no pressure files to try.
  // The root has them too (the host's figures), and its memory comes from /proc/meminfo.
  if (out.cpu) out.psi = { cpu: parsePsi(f('cpu.pressure')), memory: parsePsi(f('memory.pressure')), io: parsePsi(f('io.pressure')) };
  return out;
}

/** Pure: node memory from /proc/meminfo, for a v2 root cgroup that has no memory files. */
export function memoryFromMeminfo(meminfo: string): MemorySample {
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(meminfo)?.[1] ?? 0) * 1024;
  const total = kb('MemTotal');
  return {
    usageBytes: total - kb('MemFree'),
    workingSetBytes: total - kb('MemAvailable'),
    rssBytes: kb('AnonPages'),
    cacheBytes: kb('Cached'),
    mappedFileBytes: kb('Mapped'),
    swapBytes: kb('SwapTotal') - kb('SwapFree'),
    activeFileBytes: kb('Active\\(file\\)'),
    inactiveFileBytes: kb('Inactive\\(file\\)'),
    kernelBytes: 0,
    pageFaults: 0,
    majorPageFaults: 0,
    localPageFaults: 0,
    localMajorPageFaults: 0,
  };
}

/** The cgroup files of one host, and the few questions the collector asks of them. */
export interface CgroupReader {
  version: 1 | 2;
  sample(path: string): CgroupSample;
  exists(path: string): boolean;
  /** PIDs directly in the cgroup. */
  pids(path: string): number[];
  /** Processes in the cgroup and every cgroup below it. */
  processCount(path: string): number;
  /** When the cgroup was created (its directory's change time). */
  createdAtMs(path: string): number | undefined;
  /** The cgroup path of a process (its cpuacct hierarchy on v1). */
  ofProcess(pid: number | 'self'): string | undefined;
}

// How long a cgroup's limits are taken as read (CgroupLimits): a resize shows in the stats
// within a minute, as it would in a scrape of cadvisor's metrics every 30-60 s.
const LIMITS_TTL_MS = 60_000;

export function cgroupReader(root = '/sys/fs/cgroup', now: () => number = Date.now): CgroupReader {
  const version: 1 | 2 = exists(`${root}/cgroup.controllers`) ? 2 : 1;
  // A blkio source this kernel lacks is missing from every cgroup, the root first: a failed
  // read (an exception) of each cgroup every sample costs more than any file that is there.
  const blkioSources = BLKIO_V1_SOURCES.filter(([serviced]) => exists(`${root}/blkio/${serviced}`));
  const limits = new Map<string, { atMs: number; limits: CgroupLimits }>();
  let sweptMs = now();
  const limitsOf = (path: string, read: CgroupFileReader) => (): CgroupLimits => {
    const t = now();
    const hit = limits.get(path);
    if (hit && t - hit.atMs < LIMITS_TTL_MS) return hit.limits;
    // Entries of cgroups no longer sampled (gone pods) are dropped a TTL after their refresh was due.
    if (t - sweptMs > LIMITS_TTL_MS) {
      for (const [p, e] of limits) if (t - e.atMs > 2 * LIMITS_TTL_MS) limits.delete(p);
      sweptMs = t;
    }
    const fresh = version === 2 ? cgroupV2Limits(read) : cgroupV1Limits(read);
    limits.set(path, { atMs: t, limits: fresh });
    return fresh;
  };
  // Where a cgroup's directory is for questions that are not about one controller.
  const dir = (path: string) => (version === 2 ? `${root}${path}` : `${root}/cpuacct${path}`);
  const readAt =
    (path: string): CgroupFileReader =>
    (controller, file) => {
      try {
        return readFileSync(version === 2 ? `${root}${path}/${file}` : `${root}/${controller}${path}/${file}`, 'utf8');
      } catch {
        return undefined;
      }
    };
  const norm = (path: string) => (path === '/' ? '' : path);
  const pids = (path: string) => {
    try {
      return readFileSync(`${dir(norm(path))}/cgroup.procs`, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map(Number);
    } catch {
      return [];
    }
  };
  const count = (d: string): number => {
    let n = 0;
    try {
      n = readFileSync(`${d}/cgroup.procs`, 'utf8').split('\n').filter(Boolean).length;
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) n += count(`${d}/${e.name}`);
    } catch {
      /* removed while walking */
    }
    return n;
  };
  return {
    version,
    sample(path) {
      const read = readAt(norm(path));
      const o: SampleOptions = { limits: limitsOf(path, read), blkioSources };
      return version === 2 ? cgroupV2Sample(read, o) : cgroupV1Sample(read, o);
    },
    exists: (path) => exists(dir(norm(path))),
    pids,
    processCount: (path) => count(dir(norm(path))),
    createdAtMs: (path) => {
      try {
        return statSync(dir(norm(path))).ctimeMs;
      } catch {
        return undefined;
      }
    },
    ofProcess(pid) {
      try {
        const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n');
        const want = version === 2 ? (l: string) => l.startsWith('0::') : (l: string) => /^\d+:([^:]*,)?cpuacct(,[^:]*)?:/.test(l);
        return lines.find(want)?.replace(/^\d+:[^:]*:/, '');
      } catch {
        return undefined;
      }
    },
  };
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
