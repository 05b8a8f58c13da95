import { featureEnabled } from '../features/gates.ts';
import { withPodDirs } from '../pods/pod-dirs.ts';
import { logger } from '../log/log.ts';
import { registerPodGauges, registerResizeGauges } from '../metrics/metrics.ts';
import { eventedPlegMetrics, plegMetrics, resizeRequestMetrics, startupMetrics, statusMetrics, workerMetrics } from './observers.ts';
import { requestedResizes } from '../resize/requested.ts';
import { podSpecResources } from '../resources/pod-resources.ts';
import { runtimeEvents, runtimeEventsWanted } from '../pleg/cri-events.ts';
import { startPleg } from '../pleg/relist.ts';
import { isStaticPod, podKey } from '../podutil/podutil.ts';
import { podGauges } from '../pods/gauges.ts';
import { MirrorPods } from '../pods/mirror.ts';
import { StartupLatencyTracker } from '../pods/startup-latency.ts';
import { podSteps } from '../pods/steps.ts';
import { PodWorkers } from '../pods/workers.ts';
import { Prober } from '../prober/prober.ts';
import { appArmorHostError } from '../security/apparmor.ts';
import { apiserverSource } from '../sources/apiserver.ts';
import { PodConfig } from '../sources/config.ts';
import { fileSource } from '../sources/static-file.ts';
import { urlSource } from '../sources/static-url.ts';
import { resizeCounts, StatusManager, statusTargetOf } from '../status/status-manager.ts';
import type { Late } from './late.ts';
import { KUBELET_SCOPE, type Tracing } from '../tracing/tracing.ts';
import type { NodeLoops } from './loops.ts';
import { stopAll, type KubeletOptions, type Stoppable } from './options.ts';
import { podRuntime, type PodSyncDeps } from './pod-runtime.ts';

