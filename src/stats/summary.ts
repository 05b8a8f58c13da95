// The Summary (/stats/summary) built from a sample and its predecessor, as upstream's
// summary provider builds it from cadvisor and CRI: node figures from the root cgroup,
// pod CPU and memory from the pod cgroup, containers from their cgroups (CRI stats when a
// cgroup cannot be read), rootfs from the CRI writable layer, logs from the log directory,
// volumes from the last walk of their directories and a statfs of their filesystems, claim
// volumes as their plugin measures them.
// Node, system containers and pods take cadvisor's shape (PSI always there, zeros where the
// kernel has none); containers take the CRI's (PSI only where the runtime reports it).
import { usageNanoCores, type CpuReading } from './rate.ts';
import type {
  CgroupSample,
  CpuSample,
  FsUsage,
  MemorySample,
  NetInterface,
  Psi,
  RawContainer,
  RawPod,
  RawSample,
  RawVolume,
} from './sample.ts';
import { rfc3339 } from '../apiserver/time.ts';
import { byCodeUnits } from '../podutil/podutil.ts';
import { CONFIG_MAP, EMPTY_DIR, GIT_REPO, pluginDirName } from '../volumes/plugins/names.ts';
import type {
  ContainerStats,
  CPUStats,
  FsStats,
  IOStats,
  MemoryStats,
  NetworkStats,
  PodStats,
  PSIStats,
  Summary,
  SwapStats,
  UserDefinedMetric,
  VolumeStats,
} from './summary-types.ts';

// Upstream reports this interface's figures inline (network.DefaultInterfaceName).
const DEFAULT_INTERFACE = 'eth0';

/** The wire form of a PSI reading, in upstream's key order; undefined stays undefined. */
function psiStats(p: Psi | undefined): PSIStats | undefined {
  if (!p) return undefined;
  const line = (d: Psi['full']) => ({ total: d.total, avg10: d.avg10, avg60: d.avg60, avg300: d.avg300 });
  return { full: line(p.full), some: line(p.some) };
}

const ZERO_PSI: Psi = { full: { total: 0, avg10: 0, avg60: 0, avg300: 0 }, some: { total: 0, avg10: 0, avg60: 0, avg300: 0 } };

/**
 * PSI of a cgroup as cadvisor reports it: its PSI fields are values, never nil, so where the
 * kernel has no pressure file (cgroup v1, or PSI off) upstream still sends psi, all zeros.
 */
const cadvisorPsi = (p: Psi | undefined): PSIStats => psiStats(p ?? ZERO_PSI)!;

function cpuStats(timeMs: number, cpu: CpuSample, prev: CpuReading | undefined, psi?: PSIStats): CPUStats {
  return {
    time: rfc3339(timeMs),
    usageNanoCores: usageNanoCores(prev, { usageNs: cpu.usageNs, timeMs }),
    usageCoreNanoSeconds: cpu.usageNs,
    psi,
  };
}

/** availableBytes is the limit minus the working set, and only where there is a limit. */
function memoryStats(timeMs: number, m: MemorySample, limitBytes = m.limitBytes, psi?: PSIStats): MemoryStats {
  return {
    time: rfc3339(timeMs),
    availableBytes: limitBytes !== undefined ? Math.max(0, limitBytes - m.workingSetBytes) : undefined,
    usageBytes: m.usageBytes,
    workingSetBytes: m.workingSetBytes,
    rssBytes: m.rssBytes,
    // cadvisorInfoToMemoryStats reads ContainerData: the cgroup's own faults (v1's pgfault,
    // not total_pgfault), so a parent such as kubepods shows few.
    pageFaults: m.localPageFaults,
    majorPageFaults: m.localMajorPageFaults,
    psi,
  };
}

/**
 * cadvisor's io for a cgroup it read (only pressure so far). It needs the blkio (v1) or io
 * (v2) controller, which every cgroup the kubelet and the runtime make has.
 */
function ioStats(timeMs: number, cg: CgroupSample): IOStats | undefined {
  return cg.cpu || cg.memory ? { time: rfc3339(timeMs), psi: cadvisorPsi(cg.psi?.io) } : undefined;
}

/**
 * cadvisor's swap: usage, and the limit minus usage where there is a limit (v1's is memory
 * and swap together, as cadvisor reads memory.memsw.limit_in_bytes; the node's is SwapTotal).
 */
