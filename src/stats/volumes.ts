// The pods' volume directories and what they hold, for the Summary's per-pod `volume` and
// ephemeral storage. Walking a volume (du) costs one lstat per file, so, as upstream's
// volume stat calculator refreshes each pod's figures in the background rather than when
// asked, the walks are cached per directory and run one at a time behind the sampler: the
// sampler only reads the last figures (and so queues a walk when they are due) and never
// waits on a walk. A walk does a slice of lstats, then yields to the event loop.
import { lstatSync, opendirSync, readdirSync, type Dir, type Stats } from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { podVolumesDir } from '../podutil/pod-dirs.ts';
import { CONFIG_MAP, DOWNWARD_API, EMPTY_DIR, GIT_REPO, PROJECTED, SECRET, pluginDirName } from '../volumes/plugins/names.ts';
import type { DirUsage } from './sample.ts';

/**
 * How often a volume is walked again, at most. Upstream's summary refreshes volume stats every
 * volumeStatsAggPeriod (1 minute), and its eviction manager ranks on those. Here the eviction
 * manager (every 10 s) also enforces emptyDir sizeLimit and the pod's ephemeral-storage limit
 * from them, which 1 minute would leave a fast writer a minute past its limit; every sample
 * (10 s) would walk every volume of ~110 pods that often. 30 s halves upstream's staleness at
 * a third of the walks of every sample; the API-data volumes, a handful of small files, cost
 * next to nothing at that rate.
 */
export const VOLUME_REFRESH_MS = 30_000;

/**
 * Pure: how often a volume is measured again under volumeStatsAggPeriod, or undefined when it is
 * not measured at all: upstream's fsResourceAnalyzer.Start calculates no volume stats when the
 * period is 0 or negative (only a negative reaches it: 0 is defaulted to 1 minute). Otherwise half
 * the period, for the reason VOLUME_REFRESH_MS gives (upstream's default 1 minute: 30 s).
 */
export function volumeStatsRefreshMs(volumeStatsAggPeriodMs: number): number | undefined {
  return volumeStatsAggPeriodMs > 0 ? volumeStatsAggPeriodMs / 2 : undefined;
}

/** lstats between yields to the event loop: well under a millisecond of work. */
const SLICE = 256;

/** The plugins whose directories kubelet-ts sets up and upstream measures with du (hostPath has no directory, nor stats). */
export const DU_PLUGINS = new Set([EMPTY_DIR, CONFIG_MAP, SECRET, DOWNWARD_API, PROJECTED, GIT_REPO].map(pluginDirName));

const gone = (e: unknown) => {
  const code = (e as NodeJS.ErrnoException)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
};

/** lstat, undefined when the path went away meanwhile. */
function lstatOrGone(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch (e) {
    if (gone(e)) return undefined;
    throw e;
  }
}

export interface WalkOptions {
  /** lstats between pauses. */
  slice?: number;
  /** The pause (tests hook it to change the tree mid-walk). */
  pause?: () => Promise<unknown>;
}

/**
 * Upstream's fs.DiskUsage, without quotas: allocated blocks (×512) and inodes of everything
 * under `root`, itself included, not following symlinks nor descending into other
 * filesystems, a file with several links counted once. Entries removed while it walks are
 * skipped; undefined when `root` itself is gone. Other errors (EACCES) reject.
 */
export async function walkUsage(root: string, o: WalkOptions = {}): Promise<DirUsage | undefined> {
  const slice = o.slice ?? SLICE,
    pause = o.pause ?? (() => yieldToLoop());
  const top = lstatOrGone(root);
  if (!top) return undefined;
  const linked = new Set<number>();
  let usedBytes = 0,
    inodesUsed = 0,
    n = 0;
  const count = (st: Stats) => {
    if (!st.isDirectory() && st.nlink > 1) {
      if (linked.has(st.ino)) return;
      linked.add(st.ino);
    }
    usedBytes += st.blocks * 512;
    inodesUsed++;
  };
  count(top);
  if (!top.isDirectory()) return { usedBytes, inodesUsed };
  // Depth first over directory paths: one directory open at a time, across the pauses.
  const dirs = [root];
  while (dirs.length) {
    const dir = dirs.pop()!;
    let d: Dir;
    try {
      d = opendirSync(dir);
    } catch (e) {
      if (gone(e)) continue;
      throw e;
    }
    try {
      for (let e = d.readSync(); e; e = d.readSync()) {
        if (++n % slice === 0) await pause();
        const path = `${dir}/${e.name}`;
        const st = lstatOrGone(path);
        // Another filesystem mounted inside (upstream does not descend either).
        if (!st || st.dev !== top.dev) continue;
        count(st);
        if (st.isDirectory()) dirs.push(path);
      }
    } catch (e) {
      if (!gone(e)) throw e;
    } finally {
      d.closeSync();
    }
  }
  return { usedBytes, inodesUsed };
}

/** A volume directory of a pod, as found on disk. */
export interface VolumeDir {
  name: string;
  plugin: string;
  path: string;
  /** The device of the directory; a volume on its own mount has another than its plugin directory. */
  dev: number;
  ownFs: boolean;
}

