// The stats of the pods' claim volumes (persistentVolumeClaim and generic ephemeral), as
// upstream's volume stat calculator has each one's plugin measure them: a local PV by statfs of
// its mount (MetricsStatFS) or the size of its device (MetricsBlock), a CSI one by the driver's
// NodeGetVolumeStats when it has GET_VOLUME_STATS (metricsCsi), a hostPath one not at all
// (MetricsNil), a flexVolume by statfs when its driver supportsMetrics (else not at all); and
// likewise the pods' inline flexVolumes whose drivers supportsMetrics, which have no claim.
// Measured in the background like the walks (volumes.ts), in a queue of their own:
// a slow driver holds up its volumes' figures, not the walks that the eviction manager enforces
// limits from.
import { readFile, realpath, statfs } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { CsiClient } from '../csi/client.ts';
import type { NodeGetVolumeStatsResponse__Output } from '../csi/generated/csi/v1/NodeGetVolumeStatsResponse.ts';
import { podRef, type Recorder } from '../events/recorder.ts';
import type { ClaimMount } from '../volumes/claims.ts';
import { CSI, FLEX_VOLUME, LOCAL_VOLUME, pluginDirName } from '../volumes/plugins/names.ts';
import { fsUsageOf } from './host.ts';
import type { RawVolume, VolumeMetrics } from './sample.ts';
import { backgroundMeasures, timedMeasure, type VolumeMeasureObserver } from './volumes.ts';

/**
 * The deadline of a stats call. Upstream's csiTimeout (2 min) holds up one pod's calculator; here
 * a driver that does not answer would hold up every claim volume's figures that long.
 */
const CSI_STATS_TIMEOUT_MS = 15_000;

export type MetricsProvider = 'statfs' | 'block' | 'csi';

/** Pure: the metrics provider upstream's plugin gives a claim volume; undefined for none (hostPath). A CSI raw block one is the driver's too (csiBlockMapper's metrics). */
export function metricsProvider(m: Pick<ClaimMount, 'kind' | 'block' | 'statfs'>): MetricsProvider | undefined {
  if (m.kind === 'local') return m.block ? 'block' : 'statfs';
  if (m.kind === 'csi') return 'csi';
  if (m.kind === 'flexVolume' && m.statfs) return 'statfs';
  return undefined;
}

/**
 * Pure: upstream's csiDriverClient.NodeGetVolumeStats: zeros but for what the usage entries say
 * (BYTES and INODES: available, total, used; another unit is skipped), the volume condition when
 * it is asked for; no usage is an error unless the condition is asked for.
 */
export function csiVolumeMetrics(r: NodeGetVolumeStatsResponse__Output, withCondition: boolean): VolumeMetrics {
  if (!withCondition && !r.usage.length) throw new Error('failed to get usage from response. usage is nil');
  const m: VolumeMetrics = { capacityBytes: 0, availableBytes: 0, usedBytes: 0, inodes: 0, inodesFree: 0, inodesUsed: 0 };
  for (const u of r.usage) {
    if (u.unit === 'BYTES') {
      m.availableBytes = Number(u.available);
      m.capacityBytes = Number(u.total);
      m.usedBytes = Number(u.used);
    } else if (u.unit === 'INODES') {
      m.inodesFree = Number(u.available);
      m.inodes = Number(u.total);
      m.inodesUsed = Number(u.used);
    }
  }
  if (withCondition) m.abnormal = r.volumeCondition?.abnormal ?? false;
  return m;
}

/** upstream's metricsStatFS: fs.Info of the mount. */
async function statfsMetrics(path: string): Promise<VolumeMetrics> {
  const fs = fsUsageOf(await statfs(path));
  return { ...fs, inodesUsed: fs.inodes - fs.inodesFree };
}

/** upstream's metricsBlock: only the device's size is known (its sectors in sysfs; upstream seeks to its end). */
async function blockMetrics(device: string): Promise<VolumeMetrics> {
  const sectors = Number(await readFile(`/sys/class/block/${basename(await realpath(device))}/size`, 'utf8'));
  return { capacityBytes: sectors * 512, availableBytes: 0, usedBytes: 0, inodes: 0, inodesFree: 0, inodesUsed: 0 };
}

/** A driver without GET_VOLUME_STATS: no figures, and nothing to log (upstream's IsNotSupported). */
class NotSupported extends Error {}

