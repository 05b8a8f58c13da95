// The node-level loops that act on pods from outside their workers: housekeeping and container
// GC, image GC, the eviction manager, container log rotation and graceful node shutdown. Each
// stops a pod only through the pod workers (kill) and tells the node status when its
// conditions change (poke).
import type { NodeCgroups } from '../resources/cgroup-manager.ts';
import type { ImageClient } from '../cri/image-client.ts';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { criLogRuntime, startLogRotation } from '../container-logs/rotation.ts';
import { nodeRef, type Recorder } from '../events/recorder.ts';
import { startEvictionManager } from '../eviction/eviction-manager.ts';
import { parseThresholds } from '../eviction/thresholds.ts';
import { startCollector } from '../gc/collector.ts';
import { criGCRuntime, criImageGC } from '../gc/cri.ts';
import { startImageGC } from '../gc/images.ts';
import { openPulledImages } from '../images/pulled/setup.ts';
import { featureEnabled } from '../features/gates.ts';
import { logger } from '../log/log.ts';
import {
  evictionMetrics,
  hookMetrics,
  housekeepingMetrics,
  imageGCMetrics,
  logRotationMetrics,
  nodeShutdownMetrics,
  pulledImagesMetrics,
} from './observers.ts';
import type { CurrentNode } from '../node/current-node.ts';
import { nodeShutdownManager } from '../nodeshutdown/manager.ts';
import { stateFile } from '../nodeshutdown/state-file.ts';
import type { KillPodOptions } from '../pods/lifecycle.ts';
import type { PodManager } from '../pods/pod-manager.ts';
import { parseQuantity } from '../resources/quantity.ts';
import type { RuntimeView } from '../runtime/cri-runtime.ts';
import type { Volumes } from './volumes.ts';
import type { UserNamespaces } from '../userns/manager.ts';
import type { Host } from './node.ts';
import type { KubeletOptions } from './options.ts';
import type { Stats } from './stats.ts';
import { IMAGES_SCOPE, KUBERUNTIME_SCOPE, type Tracing } from '../tracing/tracing.ts';

export type NodeLoops = Awaited<ReturnType<typeof nodeLoops>>;