export function podLifecycle(
  o: KubeletOptions,
  d: PodSyncDeps & {
    loops: NodeLoops;
    /** Set here; the parts built before call through it. */
    workers: Late<PodWorkers>;
    /** Reads the Node from the apiserver past the watch (the node status, built after). */
    refreshNode: () => Promise<void>;
    tracing: Tracing;
  },
) {
  const { config, nodeName, rootDir } = o;
  const { pods, node } = d;
  const wake = (uid: string) => d.workers.get().wake(uid);

  const mirrors = new MirrorPods(
    d.api,
    () => node.owner(),
    logger('mirror_pods'),
    wake,
    (fullName, exceptUID) => pods.staticPodActive(fullName, exceptUID),
  );
  // A re-registered Node has a new UID: mirror pods are owned by it.
  node.onNewUID(() => mirrors.reconcileAll());
  const status = new StatusManager(d.api, logger('status'), {
    observe: statusMetrics,
    target: statusTargetOf({ mirrorOf: (p) => mirrors.mirror(p), latest: (uid) => pods.latest(uid) }),
  });
  // Upstream's pod start-up SLI: creation to all containers running as the watch shows it, without image pulls.
  const startup = new StartupLatencyTracker(startupMetrics(logger('kubelet')));
  const runtime = podRuntime(o, { ...d, startup, pulledImages: d.loops.pulledImages, wake });
  const { resizer } = runtime;
  // Liveness, readiness and startup probes: a changed result syncs the pod again.
  const prober = new Prober({ cri: d.cri, events: d.events, log: logger('prober'), onChange: wake });
  // Each pod gets ROOT/pods/UID before its first sandbox: the mark housekeeping goes by.
  const steps = withPodDirs(
    podSteps({
      api: d.api,
      view: d.view,
      syncer: runtime.syncer,
      status,
      events: d.events,
      nodeIPs: d.host.nodeIPs,
      readyToStartContainers: featureEnabled(config.featureGates, 'PodReadyToStartContainersCondition'),
      node: () => node.get(),
      refreshNode: d.refreshNode,
      probes: prober,
      allowedUnsafeSysctls: config.allowedUnsafeSysctls,
      appArmorHostError: appArmorHostError(),
      admitUnderPressure: (pod) => d.loops.eviction.admit(pod),
      admitShutdown: (pod) => d.loops.shutdown.admit(pod),
      devices: d.cm.devices,
      // The CPU and memory managers' admission, through the topology manager.
      cpus: d.cm.topology,
      claims: d.cm.dra,
      resourcesStatus: d.cm.resourcesStatus,
    }),
    rootDir,
  );
  const workers = d.workers.set(
    new PodWorkers(pods, steps, logger('pod_workers'), {
      resyncMs: config.syncFrequencyMs,
      observe: workerMetrics,
      stopped: (pod) => {
        void mirrors.reconcile(podKey(pod));
        resizer.retryPendingResizes('pod_terminated');
      },
      tracer: d.tracing.tracer(KUBELET_SCOPE),
    }),
  );
  registerPodGauges(() => podGauges(pods.snapshot(), isStaticPod));
  registerResizeGauges(() => resizeCounts(status.statuses()));

  // PLEG: the relist wakes the workers of pods whose containers changed; the runtime's events
  // (CRI's container events, or containerd's task events on containerd 1.6) wake the relist
  // when an exit shows.
  const pleg = startPleg(d.view, {
    log: logger('pleg'),
    observe: plegMetrics,
    onEvents: (evs) => {
      for (const uid of new Set(evs.map((e) => e.uid))) wake(uid);
    },
  });
  const runtimeEventStream = runtimeEventsWanted(config.featureGates)
    ? runtimeEvents(o.runtimeEndpoint, {
        log: logger('pleg'),
        onEvent: (e) => pleg.runtimeEvent(e),
        onReconnect: () => pleg.eventStream(true),
        onDisconnect: () => pleg.eventStream(false),
        observe: eventedPlegMetrics,
      })
    : undefined;
  const beats: Stoppable[] = [mirrors.start(), status.start()];

  let sources: (Stoppable | undefined)[] = [];
  return {
    pleg,
    /**
     * Pod sources: the apiserver (pods bound here and the mirrors of static pods), staticPodPath
     * and staticPodURL, merged and routed by PodConfig. Started once the node status runs: a
     * pod admitted again for its node affinity reads the Node through it.
     */
    startSources() {
      const initContainersResize = featureEnabled(config.featureGates, 'InPlacePodVerticalScalingInitContainers');
      const podConfig = new PodConfig({
        pods: workers,
        mirrors,
        watch: startup,
        log: logger('config'),
        changed: {
          // In-place resize: what a pod asks is tried when it comes, with the deferred resizes,
          // which are tried again when a pod goes (upstream's RetryPendingResizes triggers).
          added: (pod) => resizer.podChanged(pod, 'pods_added'),
          updated: (before, now) => {
            const resizes = requestedResizes(before, now, initContainersResize);
            resizeRequestMetrics(resizes);
            // A changed request, of a container or the pod's own (upstream's recordResizeOperations).
            if (resizes.length || JSON.stringify(podSpecResources(before)) !== JSON.stringify(podSpecResources(now)))
              resizer.podChanged(now, 'pod_updated');
          },
          removed: () => resizer.retryPendingResizes('pods_removed'),
        },
      });
      const api = apiserverSource(d.api, nodeName, podConfig.source('api'), logger('config'));
      pods.sourcesReadyWhen(() => api.synced());
      const noAPIReferences = featureEnabled(config.featureGates, 'PreventStaticPodAPIReferences');
      const files = config.staticPodPath
        ? fileSource(
            config.staticPodPath,
            nodeName,
            podConfig.source('file'),
            logger('config'),
            config.fileCheckFrequencyMs,
            noAPIReferences,
          )
        : undefined;
      const url = config.staticPodURL
        ? urlSource(
            config.staticPodURL,
            config.staticPodURLHeader,
            nodeName,
            podConfig.source('http'),
            logger('config'),
            config.httpCheckFrequencyMs,
            noAPIReferences,
          )
        : undefined;
      sources = [files, url, api];
    },
    // Pods keep running: a restarted kubelet adopts them from their CRI labels.
    stop: () => stopAll([...beats, runtime, ...sources, runtimeEventStream, pleg, workers, prober]),
  };
}
