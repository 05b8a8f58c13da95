// The node's side of a stats sample, read from /proc, /sys/fs/cgroup and statfs: small
// synchronous reads, about a thousand per sample with 30 pods (~25 ms in all).
import { lstatSync, readdirSync, readFileSync, readlinkSync, type StatsFs, statfsSync, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { cgroupReader, type CgroupReader } from './cgroup.ts';
import { devNumbers, maxPid, parseLimits, parseLoadavgTasks, parseNetDev, parseUptimeSeconds } from './procfs.ts';
import type { FsUsage, NetInterface, Ulimit } from './sample.ts';
import { type Filesystem, filesystemsOf, type Partition, parseDiskstats } from './filesystems.ts';

export interface HostStats {
  cgroups: CgroupReader;
  /** The interfaces of a process's network namespace; undefined when it is gone. */
  netDev(pid: number): NetInterface[] | undefined;
  fs(path: string): FsUsage | undefined;
  /** Bytes (allocated blocks, as du counts) and inodes under a directory, itself included. */
  dirUsage(path: string): { usedBytes: number; inodesUsed: number } | undefined;
  bootTimeMs(): number;
  machine(): { cpuCores: number; memoryBytes: number; swapBytes: number };
  rlimit(): { maxPid?: number; curProc?: number };
  meminfo(): string;
  /** A process's open file descriptors and how many are sockets; undefined when it is gone. */
  openFiles(pid: number): { fds: number; sockets: number } | undefined;
  /** A process's ulimits as cadvisor reports them; undefined when it is gone. */
  ulimits(pid: number): Ulimit[] | undefined;
  /** /proc/diskstats, read once a sample for the device names and the filesystems' I/O. */
  diskstats(): string;
  /** The device ("major:minor") of the filesystem holding a path. */
  deviceOf(path: string): string | undefined;
  /** cAdvisor's partitions, statfs'd now, with their devices' I/O. */
  filesystems(partitions: readonly Partition[], diskstats: string): Filesystem[];
}

/** upstream's fs.Info over a statfs: blocks of bsize, used being all but the free ones (as cadvisor's usage), and inodes. */
export const fsUsageOf = (s: StatsFs): FsUsage => ({
  capacityBytes: s.blocks * s.bsize,
  availableBytes: s.bavail * s.bsize,
  usedBytes: (s.blocks - s.bfree) * s.bsize,
  inodes: s.files,
  inodesFree: s.ffree,
});

const read = (p: string) => {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return undefined;
  }
};

/** A path's filesystem; undefined when statfs fails (a mount gone, a path not there yet). */
const statfs = (p: string): StatsFs | undefined => {
  try {
    return statfsSync(p);
  } catch {
    return undefined;
  }
};

export function hostStats(cgroupRoot = '/sys/fs/cgroup'): HostStats {
  const cgroups = cgroupReader(cgroupRoot);
  const uptime = parseUptimeSeconds(read('/proc/uptime') ?? '') ?? 0;
  // Boot time does not move; reading it once keeps it from jittering with uptime's rounding.
  const bootTimeMs = Math.round((Date.now() - uptime * 1000) / 1000) * 1000;
  const meminfo = read('/proc/meminfo') ?? '';
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(meminfo)?.[1] ?? 0) * 1024;
  // Read once, like the memory size: the node's swap limit (cadvisor's SwapTotal) then lags
  // a swapon/swapoff until the kubelet restarts, which turning swap on for pods needs anyway.
  const machine = { cpuCores: cpus().length, memoryBytes: kb('MemTotal'), swapBytes: kb('SwapTotal') };
  const usage = (path: string): { usedBytes: number; inodesUsed: number } => {
    const st = lstatSync(path);
    let used = st.blocks * 512,
      inodes = 1;
    if (st.isDirectory()) {
      for (const e of readdirSync(path)) {
        try {
          const u = usage(`${path}/${e}`);
          used += u.usedBytes;
          inodes += u.inodesUsed;
        } catch {
          /* rotated away */
        }
      }
    }
    return { usedBytes: used, inodesUsed: inodes };
  };
  return {
    cgroups,
    netDev: (pid) => {
      const t = read(`/proc/${pid}/net/dev`);
      return t === undefined ? undefined : parseNetDev(t);
    },
    fs(path) {
      const s = statfs(path);
      return s && fsUsageOf(s);
    },
    dirUsage: (path) => {
      try {
        return usage(path);
      } catch {
        return undefined;
      }
    },
    bootTimeMs: () => bootTimeMs,
    machine: () => machine,
    rlimit: () => ({
      maxPid: maxPid(read('/proc/sys/kernel/pid_max'), read('/proc/sys/kernel/threads-max')),
      // /proc/loadavg rather than sysinfo(2), whose count is truncated past 65535 (upstream does the same).
      curProc: parseLoadavgTasks(read('/proc/loadavg') ?? ''),
    }),
    meminfo: () => read('/proc/meminfo') ?? '',
    // cadvisor's processStatsFromProcs: one readlink a descriptor, to find the sockets.
    openFiles: (pid) => {
      const dir = `/proc/${pid}/fd`;
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return undefined;
      }
      let sockets = 0;
      for (const n of names) {
        try {
          if (readlinkSync(`${dir}/${n}`).startsWith('socket')) sockets++;
        } catch {
          /* closed meanwhile */
        }
      }
      return { fds: names.length, sockets };
    },
    ulimits: (pid) => {
      const t = read(`/proc/${pid}/limits`);
      return t === undefined ? undefined : parseLimits(t);
    },
    diskstats: () => read('/proc/diskstats') ?? '',
    filesystems: (partitions, diskstats) => filesystemsOf(partitions, statfs, parseDiskstats(diskstats)),
    deviceOf: (path) => {
      try {
        return devNumbers(statSync(path, { bigint: true }).dev);
      } catch {
        return undefined;
      }
    },
  };
}
