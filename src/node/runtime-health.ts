// What the container runtime says about itself, for the Node's Ready condition,
// nodeInfo.containerRuntimeVersion and status.images.
import type { ContainerImage } from 'kubernetes-types/core/v1.js';
import type { ImageClient, ImageResponse } from '../cri/image-client.ts';
import type { RuntimeClient, RuntimeResponse } from '../cri/runtime-client.ts';
import type { Logger } from '../log/log.ts';
import { nodeImages, type RuntimeHealth } from './status.ts';

/** Pure: the health from CRI Status and Version answers. */
export function runtimeHealth(st: RuntimeResponse<'Status'>, v: RuntimeResponse<'Version'>): RuntimeHealth {
  const cond = (t: string) => st.status?.conditions.find((c) => c.type === t);
  const rt = cond('RuntimeReady'),
    net = cond('NetworkReady');
  const failing = !rt?.status ? rt : !net?.status ? net : undefined;
  return {
    runtimeReady: !!rt?.status,
    networkReady: !!net?.status,
    reason: failing?.reason,
    message: failing?.message,
    version: `${v.runtimeName}://${runtimeVersionString(v.runtimeVersion)}`,
    ...(st.features ? { features: { supplementalGroupsPolicy: st.features.supplementalGroupsPolicy === true } } : {}),
  };
}

const SEMVER_REST = /^(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;
/**
 * The runtime's version as upstream's VersionInfo setter prints it: newRuntimeVersion parses it
 * (utilversion.ParseSemantic, else ParseGeneric) and String() prints it without a leading "v" ("v2.2.9"
 * gives "2.2.9") and, for a generic one, without what follows its numbers ("1.6.20~ds1" gives "1.6.20");
 * "Unknown" when neither parses.
 */
export function runtimeVersionString(s: string): string {
  const m = /^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)$/s.exec(s);
  if (!m) return 'Unknown';
  const parts = m[1].split('.');
  if (parts.length === 3 && SEMVER_REST.test(m[2])) return m[1] + m[2];
  return parts.length >= 2 ? parts.map((p) => String(Number(p))).join('.') : 'Unknown';
}

/** How old the image list status.images is built from may be: upstream's imageCache, which ImageGCManager.Start refreshes every 30 s. */
export const IMAGE_LIST_MAX_AGE_MS = 30_000;

/**
 * The runtime's image list, asked again once the last answer is maxAgeMs old (upstream's imageCache,
 * read by the Images status setter through GetImageList), where each node status pass (10 s) asked
 * ListImages and decoded every image. A failed answer is not kept: the next call asks again.
 */
export function imageListCache(
  images: Pick<ImageClient, 'listImages'>,
  maxAgeMs = IMAGE_LIST_MAX_AGE_MS,
  now: () => number = () => performance.now(),
): () => Promise<ImageResponse<'ListImages'>> {
  let last: { at: number; list: Promise<ImageResponse<'ListImages'>> } | undefined;
  return () => {
    const t = now();
    if (!last || t - last.at >= maxAgeMs) {
      const entry = { at: t, list: images.listImages({}) };
      last = entry;
      entry.list.catch(() => {
        if (last === entry) last = undefined;
      });
    }
    return last.list;
  };
}

/**
 * Asks the runtime; a runtime that does not answer is "down" (health without runtimeReady). Its
 * Status answer goes to onStatus, as upstream's updateRuntimeUp sets its runtimeState from it.
 */
export async function probeRuntime(
  cri: RuntimeClient,
  listImages: () => Promise<ImageResponse<'ListImages'>>,
  maxImages: number,
  log: Logger,
  onStatus?: (st: RuntimeResponse<'Status'>, runtimeReady: boolean) => void,
): Promise<{ health: RuntimeHealth; images: ContainerImage[] }> {
  try {
    const [st, v, imgs] = await Promise.all([cri.status({}), cri.version({}), listImages()]);
    const list = imgs.images.map((i) => ({ repoTags: i.repoTags, repoDigests: i.repoDigests, size: Number(i.size) }));
    const health = runtimeHealth(st, v);
    onStatus?.(st, !!health.runtimeReady);
    return { health, images: nodeImages(list, maxImages) };
  } catch (e) {
    log.warn('Container runtime is down', { err: e });
    return { health: {}, images: [] };
  }
}
