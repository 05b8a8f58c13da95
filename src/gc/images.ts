// Image garbage collection, as upstream's realImageGCManager: every 5 minutes, when the
// image filesystem is fuller than imageGCHighThresholdPercent, remove unused images,
// least recently used first, until it is back under imageGCLowThresholdPercent. Images
// that a container uses (running or not), pinned ones (the sandbox image) and those
// first seen less than imageMinimumGCAge ago stay. Before that, with imageMaximumGCAge set, unused
// images not used for longer than it go whatever the disk usage (upstream's freeOldImages). The
// eviction manager may also ask for every unused image to go (collect(true)) when the disk runs out.
import { NO_TRACER, type Tracer } from '../tracing/tracer.ts';
import type { Logger } from '../log/log.ts';
import type { PodRuntimeStatus } from '../container/types.ts';
import { jittered } from '../backoff/backoff.ts';

/** refs: every name the runtime may report a container's image by (ID, tags, repo digests). */
export interface ImageRecord {
  id: string;
  sizeBytes: number;
  pinned: boolean;
  tags: string[];
  refs: string[];
}

/**
 * Pure: the images the runtime's containers (of any state) use: their own, by name and by ID, and
 * those they mount as image volumes (upstream's detectImages with handleImageVolumes).
 */
export function imagesInUse(pods: Iterable<PodRuntimeStatus>): Set<string> {
  return new Set([...pods].flatMap((p) => p.containers.flatMap((c) => [c.image, c.imageRef, ...(c.imageMounts ?? [])])));
}

/** Whether a container uses the image: containers name it by tag, digest or ID. */
const used = (i: ImageRecord, inUse: Set<string>) => inUse.has(i.id) || i.refs.some((r) => inUse.has(r));
export interface ImageGCPolicy {
  highThresholdPercent: number;
  lowThresholdPercent: number;
  minAgeMs: number;
  /** imageMaximumGCAge: unused for longer than this, an image goes; 0 turns it off. */
  maxAgeMs: number;
}
/** When the kubelet first saw each image and last saw it in use (upstream's imageRecords). */
export type ImageHistory = Map<string, { firstSeenMs: number; lastUsedMs: number }>;

/** Pure: the history after this look at the images (gone ones are forgotten). */
export function updateHistory(prev: ImageHistory, images: ImageRecord[], inUse: Set<string>, nowMs: number): ImageHistory {
  return new Map(
    images.map((i) => {
      const old = prev.get(i.id);
      return [i.id, { firstSeenMs: old?.firstSeenMs ?? nowMs, lastUsedMs: used(i, inUse) ? nowMs : (old?.lastUsedMs ?? 0) }];
    }),
  );
}

/** Pure: bytes to free so usage falls to the low threshold; 0 while under the high one. */
export function bytesToFree(capacityBytes: number, availableBytes: number, p: ImageGCPolicy): number {
  if (capacityBytes <= 0) return 0;
  const usagePercent = 100 - Math.floor((availableBytes * 100) / capacityBytes);
  if (usagePercent < p.highThresholdPercent) return 0;
  return Math.max(0, Math.floor((capacityBytes * (100 - p.lowThresholdPercent)) / 100) - availableBytes);
}

/** Pure: the images to remove, least recently used (then oldest) first, until `want` bytes are freed. */
export function planImageGC(
  images: ImageRecord[],
  inUse: Set<string>,
  history: ImageHistory,
  nowMs: number,
  minAgeMs: number,
  want: number,
): ImageRecord[] {
  const candidates = images
    .filter((i) => !i.pinned && !used(i, inUse) && nowMs - (history.get(i.id)?.firstSeenMs ?? nowMs) >= minAgeMs)
    .sort(
      (a, b) =>
        history.get(a.id)!.lastUsedMs - history.get(b.id)!.lastUsedMs || history.get(a.id)!.firstSeenMs - history.get(b.id)!.firstSeenMs,
    );
  const out: ImageRecord[] = [];
  let freed = 0;
  for (const i of candidates) {
    if (freed >= want) break;
    out.push(i);
    freed += i.sizeBytes;
  }
  return out;
}

/**
 * Pure: the images unused for longer than maxAgeMs, as upstream's freeOldImages: none when
 * maxAgeMs is 0 or until the kubelet's image GC has run for maxAgeMs (startedMs, its beganGC), so
 * that images are not collected before their use could be seen. In-use and pinned images stay; a
 * never-used image's last use is the epoch (upstream's zero lastUsed), so it goes too. The
 * minimum age does not apply here, as upstream's.
 */
export function planOldImages(
  images: ImageRecord[],
  inUse: Set<string>,
  history: ImageHistory,
  nowMs: number,
  startedMs: number,
  maxAgeMs: number,
): ImageRecord[] {
  if (maxAgeMs === 0 || nowMs - startedMs <= maxAgeMs) return [];
  return images.filter((i) => !i.pinned && !used(i, inUse) && nowMs - (history.get(i.id)?.lastUsedMs ?? 0) > maxAgeMs);
}

/**
 * Pure: upstream's StartGarbageCollection stubs the image GC loop when imageGCHighThresholdPercent
 * is 100 and imageMaximumGCAge 0: no periodic pass at all, so not even a full disk sets it off.
 * The eviction manager's reclaim of unused images (collect(true)) still works.
 */
