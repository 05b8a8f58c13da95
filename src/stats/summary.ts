// The Summary (/stats/summary) built from a sample and its predecessor, as upstream's
// summary provider builds it from cadvisor and CRI: node figures from the root cgroup,
// pod CPU and memory from the pod cgroup, containers from their cgroups (CRI stats when a
// cgroup cannot be read), rootfs from the CRI writable layer, logs from the log directory.
import { usageNanoCores, type CpuReading } from './rate.ts';
import type { CgroupSample, CpuSample, FsUsage, MemorySample, NetInterface, RawContainer, RawPod, RawSample } from './sample.ts';
import type { ContainerStats, CPUStats, FsStats, MemoryStats, NetworkStats, PodStats, Summary } from './summary-types.ts';

// Upstream reports this interface's figures inline (network.DefaultInterfaceName).
const DEFAULT_INTERFACE = 'eth0';

/** Pure: metav1.Time's JSON form, RFC 3339 in whole seconds. */
export const rfc3339 = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

function cpuStats(timeMs: number, cpu: CpuSample, prev: CpuReading | undefined): CPUStats {
  return { time: rfc3339(timeMs), usageNanoCores: usageNanoCores(prev, { usageNs: cpu.usageNs, timeMs }), usageCoreNanoSeconds: cpu.usageNs };
}

/** availableBytes is the limit minus the working set, and only where there is a limit. */
function memoryStats(timeMs: number, m: MemorySample, limitBytes = m.limitBytes): MemoryStats {
  return {
    time: rfc3339(timeMs),
    availableBytes: limitBytes !== undefined ? Math.max(0, limitBytes - m.workingSetBytes) : undefined,
    usageBytes: m.usageBytes, workingSetBytes: m.workingSetBytes, rssBytes: m.rssBytes,
    pageFaults: m.pageFaults, majorPageFaults: m.majorPageFaults,
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
    availableBytes: fs?.availableBytes, capacityBytes: fs?.capacityBytes,
    usedBytes: used ? used.usedBytes : fs?.usedBytes,
    inodesFree: fs?.inodesFree, inodes: fs?.inodes,
    inodesUsed: used ? used.inodesUsed : fs && fs.inodes - fs.inodesFree,
  };
}

/** A container's CPU reading and its time, from its cgroup or else from the runtime. */
function containerCpu(c: RawContainer, sampleMs: number): CpuReading | undefined {
  if (c.cgroup?.cpu) return { usageNs: c.cgroup.cpu.usageNs, timeMs: sampleMs };
  if (c.cri?.cpuNs !== undefined) return { usageNs: c.cri.cpuNs, timeMs: c.cri.timeMs };
  return undefined;
}

function containerStats(c: RawContainer, s: RawSample, prev: RawSample | undefined): ContainerStats {
  const cpu = containerCpu(c, s.timeMs);
  const p = prev?.containers.find((x) => x.id === c.id);
  const before = p && prev ? containerCpu(p, prev.timeMs) : undefined;
  const cri = c.cri;
  const memory: MemoryStats | undefined = c.cgroup?.memory
    ? memoryStats(s.timeMs, c.cgroup.memory)
    : cri?.workingSetBytes !== undefined
      ? { time: rfc3339(cri.timeMs), usageBytes: cri.usageBytes, workingSetBytes: cri.workingSetBytes, rssBytes: cri.rssBytes, pageFaults: cri.pageFaults, majorPageFaults: cri.majorPageFaults }
      : undefined;
  const layer = cri?.writableLayer;
  const layerFs = layer && (!layer.mountpoint || layer.mountpoint === s.imageFs?.mountpoint) ? s.imageFs?.fs : undefined;
  return {
    name: c.name,
    startTime: rfc3339(c.createdAtMs),
    // Upstream reports zero rather than nothing when the runtime has no CPU figure.
    cpu: cpu ? { time: rfc3339(cpu.timeMs), usageNanoCores: usageNanoCores(before, cpu), usageCoreNanoSeconds: cpu.usageNs } : { time: rfc3339(s.timeMs), usageNanoCores: 0, usageCoreNanoSeconds: 0 },
    memory: memory ?? { time: rfc3339(s.timeMs), workingSetBytes: 0 },
    rootfs: layer ? fsStats(layer.timeMs || s.timeMs, layerFs, { usedBytes: layer.usedBytes, inodesUsed: layer.inodesUsed }) : undefined,
    logs: c.logs ? fsStats(s.timeMs, s.rootFs, c.logs) : undefined,
  };
}

const sum = (xs: (number | undefined)[]) => (xs.some((x) => x !== undefined) ? xs.reduce<number>((a, x) => a + (x ?? 0), 0) : undefined);