function swapStats(timeMs: number, m: MemorySample | undefined, limitBytes = m?.swapLimitBytes): SwapStats | undefined {
  if (!m) return undefined;
  return {
    time: rfc3339(timeMs),
    swapAvailableBytes: limitBytes !== undefined ? Math.max(0, limitBytes - m.swapBytes) : undefined,
    swapUsageBytes: m.swapBytes,
  };
}

function networkStats(timeMs: number, ifaces: NetInterface[] | undefined): NetworkStats | undefined {
  if (!ifaces?.length) return undefined;
  const one = (i: NetInterface) => ({ name: i.name, rxBytes: i.rxBytes, rxErrors: i.rxErrors, txBytes: i.txBytes, txErrors: i.txErrors });
  const def = ifaces.find((i) => i.name === DEFAULT_INTERFACE);
  return { time: rfc3339(timeMs), ...(def ? one(def) : { name: '' }), interfaces: ifaces.map(one) };
}

function fsStats(timeMs: number, fs: FsUsage | undefined, used?: { usedBytes?: number; inodesUsed?: number }): FsStats {
  return {
    time: rfc3339(timeMs),
    availableBytes: fs?.availableBytes,
    capacityBytes: fs?.capacityBytes,
    usedBytes: used ? used.usedBytes : fs?.usedBytes,
    inodesFree: fs?.inodesFree,
    inodes: fs?.inodes,
    inodesUsed: used ? used.inodesUsed : fs && fs.inodes - fs.inodesFree,
  };
}

/** A container's CPU reading and its time, from its cgroup or else from the runtime. */
function containerCpu(c: RawContainer, sampleMs: number): CpuReading | undefined {
  if (c.cgroup?.cpu) return { usageNs: c.cgroup.cpu.usageNs, timeMs: sampleMs };
  if (c.cri?.cpuNs !== undefined) return { usageNs: c.cri.cpuNs, timeMs: c.cri.timeMs };
  return undefined;
}

/**
 * A container's memory, swap and io in the CRI's shape, which upstream reports for containers:
 * containerd's availableBytes and swapAvailableBytes are 0 where there is no limit, and the
 * kubelet fills in zero swap and a bare io when the runtime sends none.
 */
function containerMemory(c: RawContainer, s: RawSample): Pick<ContainerStats, 'memory' | 'io' | 'swap'> {
  const t = rfc3339(s.timeMs);
  const cg = c.cgroup,
    cri = c.cri;
  if (cg?.memory) {
    const m = cg.memory,
      swapLimit = m.swapLimitBytes;
    return {
      memory: {
        ...memoryStats(s.timeMs, m, m.limitBytes, psiStats(cg.psi?.memory)),
        availableBytes: m.limitBytes !== undefined ? Math.max(0, m.limitBytes - m.workingSetBytes) : 0,
      },
      io: { time: t, psi: psiStats(cg.psi?.io) },
      swap: {
        time: t,
        swapAvailableBytes: swapLimit !== undefined ? Math.max(0, swapLimit - m.swapBytes) : 0,
        swapUsageBytes: m.swapBytes,
      },
    };
  }
  return {
    memory:
      cri?.workingSetBytes !== undefined
        ? {
            time: rfc3339(cri.timeMs),
            availableBytes: cri.availableBytes,
            usageBytes: cri.usageBytes,
            workingSetBytes: cri.workingSetBytes,
            rssBytes: cri.rssBytes,
            pageFaults: cri.pageFaults,
            majorPageFaults: cri.majorPageFaults,
            psi: psiStats(cri.memoryPsi),
          }
        : { time: t, workingSetBytes: 0 },
    io: cri?.io ? { time: rfc3339(cri.io.timeMs || s.timeMs), psi: psiStats(cri.io.psi) } : { time: t },
    swap: cri?.swap
      ? { time: rfc3339(cri.swap.timeMs || s.timeMs), swapAvailableBytes: cri.swap.availableBytes, swapUsageBytes: cri.swap.usageBytes }
      : { time: t, swapAvailableBytes: 0, swapUsageBytes: 0 },
  };
}

