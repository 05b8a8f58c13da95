// What the container runtime says about itself, for the Node's Ready condition,
// nodeInfo.containerRuntimeVersion and status.images.
import type { ContainerImage } from 'kubernetes-types/core/v1.js';
import type { ImageClient } from '../cri/image-client.ts';
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
    version: `${v.runtimeName}://${v.runtimeVersion}`,
  };
}

/**
 * Asks the runtime; a runtime that does not answer is "down" (health without runtimeReady). A ready
 * runtime's handlers go to onHandlers, as upstream's updateRuntimeUp calls runtimeState.setRuntimeHandlers.
 */
export async function probeRuntime(
  cri: RuntimeClient,
  images: ImageClient,
  maxImages: number,
  log: Logger,
  onHandlers?: (handlers: RuntimeResponse<'Status'>['runtimeHandlers']) => void,
): Promise<{ health: RuntimeHealth; images: ContainerImage[] }> {
  try {
    const [st, v, imgs] = await Promise.all([cri.status({}), cri.version({}), images.listImages({})]);
    const list = imgs.images.map((i) => ({ repoTags: i.repoTags, repoDigests: i.repoDigests, size: Number(i.size) }));
    const health = runtimeHealth(st, v);
    if (health.runtimeReady) onHandlers?.(st.runtimeHandlers);
    return { health, images: nodeImages(list, maxImages) };
  } catch (e) {
    log.warn('Container runtime is down', { err: e });
    return { health: {}, images: [] };
  }
}
