// The CRI calls garbage collection makes, behind the narrow interface the collector
// takes. Something already gone counts as done: the pod workers may remove it first.
import { resolve } from 'node:path';
import { status } from '@grpc/grpc-js';
import { CriError } from '../cri/error.ts';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import type { ImageClient } from '../cri/image-client.ts';
import { filesystemStats } from '../node/host.ts';
import { type ImageGCDeps, imagesInUse } from './images.ts';
import type { PodRuntimeStatus } from '../container/types.ts';
import { removeContainerLogs } from './disk.ts';
import { legacyLogSymlink, removeLogSymlink } from '../container-logs/symlink.ts';
import { labels } from '../container/types.ts';
import { type HookDeps, type HookObserver, runHook } from '../runtime/hooks.ts';
import { restoreSpecs } from '../runtime/restore-specs.ts';
import { podRef, type Recorder } from '../events/recorder.ts';

export interface GCRuntime {
  /** Every pod the runtime knows, freshly listed, or from a list begun at most maxAgeMs ago (RuntimeView.pods). */
  pods(maxAgeMs?: number): Promise<ReadonlyMap<string, PodRuntimeStatus>>;
  /**
   * orphan: the container's pod is gone; as upstream's killContainer for it, a Killing event
   * on the pod its labels name, then its preStop hook as its annotations keep it. Resolves with
   * why that hook failed, if it did.
   */
  stopContainer(id: string, timeoutSeconds: number, orphan?: { podIP?: string }): Promise<string | undefined>;
  /** Removes the container and its log files. */
  removeContainer(id: string): Promise<void>;
  stopSandbox(id: string): Promise<void>;
  removeSandbox(id: string): Promise<void>;
}

const notFound = (e: unknown) => e instanceof CriError && e.code === status.NOT_FOUND;
const unlessGone = (e: unknown) => {
  if (!notFound(e)) throw e;
};

export function criGCRuntime(
  cri: RuntimeClient,
  pods: (maxAgeMs?: number) => Promise<ReadonlyMap<string, PodRuntimeStatus>>,
  podLogsDir: string,
  events: Recorder,
  hooks?: HookObserver,
): GCRuntime {
  const logsRoot = resolve(podLogsDir) + '/';
  return {
    pods,
    async stopContainer(id, timeout, orphan) {
      const failed = orphan ? await killOrphan({ cri, events, observe: hooks }, id, orphan.podIP) : undefined;
      await cri.stopContainer({ containerId: id, timeout }).catch(unlessGone);
      return failed;
    },
    async removeContainer(id) {
      // Its log lives on after CRI forgets it (upstream's removeContainerLog): ask for the path first.
      const st = await cri.containerStatus({ containerId: id }).then(
        (r) => r.status,
        (e) => {
          unlessGone(e);
          return undefined;
        },
      );
      const logPath = st?.logPath ?? '';
      await cri.removeContainer({ containerId: id }).catch(unlessGone);
      if (logPath && resolve(logPath).startsWith(logsRoot)) removeContainerLogs(resolve(logPath));
      // And its /var/log/containers symlink, named from the container's labels (upstream's removeContainerLog).
      const l = st?.labels ?? {};
      if (l[labels.podName] && l[labels.podNamespace] && l[labels.containerName])
        removeLogSymlink(legacyLogSymlink(l[labels.podName], l[labels.podNamespace], l[labels.containerName], id));
    },
    async stopSandbox(id) {
      await cri.stopPodSandbox({ podSandboxId: id }).catch(unlessGone);
    },
    async removeSandbox(id) {
      await cri.removePodSandbox({ podSandboxId: id }).catch(unlessGone);
    },
  };
}

/** Upstream's preStop hooks of orphans get the kill's 1 s grace period override (killContainer). */
const ORPHAN_PRESTOP_SECONDS = 1;

/** Upstream's ImplicitContainerPrefix: the fieldPath of a container its pod does not list. */
const IMPLICIT_CONTAINER_PREFIX = 'implicitly required container ';

/**
 * Upstream's killContainer for a container whose pod is gone (restoreSpecsFromContainerLabels):
 * the Killing event, then its preStop hook, read back from its annotations, within the grace
 * period. A hook that fails does not keep the container from stopping, as upstream. The restored
 * pod lists no containers, so the events name the container as GenerateContainerRef does then.
 */
async function killOrphan(d: HookDeps & { cri: RuntimeClient }, id: string, podIP: string | undefined): Promise<string | undefined> {
  const st = await d.cri.containerStatus({ containerId: id }).then(
    (r) => r.status,
    (e) => {
      unlessGone(e);
      return undefined;
    },
  );
  if (!st) return undefined;
  const { pod, container } = restoreSpecs(st.labels ?? {}, st.annotations ?? {});
  const ref = podRef(pod, `${IMPLICIT_CONTAINER_PREFIX}${container.name}`);
  d.events.event(ref, 'Normal', 'Killing', `Stopping container ${container.name}`);
  const preStop = container.lifecycle?.preStop;
  const failed = preStop ? await runHook(d, { pod, container, containerId: id, podIP }, preStop, ORPHAN_PRESTOP_SECONDS) : undefined;
  if (failed) d.events.event(ref, 'Warning', 'FailedPreStopHook', 'PreStopHook failed');
  return failed;
}

/**
 * What image GC asks the runtime, over CRI: its images (the sandbox image, which
 * containerd's CRI config names in its verbose Status, counts as pinned), the images its
 * containers name, the image filesystem's usage, and removal.
 */
export async function criImageGC(
  cri: RuntimeClient,
  images: ImageClient,
  pods: () => Promise<ReadonlyMap<string, PodRuntimeStatus>>,
  fallbackFsPath: string,
): Promise<Pick<ImageGCDeps, 'images' | 'inUse' | 'fs' | 'remove'>> {
  const info = (await cri.status({ verbose: true })).info as Record<string, string> | undefined;
  let sandboxImage: string | undefined;
  try {
    sandboxImage = (JSON.parse(info?.config ?? '{}') as { sandboxImage?: string }).sandboxImage;
  } catch {
    /* not containerd: nothing pinned by name */
  }
  const fsPath = (await images.imageFsInfo({})).imageFilesystems[0]?.fsId?.mountpoint || fallbackFsPath;
  return {
    images: async () =>
      (await images.listImages({})).images.map((i) => ({
        id: i.id,
        sizeBytes: Number(i.size),
        tags: i.repoTags,
        refs: [...i.repoTags, ...i.repoDigests],
        pinned: i.pinned || (!!sandboxImage && i.repoTags.includes(sandboxImage)),
      })),
    inUse: async () => imagesInUse((await pods()).values()),
    fs: () => {
      try {
        return filesystemStats(fsPath);
      } catch {
        return undefined;
      }
    },
    remove: async (id) => {
      await images.removeImage({ image: { image: id } }).catch(unlessGone);
    },
  };
}