export interface ClaimStatsSource {
  /** The pod's claim volumes that have metrics, each with its last figures; queues measuring those that are due. */
  volumes(podUid: string): RawVolume[];
  /** Forgets the figures of the pods not in `podUids` (gone). */
  retain(podUids: Set<string>): void;
}

export interface ClaimStatsOptions {
  /** The pod's claim volumes as set up (PersistentVolumes.claimMounts). */
  mounts: (podUid: string) => ClaimMount[];
  /** The pod's inline volumes measured by statfs (VolumeManager.statfsVolumes: a flexVolume whose driver supportsMetrics). */
  statfsVolumes?: (podUid: string) => { name: string; path: string }[];
  /** A registered driver's client; throws when it is not registered (CsiDrivers.client). */
  csi: (driver: string) => Pick<CsiClient, 'nodeGetCapabilities' | 'nodeGetVolumeStats'>;
  /** featureGates CSIVolumeHealth (alpha, off by default): the volume condition of drivers with VOLUME_CONDITION. */
  volumeHealth?: boolean;
  /** For upstream's VolumeConditionAbnormal events. */
  events?: Pick<Recorder, 'event'>;
  refreshMs?: number;
  now?: () => number;
  /** A measure that failed; the key is POD_UID/VOLUME. */
  onError?: (key: string, err: unknown) => void;
  observe?: VolumeMeasureObserver;
}

export function claimStatsSource(o: ClaimStatsOptions): ClaimStatsSource {
  const measures = backgroundMeasures<VolumeMetrics>({
    refreshMs: o.refreshMs,
    now: o.now,
    onError: (key, e) => {
      if (!(e instanceof NotSupported)) o.onError?.(key, e);
    },
  });

  /** upstream's metricsCsi.GetMetrics, and calcAndStoreStats' event for an abnormal volume. */
  const csiMetrics = async (m: ClaimMount): Promise<VolumeMetrics> => {
    const client = o.csi(m.csi!.driver);
    const caps = await client.nodeGetCapabilities();
    if (!caps.has('GET_VOLUME_STATS')) throw new NotSupported(`driver ${m.csi!.driver} does not support GET_VOLUME_STATS`);
    const r = await client.nodeGetVolumeStats({ volumeId: m.csi!.volumeHandle, volumePath: m.path }, CSI_STATS_TIMEOUT_MS);
    const metrics = csiVolumeMetrics(r, !!o.volumeHealth && caps.has('VOLUME_CONDITION'));
    if (metrics.abnormal)
      o.events?.event(
        podRef({ metadata: m.pod }),
        'Warning',
        'VolumeConditionAbnormal',
        `Volume ${m.volume}: ${r.volumeCondition?.message ?? ''}`,
      );
    return metrics;
  };
  // upstream's metric_source labels: statfs, block, and a CSI driver by its name.
  const measure = {
    statfs: (m: ClaimMount) => timedMeasure('statfs', () => statfsMetrics(m.path), o.observe),
    block: (m: ClaimMount) => timedMeasure('block', () => blockMetrics(m.path), o.observe),
    csi: (m: ClaimMount) => timedMeasure(m.csi!.driver, () => csiMetrics(m), o.observe),
  };

  return {
    volumes(podUid) {
      // upstream's MetricsStatFS of an inline volume: no claim; its plugin directory is its driver's.
      const inline = (o.statfsVolumes?.(podUid) ?? []).map((v) => ({
        name: v.name,
        plugin: basename(dirname(v.path)),
        ownFs: true,
        metrics: measures.get(
          `${podUid}/${v.name}`,
          timedMeasure('statfs', () => statfsMetrics(v.path), o.observe),
        ),
      }));
      return [...inline, ...claimVolumes(podUid)];
    },
    retain(podUids) {
      measures.retain((key) => podUids.has(key.slice(0, key.indexOf('/'))));
    },
  };

  function claimVolumes(podUid: string): RawVolume[] {
    return o.mounts(podUid).flatMap((m) => {
      const provider = metricsProvider(m);
      if (!provider) return [];
      const metrics = measures.get(`${podUid}/${m.volume}`, measure[provider](m));
      // upstream's plugin directory names: not a local ephemeral volume (isLocalEphemeral).
      const plugin = pluginDirName(m.kind === 'csi' ? CSI : m.kind === 'flexVolume' ? FLEX_VOLUME : LOCAL_VOLUME);
      return [{ name: m.volume, plugin, ownFs: true, metrics, pvc: m.pvc }];
    });
  }
}
