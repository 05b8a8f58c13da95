// Takes one RawSample: asks the runtime first (its calls take 50-300 ms here), then reads
// the cgroup and /proc files in one pass stamped with one time, which the rates computed
// between samples rely on. The reads are small and synchronous (~0.8 ms a pod), so the
// pass yields to the event loop after each pod rather than stall requests for tens of ms.
// Volumes: their directories are listed and statfs'd (once a filesystem) each sample, but
// their contents are walked in the background (volumes.ts): a sample takes the last walk. Claim
// volumes are measured in the background too (claim-volumes.ts).
// Process stats (cadvisor's fds, sockets, ulimits) walk /proc/<pid>/fd of each cgroup's own
// processes, once a process a sample (processes.ts).
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { memoryFromMeminfo } from './cgroup.ts';
import { parseDiskstatsNames } from './procfs.ts';
import {
  type CgroupLayout,
  containerCgroupOf,
  DEFAULT_LAYOUT,
  nodeAllocatableRoot,
  podCgroupCandidates,
} from '../resources/cgroup-layout.ts';
import { podEtcHostsPath } from '../podutil/pod-dirs.ts';
import type { HostStats } from './host.ts';
import { liveContainers, liveSandboxes } from './live.ts';
import type { RuntimeStatsSource } from './runtime-source.ts';
import { processSampler } from './processes.ts';
import type { CgroupSample, FsUsage, MachineIdentity, RawContainer, RawPod, RawSample, RawVolume, SystemContainer } from './sample.ts';
import type { VolumeStatsSource } from './volumes.ts';
import type { ClaimStatsSource } from './claim-volumes.ts';
import { systemContainerNames, type SystemCgroupsConfig } from '../node/system-cgroups.ts';
import type { ContainerHints, Filesystem, Partition } from './filesystems.ts';
import type { AppContainer, AppMetrics } from './app-metrics/manager.ts';

const NONE: SystemCgroupsConfig = { kubeletCgroups: '', systemCgroups: '', runtimeCgroups: '' };

export interface CollectorOptions {
  /** The kubelet's root directory: its filesystem is the node's "fs". */
  rootDir: string;
  podLogsDir: string;
  /** The cgroup driver and cgroupRoot: where kubepods and the pods' cgroups are; default cgroupfs below '/'. */
  cgroups?: CgroupLayout;
  /** When the kubelet started, the start time of its system container. */
  kubeletStartMs: number;
  /** The configured system containers; the kubelet's own cgroup stands in for kubeletCgroups. */
  systemCgroups?: SystemCgroupsConfig;
  /** The pods' volumes; without it pods have no volume stats. One for the kubelet's life: it caches the walks. */
  volumes?: VolumeStatsSource;
  /** The pods' claim volumes; one for the kubelet's life too. */
  claims?: ClaimStatsSource;
  /**
   * cAdvisor's filesystems, listed at start, and its container hints: the root container reports
   * them all, a raw cgroup (system container or pod) those mounted at its hint's host directories.
   */
  filesystems?: { partitions: readonly Partition[]; hints: ContainerHints };
  /** cAdvisor's application metrics of the running containers (app-metrics/). */
  appMetrics?: AppMetrics;
  /** The machine's identity and CPU topology, read once by the kubelet (unknown: empty, zeros). */
  machine?: MachineIdentity;
  now?: () => number;
}

const UNKNOWN_MACHINE: MachineIdentity = {
  machineID: '',
  systemUUID: '',
  bootID: '',
  kernelVersion: '',
  osVersion: '',
  physicalCores: 0,
  sockets: 0,
};

/**
 * The pod's volumes: the last walk of each directory and a statfs of each filesystem once a
 * sample (`fsByDev`), then the claim volumes' last figures.
 */
