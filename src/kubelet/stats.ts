// Stats (upstream's stats provider and cAdvisor's part of it): one sample cache for the kubelet
// API, the eviction manager and the volume metrics, since the runtime's stats calls are slow.
// The volumes' walks are cached across samples, so one source lives as long as the kubelet.
import { readFileSync } from 'node:fs';
import { featureEnabled } from '../features/gates.ts';
import type { NodeCgroups } from '../resources/cgroup-manager.ts';
import type { ImageClient } from '../cri/image-client.ts';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import type { RuntimeView } from '../runtime/cri-runtime.ts';
import type { CsiDrivers } from '../csi/drivers.ts';
import type { Recorder } from '../events/recorder.ts';
import { logger } from '../log/log.ts';
import { registerPodStats } from '../metrics/metrics.ts';
import { statsSampleMetrics, volumeMeasureMetrics } from './observers.ts';
import { sampleCache } from '../stats/cache.ts';
import { cgroupReader } from '../stats/cgroup.ts';
import { appMetrics, hostAppMetricsIo } from '../stats/app-metrics/manager.ts';
import { claimStatsSource } from '../stats/claim-volumes.ts';
import { collectSample } from '../stats/collector.ts';
import type { MachineIdentity } from '../stats/sample.ts';
import type { CPUTopology } from '../cpumanager/topology.ts';
import type { HostFacts } from '../node/host.ts';
import { partitionsOf } from '../stats/filesystems.ts';
import { hostStats } from '../stats/host.ts';
import { criStatsSource } from '../stats/runtime-source.ts';
import { buildSummary } from '../stats/summary.ts';
import { selfContainer, usageLog } from '../stats/usage-log.ts';
import { volumeStatsRefreshMs, volumeStatsSource } from '../stats/volumes.ts';
import type { PersistentVolumes } from '../volumes/persistent.ts';
import type { VolumeManager } from '../volumes/volume-manager.ts';
import type { KubeletOptions } from './options.ts';

export type Stats = ReturnType<typeof statsProvider>;

/** cadvisor's MachineInfo fields that stay: the Node's identity (src/node/host.ts) and the CPU topology. */
export const machineIdentity = (f: HostFacts, t: CPUTopology): MachineIdentity => ({
  machineID: f.machineID,
  systemUUID: f.systemUUID,
  bootID: f.bootID,
  kernelVersion: f.kernelVersion,
  osVersion: f.osImage,
  physicalCores: t.numCores,
  sockets: t.numSockets,
});

export function statsProvider(
  o: KubeletOptions,
  d: {
    cri: RuntimeClient;
    images: ImageClient;
    view: RuntimeView;
    cgroups: NodeCgroups;
    persistent: PersistentVolumes;
    /** The pods' inline volumes measured by statfs (flexVolumes whose drivers supportsMetrics). */
    volumes: Pick<VolumeManager, 'statfsVolumes'>;
    csiDrivers: CsiDrivers;
    events: Recorder;
    /** cadvisor's machine_* labels and cadvisor_version_info (read once at start). */
    machine: MachineIdentity;
  },
) {
  const { config, rootDir, nodeName } = o;
  const log = logger('stats');
  const runtimeStats = criStatsSource((maxAgeMs) => d.view.listed(maxAgeMs), d.cri, d.images);
  const kubeletStartMs = Date.now() - process.uptime() * 1000;
  // volumeStatsAggPeriod: how often volumes are measured; negative, not at all (no volume stats).
  const refreshMs = volumeStatsRefreshMs(config.volumeStatsAggPeriodMs);
  if (refreshMs === undefined) log.info('Volume stats not calculated (volumeStatsAggPeriod is negative)');
  const volumes =
    refreshMs === undefined
      ? undefined
      : volumeStatsSource({
          rootDir,
          refreshMs,
          onError: (path, err) => log.v(4, 'Failed to calculate volume metrics', { path, err }),
          observe: volumeMeasureMetrics,
        });
  // Claim volumes as their plugin measures them (src/stats/claim-volumes.ts).
  const claims =
    refreshMs === undefined
      ? undefined
      : claimStatsSource({
          refreshMs,
          mounts: (uid) => d.persistent.claimMounts(uid),
          statfsVolumes: (uid) => d.volumes.statfsVolumes(uid),
          csi: (driver) => d.csiDrivers.client(driver),
          volumeHealth: featureEnabled(config.featureGates, 'CSIVolumeHealth'),
          events: d.events,
          onError: (volume, err) => log.v(4, 'Failed to calculate volume metrics', { volume, err }),
          observe: volumeMeasureMetrics,
        });
  // cAdvisor's NewFsInfo: the filesystems are those mounted when the kubelet starts.
  const filesystems = { partitions: partitionsOf(readFileSync('/proc/self/mountinfo', 'utf8')), hints: o.containerHints ?? new Map() };
  // cAdvisor's application metrics (AppMetrics is in the kubelet's metric set).
  const app = appMetrics(o.appMetricsLimit ?? 100, hostAppMetricsIo, log);
  const usage = o.housekeeping?.logUsage ? usageLog(selfContainer(cgroupReader())) : undefined;
  const cache = sampleCache(
    async () => {
      const sample = await collectSample(runtimeStats, hostStats(), {
        rootDir,
        podLogsDir: config.podLogsDir,
        cgroups: d.cgroups.layout,
        kubeletStartMs,
        systemCgroups: o.systemCgroups,
        volumes,
        claims,
        filesystems,
        appMetrics: app,
        machine: d.machine,
      });
      const line = usage?.(sample);
      if (line) log.info(line);
      return sample;
    },
    { log, observe: statsSampleMetrics, ...(o.housekeeping ? { intervalMs: o.housekeeping.intervalMs } : {}) },
  );
  /** The Summary API's document from the cached sample, or from one taken now when fresh. */
  const summary = async (fresh = false) => {
    const s = await (fresh ? cache.fresh() : cache.get());
    return buildSummary(nodeName, s.cur, s.prev);
  };
  // kubelet_volume_stats_* and the containers' log sizes: the Summary's pods.
  registerPodStats(async () => (await summary()).pods);
  return { cache, runtimeStats, summary, stop: () => cache.stop() };
}
