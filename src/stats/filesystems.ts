// cAdvisor's fs.Info as the kubelet's cAdvisor has it: the node's filesystems, listed once at
// start from the kubelet's mountinfo (fs.NewFsInfo's processMounts, with the kubelet's plugins:
// vfs, tmpfs, overlay, nfs and btrfs), then each sample statfs'd and joined to /proc/diskstats
// (GetFsInfoForPath). The root container reports them all (GetGlobalFsInfo); a raw cgroup named in
// cAdvisor's container hints file reports those whose mount points its hint lists.
import { readFileSync, type StatsFs } from 'node:fs';
import { mountinfoField } from '../mount/mountinfo.ts';

export interface Partition {
  /** cAdvisor's device: the mount source; a tmpfs's mount point; overlay's source with its "_major-minor". */
  device: string;
  mountpoint: string;
  fsType: string;
  major: number;
  minor: number;
}

/** One /proc/diskstats row (fs.DiskStats); times in ms as the kernel counts them. */
export interface DiskStats {
  readsCompleted: number;
  readsMerged: number;
  sectorsRead: number;
  readTimeMs: number;
  writesCompleted: number;
  writesMerged: number;
  sectorsWritten: number;
  writeTimeMs: number;
  ioInProgress: number;
  ioTimeMs: number;
  weightedIoTimeMs: number;
}

/** info.FsStats: a filesystem's size from statfs and its device's I/O (all 0 when the device has no diskstats row). */
export interface Filesystem {
  device: string;
  mountpoint: string;
  capacityBytes: number;
  freeBytes: number;
  availableBytes: number;
  inodes: number;
  inodesFree: number;
  disk: DiskStats;
}

// The vfs plugin's types (fs/vfs CanHandle), and those of the kubelet's other plugins that read
// statfs too. zfs (libzfs's pool figures) and devicemapper (Docker's thin pool) are left out:
// neither is a filesystem kubelet-ts's runtimes put a node's data on.
const VFS_TYPES = new Set([
  'xfs',
  'squashfs',
  'f2fs',
  'jfs',
  'reiserfs',
  'hfs',
  'hfsplus',
  'ntfs',
  'vfat',
  'fat',
  'msdos',
  'exfat',
  'udf',
  'iso9660',
  'btrfs',
  'tmpfs',
  'overlay',
]);
const handled = (fsType: string) => fsType.startsWith('ext') || fsType.startsWith('nfs') || VFS_TYPES.has(fsType);

/**
 * Pure: processMounts over /proc/self/mountinfo. A source seen before is a bind mount and
 * skipped (but tmpfs, keyed by its mount point); overlay is keyed by its own major and minor,
 * so each container's root filesystem is one of its own.
 */
export function partitionsOf(mountinfo: string): Partition[] {
  const out = new Map<string, Partition>();
  for (const line of mountinfo.split('\n')) {
    const f = line.split(' ');
    const dash = f.indexOf('-', 6);
    if (dash < 0 || f.length < dash + 3) continue;
    const fsType = f[dash + 1]!;
    if (!handled(fsType)) continue;
    const source = mountinfoField(f[dash + 2]!);
    if (out.has(source) && fsType !== 'tmpfs') continue;
    const mountpoint = mountinfoField(f[4]!);
    const [major, minor] = f[2]!.split(':').map(Number) as [number, number];
    const device = fsType === 'tmpfs' ? mountpoint : fsType === 'overlay' ? `${source}_${major}-${minor}` : source;
    out.set(device, { device, mountpoint, fsType, major, minor });
  }
  return [...out.values()];
}

// getDiskStatsMap's partitionRegex: only these devices' rows are read (not loop, nvme or md).
const DISK = /^(?:(?:s|v|xv)d[a-z]+\d*|dm-\d+)$/;

/** Pure: getDiskStatsMap: /proc/diskstats rows by "/dev/NAME", with their major:minor. */
export function parseDiskstats(text: string): Map<string, DiskStats & { majorMinor: string }> {
  const out = new Map<string, DiskStats & { majorMinor: string }>();
  for (const line of text.split('\n')) {
    const w = line.trim().split(/\s+/);
    if (w.length < 14 || !DISK.test(w[2]!)) continue;
    const n = w.slice(3).map(Number);
    out.set(`/dev/${w[2]}`, {
      majorMinor: `${w[0]}:${w[1]}`,
      readsCompleted: n[0]!,
      readsMerged: n[1]!,
      sectorsRead: n[2]!,
      readTimeMs: n[3]!,
      writesCompleted: n[4]!,
      writesMerged: n[5]!,
      sectorsWritten: n[6]!,
      writeTimeMs: n[7]!,
      ioInProgress: n[8]!,
      ioTimeMs: n[9]!,
      weightedIoTimeMs: n[10]!,
    });
  }
  return out;
}