function containerStats(c: RawContainer, s: RawSample, prev: RawSample | undefined): ContainerStats {
  const cpu = containerCpu(c, s.timeMs);
  const p = prev?.containers.find((x) => x.id === c.id);
  const before = p && prev ? containerCpu(p, prev.timeMs) : undefined;
  const cpuPsi = psiStats(c.cgroup?.cpu ? c.cgroup.psi?.cpu : c.cri?.cpuPsi);
  const { memory, io, swap } = containerMemory(c, s);
  const layer = c.cri?.writableLayer;
  const layerFs = layer && (!layer.mountpoint || layer.mountpoint === s.imageFs?.mountpoint) ? s.imageFs?.fs : undefined;
  return {
    name: c.name,
    startTime: rfc3339(c.createdAtMs),
    // Upstream reports zero rather than nothing when the runtime has no CPU figure.
    cpu: cpu
      ? { time: rfc3339(cpu.timeMs), usageNanoCores: usageNanoCores(before, cpu), usageCoreNanoSeconds: cpu.usageNs, psi: cpuPsi }
      : { time: rfc3339(s.timeMs), usageNanoCores: 0, usageCoreNanoSeconds: 0 },
    memory,
    io,
    rootfs: layer ? fsStats(layer.timeMs || s.timeMs, layerFs, { usedBytes: layer.usedBytes, inodesUsed: layer.inodesUsed }) : undefined,
    logs: c.logs ? fsStats(s.timeMs, s.rootFs, c.logs) : undefined,
    userDefinedMetrics: userDefinedMetrics(c, p),
    swap,
  };
}

/**
 * Pure: cadvisorInfoToUserDefinedMetrics: a metric a spec, with the latest value of the two
 * samples (cAdvisor's last two stats entries, as the kubelet asks for them); an "int" metric's
 * value is its integer one. None without specs (Spec.HasCustomMetrics).
 */
export function userDefinedMetrics(c: RawContainer, prev: RawContainer | undefined): UserDefinedMetric[] | undefined {
  const specs = c.customMetrics?.specs;
  if (!specs?.length) return undefined;
  return specs.map((spec) => {
    let latest: { timeMs: number; value: number } | undefined;
    for (const v of [prev, c].flatMap((x) => x?.customMetrics?.values[spec.name] ?? []))
      if (!latest || v.timestampMs >= latest.timeMs)
        latest = { timeMs: v.timestampMs, value: spec.format === 'int' ? (v.intValue ?? 0) : v.floatValue };
    return { name: spec.name, type: spec.type, units: spec.units, time: latest ? rfc3339(latest.timeMs) : null, value: latest?.value ?? 0 };
  });
}

/**
 * Pure: upstream's IsLocalEphemeralVolume (gitRepo, configMap, emptyDir of the default
 * medium), told from the directory: an emptyDir on a filesystem of its own is a tmpfs
 * (medium Memory), which holds memory, not disk. Secret, downwardAPI and projected volumes
 * are tmpfs too, and never count.
 */
export function isLocalEphemeral(v: Pick<RawVolume, 'plugin' | 'ownFs'>): boolean {
  return (
    v.plugin === pluginDirName(CONFIG_MAP) || v.plugin === pluginDirName(GIT_REPO) || (v.plugin === pluginDirName(EMPTY_DIR) && !v.ownFs)
  );
}

/**
 * Pure: a volume's stats as upstream's parsePodVolumeStats makes them from its plugin's metrics:
 * a claim volume's as measured (statfs, or the CSI driver's), the others' as metricsDu gives them
 * (used bytes and inodes from the walk, at its time, the rest from statfs of the volume's
 * filesystem). Before its first measure, or without statfs, upstream has no metrics for it and
 * leaves it out; so does this (undefined).
 */
export function volumeStats(v: RawVolume): VolumeStats | undefined {
  const m =
    v.metrics ?? (v.usage && v.fs && { ...v.fs, usedBytes: v.usage.usedBytes, inodesUsed: v.usage.inodesUsed, timeMs: v.usage.timeMs });
  if (!m) return undefined;
  return {
    time: rfc3339(m.timeMs),
    availableBytes: m.availableBytes,
    capacityBytes: m.capacityBytes,
    usedBytes: m.usedBytes,
    inodesFree: m.inodesFree,
    inodes: m.inodes,
    inodesUsed: m.inodesUsed,
    name: v.name,
    pvcRef: v.pvc && { name: v.pvc.name, namespace: v.pvc.namespace },
    volumeHealthStats: v.metrics?.abnormal !== undefined ? { abnormal: v.metrics.abnormal } : undefined,
  };
}

