// The parts report what happened through observer hooks, in their own terms; these map
// the reports to upstream's series. The composition root plugs them in.
import type { RequestObserver, RequestTimer } from '../apiserver/client.ts';
import type { CAReload } from '../apiserver/ca-reload.ts';
import type { EvictionObserver } from '../eviction/eviction-manager.ts';
import type { NodeShutdownObserver } from '../nodeshutdown/manager.ts';
import type { PullObserver } from '../images/puller.ts';
import { type Logger, logger } from '../log/log.ts';
import type { StartupLatencyTracker, StartupObservation } from '../pods/startup-latency.ts';
import type { WorkerObserver } from '../pods/workers.ts';
import { countRunning, type PlegObserver } from '../pleg/relist.ts';
import type { CollectorDeps } from '../gc/collector.ts';
import type { CPUManagerObserver } from '../cpumanager/manager.ts';
import type { MemoryManagerObserver } from '../memorymanager/manager.ts';
import type { TopologyManagerObserver } from '../topologymanager/manager.ts';
import type { DeviceObserver } from '../devices/manager.ts';
import type { PodResourcesObserver } from '../devices/pod-resources.ts';
import type { PluginManagerObserver } from '../plugin-manager/manager.ts';
import type { SyncObserver } from '../runtime/sync.ts';
import type { HookObserver } from '../runtime/hooks.ts';
import type { CgroupOperation } from '../resources/cgroup-manager.ts';
import type { RequestedResize } from '../resize/requested.ts';
import type { StatusObserver } from '../status/status-manager.ts';
import { admissionRejectionReason, grpcCodeName, imageSizeBucket } from '../metrics/labels.ts';
import { metrics, registerCertificateMetrics, setExecPluginCertExpiry } from '../metrics/metrics.ts';
import type { ExecObserver } from '../apiserver/exec-credential.ts';
import { goCodeName } from '../cri/error.ts';
import type { CertificateObserver } from '../certificates/certificate-manager.ts';
import type { PluginObserver } from '../images/credential-provider/exec.ts';
import type { PulledImagesObserver } from '../images/pulled/manager.ts';
import type { VolumeOperationObserver } from '../volumes/volume-metrics.ts';
import type { ReconstructionObserver } from '../volumes/reconstruct.ts';
import type { NodeStartupObserver } from '../node/startup-latency.ts';

/** The client certificate manager's series, registered only when there is one (rotateCertificates). */
export const clientCertificateMetrics = (): CertificateObserver => registerCertificateMetrics('client');

export const restClientMetrics: RequestObserver = (method, code, host) => metrics.restClientRequests.inc({ code, host, method });

/** client-go's rate limiter wait of each request, by verb and the apiserver's host. */
export const rateLimiterMetrics = (host: string) => (verb: string, seconds: number) =>
  metrics.restClientRateLimiterDuration.observe({ verb, host }, seconds);

/** client-go's CA file looks. */
export const caReloadMetrics = (r: CAReload) => metrics.restClientTransportCAReloads.inc({ result: r.result, reason: r.reason });

/** client-go's exec plugin metrics, and its log line when a plugin run after a 401 failed. */
export const execPluginMetrics: ExecObserver = {
  call: (code, status) => metrics.restClientExecPluginCalls.inc({ code: String(code), call_status: status }),
  certificateExpiry: setExecPluginCertExpiry,
  rotated: (age) => metrics.restClientExecPluginCertRotation.observe(age),
  refreshFailed: (e) => logger('rest_client').error('refreshing credentials', { err: e }),
};

/** client-go's latency and size histograms: a size is observed only once there was one (sent, read in full). */
export const restClientTimer: RequestTimer = (verb, host, seconds, size) => {
  metrics.restClientRequestDuration.observe({ verb, host }, seconds);
  if (size.request !== undefined) metrics.restClientRequestSize.observe({ verb, host }, size.request);
  if (size.response !== undefined) metrics.restClientResponseSize.observe({ verb, host }, size.response);
};

/** The node start-up SLI's phases (a phase whose boot time is unknown is left unset, as upstream). */
export const nodeStartupMetrics: NodeStartupObserver = {
  registered(d) {
    if (d.preKubelet !== undefined) metrics.nodeStartupPreKubelet.set(d.preKubelet);
    metrics.nodeStartupPreRegistration.set(d.preRegistration);
    metrics.nodeStartupRegistration.set(d.registration);
  },
  ready(d) {
    metrics.nodeStartupPostRegistration.set(d.postRegistration);
    if (d.total !== undefined) metrics.nodeStartup.set(d.total);
  },
};