/** A device without a diskstats row: cAdvisor's zero DiskStats, still reported. */
export const NO_IO: DiskStats = {
  readsCompleted: 0,
  readsMerged: 0,
  sectorsRead: 0,
  readTimeMs: 0,
  writesCompleted: 0,
  writesMerged: 0,
  sectorsWritten: 0,
  writeTimeMs: 0,
  ioInProgress: 0,
  ioTimeMs: 0,
  weightedIoTimeMs: 0,
};

/**
 * Pure over its reads: GetFsInfoForPath. Each partition statfs'd, one whose statfs fails left
 * out; its I/O by device name, or else by major:minor. (A hinted cgroup's are those of this list
 * mounted at its host directories.)
 */
export function filesystemsOf(
  partitions: readonly Partition[],
  statfs: (mountpoint: string) => StatsFs | undefined,
  diskstats: Map<string, DiskStats & { majorMinor: string }>,
): Filesystem[] {
  const out: Filesystem[] = [];
  for (const p of partitions) {
    const s = statfs(p.mountpoint);
    if (!s) continue;
    const mm = `${p.major}:${p.minor}`;
    const io = diskstats.get(p.device) ?? [...diskstats.values()].find((d) => d.majorMinor === mm);
    const { majorMinor: _, ...disk } = io ?? { ...NO_IO, majorMinor: '' };
    out.push({
      device: p.device,
      mountpoint: p.mountpoint,
      capacityBytes: s.blocks * s.bsize,
      freeBytes: s.bfree * s.bsize,
      availableBytes: s.bavail * s.bsize,
      inodes: s.files,
      inodesFree: s.ffree,
      disk,
    });
  }
  return out;
}

/** cAdvisor's container hints: the host directories of each raw cgroup named, by its full path. */
export type ContainerHints = ReadonlyMap<string, readonly string[]>;

/**
 * Pure: GetContainerHintsFromFile's JSON ({"all_hosts": [{"full_path", "mounts": [{"host_dir"}]}]});
 * the first hint of a path counts, as newRawContainerHandler's loop. Throws on what Go's
 * json.Unmarshal refuses: not JSON, or a field of the wrong type. network_interface is read
 * and, as in cAdvisor v0.56, used for nothing.
 */
export function parseContainerHints(text: string): ContainerHints {
  const doc: unknown = JSON.parse(text);
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const list = <T>(v: unknown, what: string, each: (x: unknown) => T): T[] => {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw new Error(`${what} is not a list`);
    return v.map(each);
  };
  const str = (v: unknown, what: string): string => {
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') throw new Error(`${what} is not a string`);
    return v;
  };
  if (doc === null) return new Map();
  if (!isObject(doc)) throw new Error('not a JSON object');
  const out = new Map<string, string[]>();
  for (const hint of list(doc.all_hosts, 'all_hosts', (h) => h)) {
    if (!isObject(hint)) throw new Error('an all_hosts entry is not an object');
    const path = str(hint.full_path, 'full_path');
    const dirs = list(hint.mounts, `mounts of ${path}`, (m) => {
      if (!isObject(m)) throw new Error(`a mount of ${path} is not an object`);
      str(m.container_dir, 'container_dir');
      return str(m.host_dir, 'host_dir');
    });
    if (hint.network_interface !== undefined && hint.network_interface !== null && !isObject(hint.network_interface))
      throw new Error(`network_interface of ${path} is not an object`);
    if (!out.has(path)) out.set(path, dirs);
  }
  return out;
}

/** GetContainerHintsFromFile: no file is no hints; one that cannot be read or parsed stops the start, as cAdvisor's Start fails. */
export function loadContainerHints(path: string): ContainerHints {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw new Error(`--container-hints ${path}: ${(e as Error).message}`);
  }
  try {
    return parseContainerHints(text);
  } catch (e) {
    throw new Error(`--container-hints ${path}: ${(e as Error).message}`);
  }
}