/** Pure: the pod's volume stats, the local ephemeral ones first, as upstream lists them; by name within each. */
function podVolumeStats(volumes: RawVolume[] | undefined): { all: VolumeStats[]; ephemeral: VolumeStats[] } {
  const ephemeral: VolumeStats[] = [],
    other: VolumeStats[] = [];
  for (const v of [...(volumes ?? [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const st = volumeStats(v);
    if (st) (isLocalEphemeral(v) ? ephemeral : other).push(st);
  }
  return { all: [...ephemeral, ...other], ephemeral };
}

const sum = (xs: (number | undefined)[]) => (xs.some((x) => x !== undefined) ? xs.reduce<number>((a, x) => a + (x ?? 0), 0) : undefined);

function podStats(pod: RawPod, containers: ContainerStats[], s: RawSample, prev: RawSample | undefined): PodStats {
  const before = prev?.pods.find((p) => p.uid === pod.uid)?.cgroup?.cpu;
  const cg: CgroupSample | undefined = pod.cgroup;
  // Without the pod cgroup (not found), the containers' sum is the best estimate, as upstream
  // falls back to; pressure does not add up, so that estimate has none.
  const cpu: PodStats['cpu'] = cg?.cpu
    ? cpuStats(s.timeMs, cg.cpu, before && prev ? { usageNs: before.usageNs, timeMs: prev.timeMs } : undefined, cadvisorPsi(cg.psi?.cpu))
    : {
        time: rfc3339(s.timeMs),
        usageNanoCores: sum(containers.map((c) => c.cpu?.usageNanoCores)),
        usageCoreNanoSeconds: sum(containers.map((c) => c.cpu?.usageCoreNanoSeconds)),
      };
  const memory: PodStats['memory'] = cg?.memory
    ? memoryStats(s.timeMs, cg.memory, cg.memory.limitBytes, cadvisorPsi(cg.psi?.memory))
    : {
        time: rfc3339(s.timeMs),
        availableBytes: sum(containers.map((c) => c.memory?.availableBytes)),
        usageBytes: sum(containers.map((c) => c.memory?.usageBytes)),
        workingSetBytes: sum(containers.map((c) => c.memory?.workingSetBytes)),
        rssBytes: sum(containers.map((c) => c.memory?.rssBytes)),
      };
  // The fallbacks as upstream's addIOStats and addSwapStats: the first container's io time, the last one's swap time.
  const firstIo = containers.find((c) => c.io)?.io;
  const io = cg && (cg.cpu || cg.memory) ? ioStats(s.timeMs, cg) : firstIo && { time: firstIo.time };
  const swaps = containers.flatMap((c) => (c.swap ? [c.swap] : []));
  const swap = cg?.memory
    ? swapStats(s.timeMs, cg.memory)
    : swaps.length
      ? {
          time: swaps.at(-1)!.time,
          swapAvailableBytes: sum(swaps.map((w) => w.swapAvailableBytes ?? 0)),
          swapUsageBytes: sum(swaps.map((w) => w.swapUsageBytes ?? 0)),
        }
      : undefined;
  // Ephemeral storage, as upstream's calcEphemeralStorage: the containers' writable layers and
  // logs (of those with a writable layer), the local ephemeral volumes and the etc-hosts file.
  const volumes = podVolumeStats(pod.volumes);
  const used = sum([
    ...containers.flatMap((c) => (c.rootfs ? [c.rootfs.usedBytes, c.logs?.usedBytes] : [])),
    ...volumes.ephemeral.map((v) => v.usedBytes),
    pod.etcHosts?.usedBytes,
  ]);
  const inodes = sum([
    ...containers.flatMap((c) => (c.rootfs ? [c.rootfs.inodesUsed, c.logs?.inodesUsed] : [])),
    ...volumes.ephemeral.map((v) => v.inodesUsed),
    pod.etcHosts?.inodesUsed,
  ]);
  return {
    podRef: { name: pod.name, namespace: pod.namespace, uid: pod.uid },
    startTime: rfc3339(pod.createdAtMs),
    containers,
    cpu,
    memory,
    io,
    network: networkStats(s.timeMs, pod.network),
    volume: volumes.all.length ? volumes.all : undefined,
    'ephemeral-storage': s.rootFs ? fsStats(s.timeMs, s.rootFs, { usedBytes: used ?? 0, inodesUsed: inodes ?? 0 }) : undefined,
    process_stats: pod.processCount !== undefined ? { process_count: pod.processCount } : undefined,
    swap,
  };
}

const byName = <T extends { name: string }>(a: T, b: T) => byCodeUnits(a.name, b.name);

/** Pure: the Summary of `cur`, with CPU rates against `prev`. */
export function buildSummary(nodeName: string, cur: RawSample, prev?: RawSample): Summary {
  const t = cur.timeMs;
  const root = cur.root;
  const system: ContainerStats[] = cur.system
    .map((sc) => {
      const before = prev?.system.find((p) => p.name === sc.name)?.cgroup.cpu;
      const cg = sc.cgroup;
      return {
        name: sc.name,
        startTime: rfc3339(sc.startTimeMs),
        cpu:
          cg.cpu &&
          cpuStats(t, cg.cpu, before && prev ? { usageNs: before.usageNs, timeMs: prev.timeMs } : undefined, cadvisorPsi(cg.psi?.cpu)),
        memory: cg.memory && memoryStats(t, cg.memory, cg.memory.limitBytes, cadvisorPsi(cg.psi?.memory)),
        io: ioStats(t, cg),
        swap: swapStats(t, cg.memory),
      };
    })
    .sort(byName);
  const rootBefore = prev?.root.cpu && { usageNs: prev.root.cpu.usageNs, timeMs: prev.timeMs };
  const imageFs =
    cur.imageFs &&
    fsStats(cur.imageFs.timeMs || t, cur.imageFs.fs, { usedBytes: cur.imageFs.usedBytes, inodesUsed: cur.imageFs.inodesUsed });
  const pods = cur.pods.map((p) =>
    podStats(
      p,
      cur.containers
        .filter((c) => c.sandboxId === p.sandboxId)
        .map((c) => containerStats(c, cur, prev))
        .sort(byName),
      cur,
      prev,
    ),
  );
  pods.sort((a, b) => byCodeUnits(`${a.podRef.namespace}/${a.podRef.name}`, `${b.podRef.namespace}/${b.podRef.name}`));
  return {
    node: {
      nodeName,
      systemContainers: system.length ? system : undefined,
      startTime: rfc3339(cur.bootTimeMs),
      cpu: root.cpu && cpuStats(t, root.cpu, rootBefore, cadvisorPsi(root.psi?.cpu)),
      // The root cgroup has no limit of its own: the machine's memory is its limit.
      memory: root.memory && memoryStats(t, root.memory, cur.machine.memoryBytes, cadvisorPsi(root.psi?.memory)),
      // The root's own pressure files (v2); on v1 zeros, as upstream, though /proc/pressure has the host's.
      io: ioStats(t, root),
      network: networkStats(t, cur.network),
      fs: cur.rootFs && fsStats(t, cur.rootFs),
      // One filesystem holds both images and writable layers unless the runtime says otherwise.
      runtime: imageFs && { imageFs, containerFs: imageFs },
      rlimit: { time: rfc3339(t), maxpid: cur.rlimit.maxPid, curproc: cur.rlimit.curProc },
      // The root has no swap limit of its own either: cadvisor gives it SwapTotal.
      swap: swapStats(t, root.memory, cur.machine.swapBytes),
    },
    pods,
  };
}

/**
 * Pure: ?only_cpu_and_memory=true, what metrics-server asked for before /metrics/resource.
 * Upstream's CPU-and-memory path keeps swap (and the psi inside cpu and memory) too.
 */
export function cpuAndMemoryOnly(s: Summary): Summary {
  const c = (x: ContainerStats): ContainerStats => ({ name: x.name, startTime: x.startTime, cpu: x.cpu, memory: x.memory, swap: x.swap });
  return {
    node: {
      nodeName: s.node.nodeName,
      systemContainers: s.node.systemContainers?.map(c),
      startTime: s.node.startTime,
      cpu: s.node.cpu,
      memory: s.node.memory,
      swap: s.node.swap,
    },
    pods: s.pods.map((p) => ({
      podRef: p.podRef,
      startTime: p.startTime,
      containers: p.containers.map(c),
      cpu: p.cpu,
      memory: p.memory,
      swap: p.swap,
    })),
  };
}