export async function nodeLoops(
  o: KubeletOptions,
  d: {
    cri: RuntimeClient;
    images: ImageClient;
    view: RuntimeView;
    events: Recorder;
    host: Host;
    node: CurrentNode;
    pods: PodManager;
    /** What housekeeping releases of the volumes of a pod that is gone. */
    volumes: Pick<Volumes, 'releaseOrphan' | 'releaseUnmounted' | 'volumesCleaned'>;
    userns: UserNamespaces;
    cgroups: NodeCgroups;
    stats: Stats;
    /** Stops a pod through its worker with this final status; resolves once stopped. */
    kill: (uid: string, kill: KillPodOptions) => Promise<boolean>;
    /** The node status is computed again now (a condition changed). */
    poke: () => void;
    tracing: Tracing;
  },
) {
  const { config, rootDir, nodeName } = o;
  const node = nodeRef(nodeName);
  // Housekeeping (2 s) and container GC (1 min). The static pod dir is read once before
  // the file source returns, so the apiserver's first list is all the sources wait for.
  const gc = startCollector({
    runtime: criGCRuntime(d.cri, (maxAgeMs) => d.view.pods(maxAgeMs), config.podLogsDir, d.events, hookMetrics),
    known: () => d.pods.states(),
    sourcesReady: () => d.pods.sourcesReady(),
    rootDir,
    podLogsDir: config.podLogsDir,
    ...(o.containerGCPolicy ? { policy: o.containerGCPolicy } : {}),
    cgroups: d.cgroups,
    log: logger('gc'),
    tracer: d.tracing.tracer(KUBERUNTIME_SCOPE),
    observe: housekeepingMetrics,
    releaseVolumes: (uid) => d.volumes.releaseOrphan(uid),
    releaseUnmountedVolumes: (uid) => d.volumes.releaseUnmounted(uid),
    volumesCleaned: d.volumes.volumesCleaned,
    podDirRemoved: (uid) => d.userns.release(uid),
  });
  // KEP-2535's records of pulled images (src/images/pulled), pruned with the images GC removes.
  const pulledImages = featureEnabled(config.featureGates, 'KubeletEnsureSecretPulledImages')
    ? await openPulledImages(
        {
          rootDir,
          policy: config.imagePullCredentialsVerificationPolicy,
          allowlist: config.preloadedImagesVerificationAllowlist,
          observe: pulledImagesMetrics,
        },
        d.images,
      )
    : undefined;
  // Image GC between imageGCLowThresholdPercent and imageGCHighThresholdPercent, and of images unused for imageMaximumGCAge.
  const imageGC = startImageGC({
    ...(await criImageGC(d.cri, d.images, () => d.view.pods(), rootDir)),
    policy: {
      highThresholdPercent: config.imageGCHighThresholdPercent,
      lowThresholdPercent: config.imageGCLowThresholdPercent,
      minAgeMs: config.imageMinimumGCAgeMs,
      maxAgeMs: config.imageMaximumGCAgeMs,
    },
    log: logger('image_gc'),
    tracer: d.tracing.tracer(IMAGES_SCOPE),
    observe: imageGCMetrics,
    ...(pulledImages ? { afterCollect: (remaining: string[], started: number) => pulledImages.prune(remaining, started) } : {}),
  });
  // Node pressure: conditions, reclaim, evictions (src/eviction).
  const eviction = startEvictionManager({
    thresholds: parseThresholds(config),
    pressureTransitionPeriodMs: config.evictionPressureTransitionPeriodMs,
    localStorageCapacityIsolation: config.localStorageCapacityIsolation,
    maxPodGracePeriodSeconds: config.evictionMaxPodGracePeriod,
    summary: (fresh) => d.stats.summary(fresh),
    facts: () => ({
      memoryCapacityBytes: d.host.facts.memoryBytes,
      allocatableMemoryBytes: parseQuantity(d.node.allocatable()?.memory ?? ''),
    }),
    pods: () => d.pods.running(),
    reclaim: { containers: () => gc.collect(), images: () => imageGC.collect(true) },
    evict: (e) =>
      d.kill(e.pod.metadata!.uid!, {
        gracePeriodSeconds: e.gracePeriodSeconds,
        reason: e.reason,
        message: e.message,
        condition: e.condition,
      }),
    onConditions: d.poke,
    events: d.events,
    node,
    log: logger('eviction_manager'),
    observe: evictionMetrics,
  });
  // Container log rotation (containerLogMaxSize, validated with the config).
  const logRotation = startLogRotation({
    runtime: criLogRuntime(d.cri, (maxAgeMs) => d.view.pods(maxAgeMs), config.containerLogMonitorIntervalMs),
    podLogsDir: config.podLogsDir,
    log: logger('logs'),
    policy: { maxSize: parseQuantity(config.containerLogMaxSize)!, maxFiles: config.containerLogMaxFiles },
    workers: config.containerLogMaxWorkers,
    intervalMs: config.containerLogMonitorIntervalMs,
    observe: logRotationMetrics,
  });
  // Graceful node shutdown (src/nodeshutdown): off (nothing connected, nothing spawned) unless
  // shutdownGracePeriod or shutdownGracePeriodByPodPriority is set. Pods go through the
  // eviction path (kill); the Node goes NotReady at once. Started with the servers, as
  // upstream's initializeRuntimeDependentModules.
  const shutdown = nodeShutdownManager({
    config,
    // Loaded only when the manager is on: the D-Bus client costs memory on every node otherwise.
    connect: async () =>
      (await import('../nodeshutdown/logind.ts')).connectLogind({ onError: (msg, err) => logger('nodeshutdown').error(msg, { err }) }),
    state: stateFile(rootDir),
    pods: () => d.pods.running(),
    killPod: (pod, kill) => d.kill(pod.metadata!.uid!, kill),
    syncNodeStatus: d.poke,
    events: d.events,
    node,
    log: logger('nodeshutdown'),
    observe: nodeShutdownMetrics,
  });
  return {
    eviction,
    shutdown,
    pulledImages,
    stop() {
      for (const loop of [gc, imageGC, eviction, shutdown, logRotation]) loop.stop();
    },
  };
}