export const workerMetrics: WorkerObserver = {
  step: (operation, s) => metrics.podWorkerDuration.observe({ operation_type: operation }, s),
  workerStarted: (s) => metrics.podWorkerStartDuration.observe(s),
  podStarted: (s) => metrics.podStartDuration.observe(s),
  rejected: (reason) => metrics.admissionRejections.inc({ reason: admissionRejectionReason(reason) }),
  preempted: (resource) => metrics.preemptions.inc({ preemption_signal: resource }),
  started: (containers) => metrics.containersPerPod.observe(containers),
  restarted: (isStatic) => metrics.restartedPods.inc({ static: isStatic ? 'true' : '' }),
};

export const evictionMetrics: EvictionObserver = {
  evicted: (signal) => metrics.evictions.inc({ eviction_signal: signal }),
  statsAge: (signal, s) => metrics.evictionStatsAge.observe({ eviction_signal: signal }, s),
  round: (s) => metrics.evictionRoundDuration.observe(s),
  error: () => metrics.evictionErrors.inc(),
};

export const nodeShutdownMetrics: NodeShutdownObserver = {
  startTime: (s) => metrics.gracefulShutdownStartTime.set(s),
  endTime: (s) => metrics.gracefulShutdownEndTime.set(s),
};

/** The lifecycle hooks (src/runtime/hooks.ts), of pods and of orphans alike. */
export const hookMetrics: HookObserver = {
  httpFallback: () => metrics.lifecycleHTTPFallbacks.inc(),
  sleepTerminatedEarly: () => metrics.sleepTerminatedEarly.inc(),
};

export const syncMetrics: SyncObserver = {
  ...hookMetrics,
  sandbox(handler, seconds, e) {
    metrics.startedPods.inc();
    if (seconds !== undefined) metrics.runPodSandboxDuration.observe({ runtime_handler: handler }, seconds);
    if (!e) return;
    metrics.startedPodsErrors.inc();
    // A RuntimeClass lookup that failed never reached RunPodSandbox.
    if (seconds !== undefined) metrics.runPodSandboxErrors.inc({ runtime_handler: handler });
  },
  podResized: (ms, success) => metrics.podResizeDuration.observe({ success: String(success) }, Math.floor(ms)),
  userNamespacedPod(failed) {
    metrics.startedUserNamespacedPods.inc();
    if (failed) metrics.startedUserNamespacedPodsErrors.inc();
  },
  container: (type, e) =>
    e
      ? metrics.startedContainersErrors.inc({ container_type: type, code: grpcCodeName(e) })
      : metrics.startedContainers.inc({ container_type: type }),
};

export const infeasibleResizeMetrics = (reasonDetail: string) => metrics.podInfeasibleResizes.inc({ reason_detail: reasonDetail });
export const deferredAcceptedResizeMetrics = (trigger: string) => metrics.podDeferredAcceptedResizes.inc({ retry_trigger: trigger });

/** The resizes a pod update asked for (src/resize/requested.ts), container by container. */
export const resizeRequestMetrics = (resizes: RequestedResize[]) => {
  for (const r of resizes)
    metrics.containerRequestedResizes.inc({ resource: r.resource, requirement: r.requirement, operation: r.operation });
};

export const statusMetrics: StatusObserver = {
  patched: (s) => metrics.podStatusSyncDuration.observe(s),
  terminated: (t) => metrics.terminatedContainers.inc({ container_type: t.type, exit_code: String(t.exitCode), reason: t.reason }),
};

/** Image pulls: timed per pod for the start-up SLI, and by image size. */
export function pullMetrics(startup: StartupLatencyTracker): PullObserver {
  return {
    started: (uid) => startup.pullStarted(uid),
    finished(uid, seconds, size) {
      startup.pullFinished(uid);
      if (seconds !== undefined) metrics.imagePullDuration.observe({ image_size_in_bytes: imageSizeBucket(size ?? 0) }, seconds);
    },
    ensured: (policy, presentLocally, pullRequired) =>
      metrics.ensureImageRequests.inc({
        pull_policy: policy.toLowerCase(),
        present_locally: presentLocally === undefined ? 'unknown' : String(presentLocally),
        pull_required: pullRequired === undefined ? 'unknown' : String(pullRequired),
      }),
  };
}

/** The start-up SLI of a pod, and upstream's log line for it. */
export function startupMetrics(log: Logger): (o: StartupObservation) => void {
  return (o) => {
    metrics.podStartTotalDuration.observe(o.totalSeconds);
    if (o.sliSeconds !== undefined) metrics.podStartSLIDuration.observe(o.sliSeconds);
    if (o.firstNetworkPod && o.sliSeconds !== undefined) metrics.firstNetworkPodStartSLIDuration.set(o.sliSeconds);
    log.info('Observed pod startup duration', {
      pod: `${o.pod.metadata?.namespace}/${o.pod.metadata?.name}`,
      podStartSLOduration: o.sliSeconds,
      podStartE2EDuration: o.totalSeconds,
      totalImagesPullingTime: o.pullSeconds,
      totalInitContainerRuntime: o.initSeconds,
    });
  };
}

