// Takes one RawSample: asks the runtime first (its calls take 50-300 ms here), then reads
// the cgroup and /proc files in one pass stamped with one time, which the rates computed
// between samples rely on. The reads are small and synchronous (~0.8 ms a pod), so the
// pass yields to the event loop after each pod rather than stall requests for tens of ms.
// Volumes: their directories are listed and statfs'd (once a filesystem) each sample, but
// their contents are walked in the background (volumes.ts): a sample takes the last walk.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { memoryFromMeminfo } from './cgroup.ts';
import { kubepodsCgroup, podCgroupCandidates } from '../resources/cgroup-layout.ts';
import type { HostStats } from './host.ts';
import { liveContainers, liveSandboxes } from './live.ts';
import type { RuntimeStatsSource } from './runtime-source.ts';
import type { FsUsage, RawContainer, RawPod, RawSample, RawVolume, SystemContainer } from './sample.ts';
import type { VolumeStatsSource } from './volumes.ts';

export interface CollectorOptions {
  /** The kubelet's root directory: its filesystem is the node's "fs". */
  rootDir: string;
  podLogsDir: string;
  /** KubeletConfiguration cgroupRoot: pods are below its kubepods; default '/'. */
  cgroupRoot?: string;
  /** When the kubelet started, the start time of its system container. */
  kubeletStartMs: number;
  /** The pods' volumes; without it pods have no volume stats. One for the kubelet's life: it caches the walks. */
  volumes?: VolumeStatsSource;
  now?: () => number;
}

/** The pod's volumes: the last walk of each, and a statfs of each filesystem once a sample (`fsByDev`). */
function podVolumes(
  src: VolumeStatsSource,
  host: HostStats,
  uid: string,
  fsByDev: Map<number, FsUsage | undefined>,
  keep: Set<string>,
): RawVolume[] {
  return src.list(uid).map((v) => {
    keep.add(v.path);
    if (!fsByDev.has(v.dev)) fsByDev.set(v.dev, host.fs(v.path));
    return { name: v.name, plugin: v.plugin, ownFs: v.ownFs, usage: src.usage(v.path), fs: fsByDev.get(v.dev) };
  });
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
  const root = cgroups.sample('/');
  if (!root.memory) root.memory = memoryFromMeminfo(host.meminfo());
  const system: SystemContainer[] = [];
  const kubepods = kubepodsCgroup(o.cgroupRoot ?? '/');
  if (cgroups.exists(kubepods)) {
    system.push({
      name: 'pods',
      cgroupPath: kubepods,
      startTimeMs: cgroups.createdAtMs(kubepods) ?? host.bootTimeMs(),
      cgroup: cgroups.sample(kubepods),
    });
  }
  // The kubelet's own cgroup, unless it shares the root's (then its figures would be the node's).
  const own = cgroups.ofProcess('self');
  if (own && own !== '/' && !own.startsWith(kubepods)) {
    system.push({ name: 'kubelet', cgroupPath: own, startTimeMs: o.kubeletStartMs, cgroup: cgroups.sample(own) });
  }
  const fsImage = imageFs.status === 'fulfilled' ? imageFs.value[0] : undefined;

  const pods: RawPod[] = [];
  const ctrs: RawContainer[] = [];
  if (!failed && sandboxes.status === 'fulfilled' && containers.status === 'fulfilled' && criStats.status === 'fulfilled') {
    const bySandbox = new Map(liveSandboxes(sandboxes.value).map((s) => [s.id, s]));
    const podOf = new Map<string, RawPod>();
    const fsByDev = new Map<number, FsUsage | undefined>();
    const volumePaths = new Set<string>();
    for (const c of liveContainers(containers.value)) {
      const sb = bySandbox.get(c.sandboxId);
      if (!sb) continue;
      let pod = podOf.get(sb.id);
      if (!pod) {
        const cgroupPath = podCgroupCandidates(o.cgroupRoot ?? '/', sb.uid).find((p) => cgroups.exists(p));
        const sandboxPath = cgroupPath && `${cgroupPath}/${sb.id}`;
        const pausePid = sandboxPath ? cgroups.pids(sandboxPath)[0] : undefined;
        pod = {
          uid: sb.uid,
          name: sb.name,
          namespace: sb.namespace,
          sandboxId: sb.id,
          createdAtMs: sb.createdAtMs,
          cgroupPath,
          cgroup: cgroupPath ? cgroups.sample(cgroupPath) : undefined,
          sandboxCgroup: sandboxPath && cgroups.exists(sandboxPath) ? cgroups.sample(sandboxPath) : undefined,
          processCount: cgroupPath ? cgroups.processCount(cgroupPath) : undefined,
          network: pausePid ? host.netDev(pausePid) : undefined,
          volumes: o.volumes && podVolumes(o.volumes, host, sb.uid, fsByDev, volumePaths),
          etcHosts: host.dirUsage(`${o.rootDir}/pods/${sb.uid}/etc-hosts`),
        };
        podOf.set(sb.id, pod);
        pods.push(pod);
        await yieldToLoop();
      }
      const cgroupPath = pod.cgroupPath && `${pod.cgroupPath}/${c.id}`;
      ctrs.push({
        id: c.id,
        name: c.name,
        podUid: sb.uid,
        sandboxId: sb.id,
        image: c.image,
        createdAtMs: c.createdAtMs,
        cgroupPath,
        cgroup: cgroupPath && cgroups.exists(cgroupPath) ? cgroups.sample(cgroupPath) : undefined,
        cri: criStats.value.get(c.id),
        logs: host.dirUsage(`${o.podLogsDir}/${sb.namespace}_${sb.name}_${sb.uid}/${c.name}`),
      });
    }
    // Only when the runtime answered: otherwise every pod would seem gone and its walks lost.
    o.volumes?.retain(volumePaths);
  }

  return {
    timeMs,
    bootTimeMs: host.bootTimeMs(),
    machine: host.machine(),
    root,
    network: host.netDev(1) ?? [],
    system,
    rootFs: host.fs(o.rootDir),
    imageFs: fsImage && { ...fsImage, fs: host.fs(fsImage.mountpoint) },
    rlimit: host.rlimit(),
    pods,
    containers: ctrs,
    runtimeError: failed?.status === 'rejected' ? String((failed.reason as Error)?.message ?? failed.reason) : undefined,
  };
}
