// Facts about the host that go into the Node object. Read once at start-up (they do
// not change while the kubelet runs) except the filesystem size, read per status.
import { existsSync, readdirSync, readFileSync, statfsSync } from 'node:fs';
import { arch, cpus, networkInterfaces, release, totalmem } from 'node:os';

export interface HostFacts {
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
  architecture: string;
  cpuCores: number;
  memoryBytes: number;
  /** SwapTotal of /proc/meminfo, as cadvisor's SwapCapacity; 0 or absent: no swap. */
  swapBytes?: number;
  hugepages: Record<string, number>;
  /** /proc/stat's btime in ms (the node start-up SLI's origin); undefined when unreadable. */
  bootTimeMs?: number;
}

const readTrim = (p: string) => {
  try {
    return readFileSync(p, 'utf8').trim();
  } catch {
    return '';
  }
};

/**
 * cAdvisor's --machine-id-file and --boot-id-file (deprecated upstream, still read): each a
 * comma-separated list of files.
 */
export interface HostIdFiles {
  machineID: string;
  bootID: string;
}
export const DEFAULT_ID_FILES: HostIdFiles = {
  machineID: '/etc/machine-id,/var/lib/dbus/machine-id',
  bootID: '/proc/sys/kernel/random/boot_id',
};

/**
 * cadvisor's GetSystemUUID (utils/sysfs): DMI's product_uuid, else a POWER device tree's
 * system-id or vm,uuid (NULs trimmed), else s390's /etc/machine-id, which is also what a VM
 * without DMI or a device tree (Firecracker) gets; '' if none reads. As read: not lowercased.
 */
export function systemUUID(read: (path: string) => string | undefined): string {
  for (const [path, nuls] of [
    ['/sys/class/dmi/id/product_uuid', false],
    ['/proc/device-tree/system-id', true],
    ['/proc/device-tree/vm,uuid', true],
    ['/etc/machine-id', false],
  ] as const) {
    const text = read(path);
    if (text !== undefined) return (nuls ? text.replace(/\0+$/, '') : text).trim();
  }
  return '';
}

/** cadvisor machine/info.go getInfoFromFiles: the first file that reads, trimmed (even if empty); '' if none. */
export function infoFromFiles(list: string, read: (path: string) => string | undefined): string {
  for (const path of list ? list.split(',') : []) {
    const text = read(path);
    if (text !== undefined) return text.trim();
  }
  return '';
}

const readOrUndefined = (p: string) => {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return undefined;
  }
};

export function readHostFacts(idFiles: HostIdFiles = DEFAULT_ID_FILES): HostFacts {
  const osRelease = readTrim('/etc/os-release').match(/^PRETTY_NAME="?([^"\n]*)"?/m)?.[1] ?? 'Linux';
  return {
    machineID: infoFromFiles(idFiles.machineID, readOrUndefined),
    systemUUID: systemUUID(readOrUndefined),
    bootID: infoFromFiles(idFiles.bootID, readOrUndefined),
    kernelVersion: release(),
    osImage: osRelease,
    architecture:
      ({ x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' } as Record<string, string>)[arch()] ?? arch(),
    cpuCores: cpus().length,
    // MemTotal from /proc/meminfo, as cadvisor reports machine memory.
    memoryBytes: Number(readTrim('/proc/meminfo').match(/^MemTotal:\s+(\d+) kB/m)?.[1] ?? 0) * 1024 || totalmem(),
    swapBytes: Number(readTrim('/proc/meminfo').match(/^SwapTotal:\s+(\d+) kB/m)?.[1] ?? 0) * 1024,
    hugepages: readHugepages(),
    bootTimeMs: bootTimeMs(readTrim('/proc/stat')),
  };
}

/** /proc/stat's btime in ms (upstream's getBootTimeWithProcStat); undefined when it has none. */
export function bootTimeMs(procStat: string): number | undefined {
  const m = /^btime (\d+)$/m.exec(procStat);
  return m ? Number(m[1]) * 1000 : undefined;
}

function readHugepages(): Record<string, number> {
  const dir = '/sys/kernel/mm/hugepages';
  let sizes: string[] = [];
  try {
    sizes = readdirSync(dir);
  } catch {
    /* no sysfs: /proc/meminfo's default size below */
  }
  const pools = sizes.flatMap((d) => {
    const kb = Number(/^hugepages-(\d+)kB$/.exec(d)?.[1] ?? 0);
    return kb ? [{ sizeKb: kb, pages: Number(readTrim(`${dir}/${d}/nr_hugepages`) || 0) }] : [];
  });
  if (pools.length) return hugepageCapacity(pools);
  const meminfo = readTrim('/proc/meminfo');
  const size = Number(meminfo.match(/^Hugepagesize:\s+(\d+) kB/m)?.[1] ?? 0);
  const total = Number(meminfo.match(/^HugePages_Total:\s+(\d+)/m)?.[1] ?? 0);
  return size ? hugepageCapacity([{ sizeKb: size, pages: total }]) : {};
}

/**
 * Pure: the node's hugepages-<size> capacity as upstream's: one entry for every page size the kernel
 * has (cadvisor's machine info reads /sys/kernel/mm/hugepages/hugepages-<kB>kB/nr_hugepages), "0"
 * for a size with no pages, named by the size as a binary quantity (2Mi, 1Gi, 64Ki).
 */
export function hugepageCapacity(pools: { sizeKb: number; pages: number }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const { sizeKb, pages } of pools) {
    const name = sizeKb % 1048576 === 0 ? `${sizeKb / 1048576}Gi` : sizeKb % 1024 === 0 ? `${sizeKb / 1024}Mi` : `${sizeKb}Ki`;
    out[`hugepages-${name}`] = pages * sizeKb * 1024;
  }
  return out;
}

/** Capacity and free bytes and inodes of the filesystem holding path (the kubelet root dir). */
export function filesystemStats(path: string): { capacityBytes: number; availableBytes: number; inodes: number; inodesFree: number } {
  const s = statfsSync(path);
  return { capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize, inodes: s.files, inodesFree: s.ffree };
}

/** The host's non-loopback addresses, in interface order: where the node's IPs are chosen from (src/network/ips.ts nodeIPs). */
export function hostAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((addrs) => (addrs ?? []).filter((a) => !a.internal).map((a) => a.address));
}

/** Pure: the CPUs of a kernel CPU list ("0-3,8"), as upstream's possibleCPUsParsed reads /sys/devices/system/cpu/possible; undefined when malformed. */
export function parseCpuList(text: string): number[] | undefined {
  const out: number[] = [];
  for (const part of text.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return undefined;
    const [from, to] = [Number(m[1]), Number(m[2] ?? m[1])];
    if (to < from) return undefined;
    for (let cpu = from; cpu <= to; cpu++) out.push(cpu);
  }
  return out;
}

/**
 * Each possible CPU's thermal_throttle directory that this host has: upstream's defaultMaskedPaths
 * masks them in every container (as moby does), beside the fixed list. Without a readable CPU
 * list, the CPUs node counts (upstream: runtime.NumCPU).
 */
export function thermalThrottlePaths(sys = '/sys/devices/system/cpu'): string[] {
  const list = parseCpuList(readTrim(`${sys}/possible`)) ?? cpus().map((_, i) => i);
  return list.map((cpu) => `${sys}/cpu${cpu}/thermal_throttle`).filter((p) => existsSync(p));
}