/** What the collector asks about volumes (tests pass a fake). */
export interface VolumeStatsSource {
  /** The pod's volume directories; [] when it has none (or they are gone). */
  list(podUid: string): VolumeDir[];
  /** The last walk of a directory and when it began; queues a walk when none is done or due. */
  usage(path: string): (DirUsage & { timeMs: number }) | undefined;
  /** Forgets the directories not in `paths` (their pods are gone). */
  retain(paths: Set<string>): void;
}

export interface VolumeStatsOptions {
  rootDir: string;
  refreshMs?: number;
  now?: () => number;
  walk?: (path: string) => Promise<DirUsage | undefined>;
  /** A walk that failed (not for a directory that went away). */
  onError?: (path: string, err: unknown) => void;
  observe?: VolumeMeasureObserver;
}

/** How long a volume's measure took, by its source: du, statfs, block, or a CSI driver's name (kubelet_volume_metric_collection_duration_seconds). */
export type VolumeMeasureObserver = (source: string, seconds: number) => void;

/** measure, timed whichever way it ends, as upstream's CollectVolumeStatCalDuration defers its observation. */
export function timedMeasure<T>(source: string, measure: () => Promise<T>, observe: VolumeMeasureObserver | undefined): () => Promise<T> {
  if (!observe) return measure;
  return async () => {
    const t0 = performance.now();
    try {
      return await measure();
    } finally {
      observe(source, (performance.now() - t0) / 1000);
    }
  };
}

/** Figures measured in the background and cached by key (a volume's path). */
export interface BackgroundMeasures<T> {
  /** The last figures and when their measuring began; queues `measure` when none are there or they are due. */
  get(key: string, measure: () => Promise<T | undefined>): (T & { timeMs: number }) | undefined;
  /** Forgets the keys `keep` refuses (their pods are gone). */
  retain(keep: (key: string) => boolean): void;
}

interface Entry<T> {
  figures?: T & { timeMs: number };
  measure: () => Promise<T | undefined>;
  dueAtMs: number;
  queued: boolean;
}

/**
 * Measures run one at a time, in the order they fell due, so a hundred pods' volumes falling due
 * together cost one measurer's time, not a burst. A measure that finds its volume gone
 * (undefined) forgets it; one that fails leaves no figures until one succeeds, as upstream.
 */
export function backgroundMeasures<T extends object>(
  o: { refreshMs?: number; now?: () => number; onError?: (key: string, err: unknown) => void } = {},
): BackgroundMeasures<T> {
  const refreshMs = o.refreshMs ?? VOLUME_REFRESH_MS;
  const now = o.now ?? Date.now;
  const entries = new Map<string, Entry<T>>();
  const queue: string[] = [];
  let running = false;

  const drain = async () => {
    if (running) return;
    running = true;
    try {
      for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
        // Between measures too: many small volumes falling due together are not one long turn.
        await yieldToLoop();
        const entry = entries.get(key);
        if (!entry) continue; // forgotten while it waited
        const startedMs = now();
        try {
          const figures = await entry.measure();
          if (figures) entry.figures = { ...figures, timeMs: startedMs };
          else entries.delete(key);
        } catch (e) {
          entry.figures = undefined;
          o.onError?.(key, e);
        }
        entry.queued = false;
        entry.dueAtMs = now() + refreshMs;
      }
    } finally {
      running = false;
    }
  };

  return {
    get(key, measure) {
      let entry = entries.get(key);
      if (!entry) entries.set(key, (entry = { measure, dueAtMs: 0, queued: false }));
      entry.measure = measure;
      if (!entry.queued && now() >= entry.dueAtMs) {
        entry.queued = true;
        queue.push(key);
        void drain();
      }
      return entry.figures;
    },
    retain(keep) {
      for (const key of entries.keys()) if (!keep(key)) entries.delete(key);
    },
  };
}

/** The volume directories under ROOT/pods/UID/volumes and a cache of their walks (backgroundMeasures). */
export function volumeStatsSource(o: VolumeStatsOptions): VolumeStatsSource {
  const walk = o.walk ?? ((p: string) => walkUsage(p));
  const walks = backgroundMeasures<DirUsage>(o);
  return {
    list(podUid) {
      const base = podVolumesDir(o.rootDir, podUid);
      const out: VolumeDir[] = [];
      let plugins: string[];
      try {
        plugins = readdirSync(base);
      } catch {
        return out;
      }
      for (const plugin of plugins.sort()) {
        if (!DU_PLUGINS.has(plugin)) continue;
        try {
          const pluginDev = lstatSync(`${base}/${plugin}`).dev;
          for (const name of readdirSync(`${base}/${plugin}`).sort()) {
            const path = `${base}/${plugin}/${name}`;
            const st = lstatOrGone(path);
            if (st?.isDirectory()) out.push({ name, plugin, path, dev: st.dev, ownFs: st.dev !== pluginDev });
          }
        } catch {
          /* torn down meanwhile */
        }
      }
      return out;
    },
    usage: (path) =>
      walks.get(
        path,
        timedMeasure('du', () => walk(path), o.observe),
      ),
    retain: (paths) => walks.retain((p) => paths.has(p)),
  };
}