function podStats(pod: RawPod, containers: ContainerStats[], s: RawSample, prev: RawSample | undefined): PodStats {
  const before = prev?.pods.find((p) => p.uid === pod.uid)?.cgroup?.cpu;
  const cg: CgroupSample | undefined = pod.cgroup;
  // Without the pod cgroup (not found), the containers' sum is the best estimate, as upstream falls back to.
  const cpu: PodStats['cpu'] = cg?.cpu
    ? cpuStats(s.timeMs, cg.cpu, before && prev ? { usageNs: before.usageNs, timeMs: prev.timeMs } : undefined)
    : { time: rfc3339(s.timeMs), usageNanoCores: sum(containers.map((c) => c.cpu?.usageNanoCores)), usageCoreNanoSeconds: sum(containers.map((c) => c.cpu?.usageCoreNanoSeconds)) };
  const memory: PodStats['memory'] = cg?.memory
    ? memoryStats(s.timeMs, cg.memory)
    : { time: rfc3339(s.timeMs), usageBytes: sum(containers.map((c) => c.memory?.usageBytes)), workingSetBytes: sum(containers.map((c) => c.memory?.workingSetBytes)), rssBytes: sum(containers.map((c) => c.memory?.rssBytes)) };
  // Ephemeral storage: the containers' writable layers and logs (no emptyDir volumes yet).
  const used = sum(containers.flatMap((c) => (c.rootfs ? [c.rootfs.usedBytes, c.logs?.usedBytes] : [])));
  const inodes = sum(containers.flatMap((c) => (c.rootfs ? [c.rootfs.inodesUsed, c.logs?.inodesUsed] : [])));
  return {
    podRef: { name: pod.name, namespace: pod.namespace, uid: pod.uid },
    startTime: rfc3339(pod.createdAtMs),
    containers,
    cpu,
    memory,
    network: networkStats(s.timeMs, pod.network),
    'ephemeral-storage': s.rootFs ? fsStats(s.timeMs, s.rootFs, { usedBytes: used ?? 0, inodesUsed: inodes ?? 0 }) : undefined,
    process_stats: pod.processCount !== undefined ? { process_count: pod.processCount } : undefined,
  };
}

const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Pure: the Summary of `cur`, with CPU rates against `prev`. */
export function buildSummary(nodeName: string, cur: RawSample, prev?: RawSample): Summary {
  const t = cur.timeMs;
  const system: ContainerStats[] = cur.system.map((sc) => {
    const before = prev?.system.find((p) => p.name === sc.name)?.cgroup.cpu;
    return {
      name: sc.name, startTime: rfc3339(sc.startTimeMs),
      cpu: sc.cgroup.cpu && cpuStats(t, sc.cgroup.cpu, before && prev ? { usageNs: before.usageNs, timeMs: prev.timeMs } : undefined),
      memory: sc.cgroup.memory && memoryStats(t, sc.cgroup.memory),
    };
  }).sort(byName);
  const rootBefore = prev?.root.cpu && { usageNs: prev.root.cpu.usageNs, timeMs: prev.timeMs };
  const imageFs = cur.imageFs && fsStats(cur.imageFs.timeMs || t, cur.imageFs.fs, { usedBytes: cur.imageFs.usedBytes, inodesUsed: cur.imageFs.inodesUsed });
  const pods = cur.pods.map((p) => podStats(p, cur.containers.filter((c) => c.sandboxId === p.sandboxId).map((c) => containerStats(c, cur, prev)).sort(byName), cur, prev));
  pods.sort((a, b) => `${a.podRef.namespace}/${a.podRef.name}`.localeCompare(`${b.podRef.namespace}/${b.podRef.name}`));
  return {
    node: {
      nodeName,
      systemContainers: system.length ? system : undefined,
      startTime: rfc3339(cur.bootTimeMs),
      cpu: cur.root.cpu && cpuStats(t, cur.root.cpu, rootBefore),
      // The root cgroup has no limit of its own: the machine's memory is its limit.
      memory: cur.root.memory && memoryStats(t, cur.root.memory, cur.machine.memoryBytes),
      network: networkStats(t, cur.network),
      fs: cur.rootFs && fsStats(t, cur.rootFs),
      // One filesystem holds both images and writable layers unless the runtime says otherwise.
      runtime: imageFs && { imageFs, containerFs: imageFs },
      rlimit: { time: rfc3339(t), maxpid: cur.rlimit.maxPid, curproc: cur.rlimit.curProc },
    },
    pods,
  };
}

/** Pure: ?only_cpu_and_memory=true, what metrics-server asked for before /metrics/resource. */
export function cpuAndMemoryOnly(s: Summary): Summary {
  const c = (x: ContainerStats): ContainerStats => ({ name: x.name, startTime: x.startTime, cpu: x.cpu, memory: x.memory });
  return {
    node: { nodeName: s.node.nodeName, systemContainers: s.node.systemContainers?.map(c), startTime: s.node.startTime, cpu: s.node.cpu, memory: s.node.memory },
    pods: s.pods.map((p) => ({ podRef: p.podRef, startTime: p.startTime, containers: p.containers.map(c), cpu: p.cpu, memory: p.memory })),
  };
}