/** Each relist: its duration and interval, when it last ran, and what runs (kubelet_running_pods/containers). */
export const plegMetrics: PlegObserver = (seconds, interval, pods) => {
  metrics.plegRelistDuration.observe(seconds);
  if (interval) metrics.plegRelistInterval.observe(interval);
  metrics.plegLastSeen.set(Date.now() / 1000);
  const running = countRunning(pods);
  metrics.runningPods.set(running.pods);
  metrics.runningContainers.set({ container_state: 'running' }, running.containers);
};

/** containerd's event stream (upstream's evented PLEG connection counters). */
export const eventedPlegMetrics = (ok: boolean) => (ok ? metrics.eventedPlegConnectionSuccess : metrics.eventedPlegConnectionError).inc();

export const housekeepingMetrics: NonNullable<CollectorDeps['observe']> = {
  duration: (loop, s) => metrics.housekeepingDuration.observe({ loop }, s),
  removed: (kind, n) => metrics.garbageCollected.inc({ kind }, n),
  orphan: () => metrics.orphanedRuntimePods.inc(),
  orphanPodDirs(found, notCleaned) {
    metrics.orphanPodCleanedVolumes.set(found);
    metrics.orphanPodCleanedVolumesErrors.set(notCleaned);
  },
  error: (loop) => metrics.housekeepingErrors.inc({ loop }),
};

/** The heap's trims (src/process/heap-trim.ts). */
export const heapTrimMetrics = (seconds: number, freedBytes: number) => {
  metrics.heapTrimDuration.observe(seconds);
  metrics.heapTrimFreed.inc(freedBytes);
};

/** Volume reconstruction at start and the force cleanup of what failed it (src/volumes/reconstruct.ts). */
export const reconstructionMetrics: ReconstructionObserver = {
  reconstructed(total, failed) {
    metrics.reconstructVolumeOperations.inc(total);
    metrics.reconstructVolumeOperationsErrors.inc(failed);
  },
  forceCleaned(ok) {
    metrics.forceCleanedFailedVolumeOperations.inc();
    if (!ok) metrics.forceCleanedFailedVolumeOperationErrors.inc();
  },
};

/** A volume's measure (src/stats/volumes.ts timedMeasure), by its source. */
export const volumeMeasureMetrics = (source: string, seconds: number) =>
  metrics.volumeMetricCollectionDuration.observe({ metric_source: source }, seconds);

/** The stats sampler's loop (src/stats/cache.ts), beside housekeeping's. */
export const statsSampleMetrics = (seconds: number, ok: boolean) => {
  metrics.housekeepingDuration.observe({ loop: 'stats' }, seconds);
  if (!ok) metrics.housekeepingErrors.inc({ loop: 'stats' });
};

export const imageGCMetrics = {
  removed: (n: number, reason: 'age' | 'space') => metrics.imageGarbageCollected.inc({ reason }, n),
  error: () => metrics.imageGCErrors.inc(),
};

export const logRotationMetrics = (result: string) => metrics.containerLogRotations.inc({ result });

export const deviceMetrics: DeviceObserver = {
  registered: (resource) => metrics.devicePluginRegistrations.inc({ resource_name: resource }),
  allocated: (resource, s) => metrics.devicePluginAllocDuration.observe({ resource_name: resource }, s),
};

/** The cgroup manager's writes (src/resources/cgroup-manager.ts timedCgroupManager). */
export const cgroupManagerMetrics = (op: CgroupOperation, seconds: number) =>
  metrics.cgroupManagerDuration.observe({ operation_type: op }, seconds);

/** The DRA manager's operations and its drivers' gRPC calls, as upstream's dra_* histograms. */
export const draMetrics = {
  operation: (operation: string, seconds: number, isError: boolean) =>
    metrics.draOperationsDuration.observe({ operation_name: operation, is_error: String(isError) }, seconds),
  call: (driver: string, method: string, code: number, seconds: number) =>
    metrics.draGrpcOperationsDuration.observe({ driver_name: driver, method_name: method, grpc_status_code: goCodeName(code) }, seconds),
};