export const imageGCLoopDisabled = (p: ImageGCPolicy): boolean => p.highThresholdPercent === 100 && p.maxAgeMs === 0;

export interface ImageGCDeps {
  policy: ImageGCPolicy;
  images(): Promise<ImageRecord[]>;
  /** The images containers (of any state) name: their image and imageRef. */
  inUse(): Promise<Set<string>>;
  /** The image filesystem's size and free space. */
  fs(): { capacityBytes: number; availableBytes: number } | undefined;
  remove(id: string): Promise<void>;
  log: Logger;
  /** reason: age (imageMaximumGCAge) or space (the thresholds), as kubelet_image_garbage_collected_total's label. */
  observe: { removed(n: number, reason: 'age' | 'space'): void; error(): void };
  /**
   * Upstream's PostImageGCHook, after a collection that removed images: the IDs of the images
   * left and when the collection began (the pulled-image records of the others go).
   */
  afterCollect?(remainingIds: string[], startedMs: number): void;
  intervalMs?: number;
  now?: () => number;
  /** KubeletConfiguration `tracing`: a span per periodic pass. */
  tracer?: Tracer;
}

export function startImageGC(d: ImageGCDeps) {
  let history: ImageHistory = new Map();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const now = d.now ?? Date.now;
  // Upstream's beganGC: when the image GC loop started, for the maximum age.
  const startedMs = now();

  /** Removes the images, logging each; the IDs removed and the bytes freed. */
  async function removeAll(plan: ImageRecord[], why: string): Promise<{ removed: Set<string>; freed: number; failed: number }> {
    const removed = new Set<string>();
    let freed = 0;
    let failed = 0;
    for (const i of plan) {
      try {
        await d.remove(i.id);
        removed.add(i.id);
        freed += i.sizeBytes;
        d.log.info(why, { image: i.tags[0] ?? i.id, imageID: i.id, size: i.sizeBytes });
      } catch (e) {
        failed++;
        d.log.warn('Failed to remove image', { imageID: i.id, err: e });
      }
    }
    return { removed, freed, failed };
  }

  /** all: remove every unused image regardless of thresholds and age (the eviction manager's reclaim). */
  async function collect(all = false): Promise<number> {
    const [found, inUse] = await Promise.all([d.images(), d.inUse()]);
    const t = now();
    history = updateHistory(history, found, inUse, t);
    let images = found;
    if (!all) {
      // Upstream's GarbageCollect frees the old images first, then looks at the disk; a failed
      // removal fails the pass (freeOldImages' error).
      const old = await removeAll(
        planOldImages(images, inUse, history, t, startedMs, d.policy.maxAgeMs),
        'Removed image unused for longer than imageMaximumGCAge',
      );
      if (old.removed.size) d.observe.removed(old.removed.size, 'age');
      if (old.failed) throw new Error(`wanted to free images older than ${d.policy.maxAgeMs} ms, ${old.failed} could not be removed`);
      images = images.filter((i) => !old.removed.has(i.id));
    }
    const fs = d.fs();
    const want = all ? Infinity : fs ? bytesToFree(fs.capacityBytes, fs.availableBytes, d.policy) : 0;
    if (want === 0) return 0;
    const plan = planImageGC(images, inUse, history, t, all ? 0 : d.policy.minAgeMs, want);
    const { removed, freed } = await removeAll(plan, 'Removed unused image');
    d.observe.removed(removed.size, 'space');
    // Upstream's runPostGCHooks, after freeSpace and DeleteUnusedImages.
    d.afterCollect?.(
      images.filter((i) => !removed.has(i.id)).map((i) => i.id),
      t,
    );
    if (!all && freed < want) d.log.warn('Image garbage collection freed less than wanted', { wantBytes: want, freedBytes: freed });
    return freed;
  }

  const loop = async () => {
    if (stopped) return;
    try {
      // image_gc_manager.go GarbageCollect's span.
      await (d.tracer ?? NO_TRACER).inSpan('Images/GarbageCollect', {}, () => collect());
    } catch (e) {
      d.observe.error();
      d.log.error('Image garbage collection failed', { err: e });
    }
    if (!stopped) {
      timer = setTimeout(loop, jittered(d.intervalMs ?? 300_000, 0.1));
      timer.unref();
    }
  };
  // Images are first noted at start (their age counts from then, as upstream's detectImages);
  // the first pass comes some seconds after that noting ends, not after the start: a slow
  // first listing (a loaded node) would otherwise let the pass note the images itself, find
  // them all younger than imageMinimumGCAge and leave them for 5 min. The rest every 5 min.
  const detected = Promise.all([d.images(), d.inUse()]).then(
    ([images, inUse]) => {
      history = updateHistory(history, images, inUse, now());
    },
    () => {},
  );
  if (imageGCLoopDisabled(d.policy)) d.log.info('ImageGCHighThresholdPercent is set 100 and ImageMaximumGCAge is 0, Disable image GC');
  else
    void detected.then(() => {
      if (stopped) return;
      timer = setTimeout(loop, jittered(10_000, 0.2));
      timer.unref();
    });
  return {
    collect: async (all = false) => {
      await collect(all);
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