function podVolumes(
  o: CollectorOptions,
  host: HostStats,
  uid: string,
  fsByDev: Map<number, FsUsage | undefined>,
  keep: Set<string>,
): RawVolume[] | undefined {
  const src = o.volumes;
  if (!src && !o.claims) return undefined;
  const dirs = (src?.list(uid) ?? []).map((v): RawVolume => {
    keep.add(v.path);
    if (!fsByDev.has(v.dev)) fsByDev.set(v.dev, host.fs(v.path));
    return { name: v.name, plugin: v.plugin, ownFs: v.ownFs, usage: src!.usage(v.path), fs: fsByDev.get(v.dev) };
  });
  return [...dirs, ...(o.claims?.volumes(uid) ?? [])];
}

export async function collectSample(rt: RuntimeStatsSource, host: HostStats, o: CollectorOptions): Promise<RawSample> {
  const now = o.now ?? Date.now;
  const [sandboxes, containers, criStats, imageFs] = await Promise.allSettled([
    rt.sandboxes(),
    rt.containers(),
    rt.containerStats(),
    rt.imageFilesystems(),
  ]);
  const failed = [sandboxes, containers, criStats].find((r) => r.status === 'rejected');
  const timeMs = now();

  const { cgroups } = host;
  const processes = processSampler({ pids: (p) => cgroups.pids(p), openFiles: host.openFiles, ulimits: host.ulimits });
  // cadvisor's process stats for every cgroup but the root: the root's own processes are the
  // host's (here ~130, ~12 ms of fd walking a sample), which no kubelet consumer asks about.
  const sample = (path: string, isContainer = false): CgroupSample => ({
    ...cgroups.sample(path),
    processes: processes(path, isContainer),
  });
  // A container's cgroup below its pod's, as named; without a pod cgroup (cgroupsPerQOS false) only one that is there.
  const existing = (path: string | undefined, podPath: string | undefined) =>
    podPath || (path && cgroups.exists(path)) ? path : undefined;
  const root = cgroups.sample('/');
  if (!root.memory) root.memory = memoryFromMeminfo(host.meminfo());
  const diskstats = host.diskstats();
  const filesystems = o.filesystems && host.filesystems(o.filesystems.partitions, diskstats);
  // newRawContainerHandler: a cgroup with a hint reports the filesystems mounted at its host directories.
  const hinted = (path: string | undefined): Filesystem[] | undefined => {
    const dirs = path === undefined ? undefined : o.filesystems?.hints.get(path);
    return dirs?.length ? filesystems?.filter((f) => dirs.includes(f.mountpoint)) : undefined;
  };
  const system: SystemContainer[] = [];
  const layout = o.cgroups ?? DEFAULT_LAYOUT;
  // The pods' cgroup (upstream's GetPodCgroupRoot): kubepods, or without cgroupsPerQOS cgroupRoot,
  // by default the root, whose sample is the one just taken.
  const kubepods = nodeAllocatableRoot(layout);
  if (cgroups.exists(kubepods)) {
    system.push({
      name: 'pods',
      cgroupPath: kubepods,
      startTimeMs: kubepods === '/' ? host.bootTimeMs() : (cgroups.createdAtMs(kubepods) ?? host.bootTimeMs()),
      cgroup: kubepods === '/' ? root : sample(kubepods),
      filesystems: kubepods === '/' ? undefined : hinted(kubepods),
    });
  }
  const names = systemContainerNames(o.systemCgroups ?? NONE, cgroups.ofProcess('self'), kubepods);
  for (const [name, path] of Object.entries(names)) {
    // A configured cgroup that is not there has no stats (upstream logs GetCgroupStats' error and skips it).
    if (!path || !cgroups.exists(path)) continue;
    const startTimeMs = name === 'kubelet' ? o.kubeletStartMs : (cgroups.createdAtMs(path) ?? host.bootTimeMs());
    system.push({ name, cgroupPath: path, startTimeMs, cgroup: sample(path), filesystems: hinted(path) });
  }
  const fsImage = imageFs.status === 'fulfilled' ? imageFs.value[0] : undefined;

  const pods: RawPod[] = [];
  const ctrs: RawContainer[] = [];
  if (!failed && sandboxes.status === 'fulfilled' && containers.status === 'fulfilled' && criStats.status === 'fulfilled') {
    const bySandbox = new Map(liveSandboxes(sandboxes.value).map((s) => [s.id, s]));
    const podOf = new Map<string, RawPod>();
    const fsByDev = new Map<number, FsUsage | undefined>();
    const volumePaths = new Set<string>();
    const devOfMount = new Map<string, string | undefined>();
    const running: AppContainer[] = [];
    const layerDevice = (mountpoint: string | undefined) => {
      if (!mountpoint) return undefined;
      if (!devOfMount.has(mountpoint)) devOfMount.set(mountpoint, host.deviceOf(mountpoint));
      return devOfMount.get(mountpoint);
    };
    for (const c of liveContainers(containers.value)) {
      const sb = bySandbox.get(c.sandboxId);
      if (!sb) continue;
      let pod = podOf.get(sb.id);
      if (!pod) {
        const cgroupPath = podCgroupCandidates(layout, sb.uid).find((p) => cgroups.exists(p));
        const sandboxPath = existing(containerCgroupOf(layout, cgroupPath, sb.id), cgroupPath);
        const pausePid = sandboxPath ? cgroups.pids(sandboxPath)[0] : undefined;
        pod = {
          uid: sb.uid,
          name: sb.name,
          namespace: sb.namespace,
          sandboxId: sb.id,
          createdAtMs: sb.createdAtMs,
          cgroupPath,
          sandboxCgroupPath: sandboxPath,
          cgroup: cgroupPath ? sample(cgroupPath) : undefined,
          sandboxCgroup: sandboxPath && cgroups.exists(sandboxPath) ? sample(sandboxPath, true) : undefined,
          processCount: cgroupPath ? cgroups.processCount(cgroupPath) : undefined,
          network: pausePid ? host.netDev(pausePid) : undefined,
          volumes: podVolumes(o, host, sb.uid, fsByDev, volumePaths),
          etcHosts: host.dirUsage(podEtcHostsPath(o.rootDir, sb.uid)),
          filesystems: hinted(cgroupPath),
        };
        podOf.set(sb.id, pod);
        pods.push(pod);
        await yieldToLoop();
      }
      const cgroupPath = existing(containerCgroupOf(layout, pod.cgroupPath, c.id), pod.cgroupPath);
      const cri = criStats.value.get(c.id);
      ctrs.push({
        id: c.id,
        name: c.name,
        podUid: sb.uid,
        sandboxId: sb.id,
        image: c.image,
        createdAtMs: c.createdAtMs,
        cgroupPath,
        cgroup: cgroupPath && cgroups.exists(cgroupPath) ? sample(cgroupPath, true) : undefined,
        cri,
        logs: host.dirUsage(`${o.podLogsDir}/${sb.namespace}_${sb.name}_${sb.uid}/${c.name}`),
        writableLayerDevice: layerDevice(cri?.writableLayer?.mountpoint),
      });
      if (c.running)
        running.push({
          id: c.id,
          ref: `${sb.namespace}/${sb.name}/${c.name}`,
          pids: () => (cgroupPath ? cgroups.pids(cgroupPath) : []),
          // containerd's container labels: its image's, then the CRI's over them (BuildLabels).
          labels: async () => ({ ...(await rt.imageLabels(c.imageRef)), ...c.labels }),
        });
    }
    if (o.appMetrics) {
      const custom = await o.appMetrics(running);
      for (const c of ctrs) c.customMetrics = custom.get(c.id);
    }
    // Only when the runtime answered: otherwise every pod would seem gone and its walks lost.
    o.volumes?.retain(volumePaths);
    o.claims?.retain(new Set(pods.map((p) => p.uid)));
  }

  return {
    timeMs,
    bootTimeMs: host.bootTimeMs(),
    machine: { ...(o.machine ?? UNKNOWN_MACHINE), ...host.machine() },
    root,
    network: host.netDev(1) ?? [],
    system,
    rootFs: host.fs(o.rootDir),
    filesystems,
    imageFs: fsImage && { ...fsImage, fs: host.fs(fsImage.mountpoint) },
    rlimit: host.rlimit(),
    blockDevices: parseDiskstatsNames(diskstats),
    pods,
    containers: ctrs,
    runtimeError: failed?.status === 'rejected' ? String((failed.reason as Error)?.message ?? failed.reason) : undefined,
  };
}