/** The CPU manager, under upstream's names (and ours for its reconcile loop's failures). */
export const cpuManagerMetrics: CPUManagerObserver = {
  staticStarted() {
    // initializeMetrics: the container-scope series a static node shows before any pod.
    metrics.containerAlignedComputeResourcesFailure.inc({ boundary: 'physical_cpu', scope: 'container' }, 0);
    metrics.containerAlignedComputeResources.inc({ boundary: 'physical_cpu', scope: 'container' }, 0);
    metrics.containerAlignedComputeResources.inc({ boundary: 'uncore_cache', scope: 'container' }, 0);
  },
  pinningRequest: () => metrics.cpuManagerPinningRequests.inc(),
  pinningError: () => metrics.cpuManagerPinningErrors.inc(),
  aligned: (boundary, ok) =>
    (ok ? metrics.containerAlignedComputeResources : metrics.containerAlignedComputeResourcesFailure).inc({ boundary, scope: 'container' }),
  pools(sharedMillicores, exclusiveCPUs, perNUMA) {
    metrics.cpuManagerSharedPoolMillicores.set(sharedMillicores);
    metrics.cpuManagerExclusiveCPUs.set(exclusiveCPUs);
    // Upstream sets only the NUMA nodes holding some and leaves a node whose CPUs all went back at
    // its last count; here such a node's series goes instead of showing CPUs it no longer has.
    metrics.cpuManagerAllocationPerNUMA.reset();
    for (const [numa, n] of perNUMA) metrics.cpuManagerAllocationPerNUMA.set({ numa_node: String(numa) }, n);
  },
  reconcileFailure: () => metrics.cpuManagerReconcileFailures.inc(),
};

/** The memory manager, under upstream's names. */
export const memoryManagerMetrics: MemoryManagerObserver = {
  pinningRequest: () => metrics.memoryManagerPinningRequests.inc(),
  pinningError: () => metrics.memoryManagerPinningErrors.inc(),
};

/** The topology manager's admissions, under upstream's names. */
export const topologyManagerMetrics: TopologyManagerObserver = {
  admission(ms, failed) {
    metrics.topologyManagerAdmissionRequests.inc();
    if (failed) metrics.topologyManagerAdmissionErrors.inc();
    metrics.topologyManagerAdmissionDuration.observe(ms);
  },
  numaAligned: (scope, ok) =>
    (ok ? metrics.containerAlignedComputeResources : metrics.containerAlignedComputeResourcesFailure).inc({ boundary: 'numa_node', scope }),
};

/** The PodResources API (v1 only), as upstream counts it: every request, and each endpoint's requests and errors. */
export const podResourcesMetrics: PodResourcesObserver = {
  request(endpoint) {
    const v = { server_api_version: 'v1' };
    metrics.podResourcesRequestsTotal.inc(v);
    ({
      list: metrics.podResourcesRequestsList,
      get_allocatable: metrics.podResourcesRequestsGetAllocatable,
      get: metrics.podResourcesRequestsGet,
    })[endpoint].inc(v);
  },
  error: (endpoint) =>
    ({
      list: metrics.podResourcesErrorsList,
      get_allocatable: metrics.podResourcesErrorsGetAllocatable,
      get: metrics.podResourcesErrorsGet,
    })[endpoint].inc({
      server_api_version: 'v1',
    }),
};

/** upstream's totalPluginsCollector: one series per socket path and state, rebuilt after each pass. */
export const pluginManagerMetrics: PluginManagerObserver = {
  state(desired, actual) {
    const g = metrics.pluginManagerTotalPlugins;
    g.reset();
    for (const path of desired) g.set({ socket_path: path, state: 'desired_state_of_world' }, 1);
    for (const path of actual) g.set({ socket_path: path, state: 'actual_state_of_world' }, 1);
  },
};

/** Upstream's credential provider series: each plugin run's duration and failures, and the config's hash. */
export const credentialProviderMetrics: PluginObserver & { configHash(hash: string): void } = {
  duration: (plugin, seconds) => metrics.credentialProviderPluginDuration.observe({ plugin_name: plugin }, seconds),
  error: (plugin) => metrics.credentialProviderPluginErrors.inc({ plugin_name: plugin }),
  configHash(hash) {
    metrics.credentialProviderConfigInfo.reset();
    metrics.credentialProviderConfigInfo.set({ hash }, 1);
  },
};

/** Upstream's kubelet_imagemanager_image_mustpull_checks_total: each ensure-secret-pulled-images check's result. */
export const pulledImagesMetrics: PulledImagesObserver = {
  checked: (result) => metrics.imageMustPullChecks.inc({ result }),
  onDisk: (kind, files) => (kind === 'pullintents' ? metrics.imagePullIntentsOnDisk : metrics.imagePulledRecordsOnDisk).set(files),
};

/**
 * upstream's OperationCompleteHook (storage_operation_duration_seconds: success or fail-unknown,
 * never migrated here) and RecordOperationLatencyMetric's overall_volume_mount.
 */
export const volumeOperationMetrics: VolumeOperationObserver = (o) => {
  metrics.storageOperationDuration.observe(
    { volume_plugin: o.plugin, operation_name: o.operation, status: o.ok ? 'success' : 'fail-unknown', migrated: 'false' },
    o.seconds,
  );
  if (o.sinceRequested !== undefined)
    metrics.volumeOperationTotal.observe({ plugin_name: o.plugin, operation_name: 'overall_volume_mount' }, o.sinceRequested);
};
