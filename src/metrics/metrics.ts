// The kubelet's Prometheus metrics, under upstream's names so existing dashboards and
// alerts work unchanged.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { processAddressSpaceLimit, processNetwork } from './process.ts';

export const registry = new Registry();

const buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

// component-base prefixes each help text with the metric's stability level; upstream's are
// all ALPHA here but kubernetes_build_info's and kubernetes_feature_enabled's BETA. Ours (kubelet_ts_*) have no upstream
// counterpart and no prefix.
const alpha = (help: string) => `[ALPHA] ${help}`;
// Upstream's pod start-up buckets: round numbers in everyday units, up to an hour.
const podStartBuckets = [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600];
const r = [registry];
// component-base's restclient latency buckets (request duration and rate limiter wait).
const restClientLatencyBuckets = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];
// pkg/volume/util's buckets for the storage operations: 100 ms to 10 minutes.
const storageBuckets = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600];
// Prometheus's ExponentialBucketsRange(0.1, 40, 15), 0.1 s to 40 s, as Go's math.Pow computes them:
// V8's ** differs from it in the last digit of six, and a bucket's le is a label.
const draBuckets = [
  0.1, 0.1534127404634391, 0.23535468936502524, 0.36106407876409946, 0.5539182980610752, 0.849781240983936, 1.303672689737678,
  1.9999999999999993, 3.0682548092687805, 4.7070937873005025, 7.221281575281985, 11.078365961221499, 16.995624819678714, 26.07345379475354,
  39.99999999999997,
];
// client-go's size buckets: 64 bytes to 16 MiB.
const sizeBuckets = [64, 256, 512, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216];

/** The exec credential plugin's client certificate's notAfter (rest_client_exec_plugin_ttl_seconds); undefined: none. */
let execPluginCertExpiryMs: number | undefined;
export function setExecPluginCertExpiry(notAfterMs: number | undefined): void {
  execPluginCertExpiryMs = notAfterMs;
}

export const metrics = {
  nodeName: new Gauge({
    name: 'kubelet_node_name',
    help: alpha("The node's name. The count is always 1."),
    labelNames: ['node'],
    registers: r,
  }),
  /** Set (to 1) when the runtime answers UNIMPLEMENTED to RuntimeConfig, with the release that drops the fallback. */
  criLosingSupport: new Gauge({
    name: 'kubelet_cri_losing_support',
    help: alpha('the Kubernetes version that the currently running CRI implementation will lose support on if not upgraded.'),
    labelNames: ['version'],
    registers: r,
  }),
  // The node start-up SLI (src/node/startup-latency.ts), set once a run by a kubelet that created its Node.
  nodeStartupPreKubelet: new Gauge({
    name: 'kubelet_node_startup_pre_kubelet_duration_seconds',
    help: alpha('Duration in seconds of node startup before kubelet starts.'),
    registers: r,
  }),
  nodeStartupPreRegistration: new Gauge({
    name: 'kubelet_node_startup_pre_registration_duration_seconds',
    help: alpha('Duration in seconds of node startup before registration.'),
    registers: r,
  }),
  nodeStartupRegistration: new Gauge({
    name: 'kubelet_node_startup_registration_duration_seconds',
    help: alpha('Duration in seconds of node startup during registration.'),
    registers: r,
  }),
  nodeStartupPostRegistration: new Gauge({
    name: 'kubelet_node_startup_post_registration_duration_seconds',
    help: alpha('Duration in seconds of node startup after registration.'),
    registers: r,
  }),
  nodeStartup: new Gauge({
    name: 'kubelet_node_startup_duration_seconds',
    help: alpha('Duration in seconds of node startup in total.'),
    registers: r,
  }),
  runningPods: new Gauge({ name: 'kubelet_running_pods', help: alpha('Number of pods that have a running pod sandbox'), registers: r }),
  runningContainers: new Gauge({
    name: 'kubelet_running_containers',
    help: alpha('Number of containers currently running'),
    labelNames: ['container_state'],
    registers: r,
  }),
  // Pod workers (src/pods/workers.ts): operation_type is create, update, sync, kill or terminated, as upstream.
  podWorkerDuration: new Histogram({
    name: 'kubelet_pod_worker_duration_seconds',
    help: alpha('Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync'),
    labelNames: ['operation_type'],
    buckets,
    registers: r,
  }),
  // Upstream's ExponentialBuckets(1, 2, 5).
  containersPerPod: new Histogram({
    name: 'kubelet_containers_per_pod_count',
    help: alpha('The number of containers per pod.'),
    buckets: [1, 2, 4, 8, 16],
    registers: r,
  }),
  restartedPods: new Counter({
    name: 'kubelet_restarted_pods_total',
    help: alpha(
      'Number of pods that have been restarted because they were deleted and recreated with the same UID while the kubelet was watching them (common for static pods, extremely uncommon for API pods)',
    ),
    labelNames: ['static'],
    registers: r,
  }),
  podWorkerStartDuration: new Histogram({
    name: 'kubelet_pod_worker_start_duration_seconds',
    help: alpha('Duration in seconds from kubelet seeing a pod to starting a worker.'),
    buckets,
    registers: r,
  }),
  podStartDuration: new Histogram({
    name: 'kubelet_pod_start_duration_seconds',
    help: alpha('Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run'),
    buckets: podStartBuckets,
    registers: r,
  }),
  podStartSLIDuration: new Histogram({
    name: 'kubelet_pod_start_sli_duration_seconds',
    help: alpha(
      'Duration in seconds to start a pod, excluding time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch',
    ),
    buckets: podStartBuckets,
    registers: r,
  }),
  firstNetworkPodStartSLIDuration: new Gauge({
    name: 'kubelet_first_network_pod_start_sli_duration_seconds',
    help: '[INTERNAL] Duration in seconds to start the first network pod, excluding time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch',
    registers: r,
  }),
  podStartTotalDuration: new Histogram({
    name: 'kubelet_pod_start_total_duration_seconds',
    help: alpha(
      'Duration in seconds to start a pod since creation, including time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch',
    ),
    buckets: podStartBuckets,
    registers: r,
  }),
  podStatusSyncDuration: new Histogram({
    name: 'kubelet_pod_status_sync_duration_seconds',
    help: alpha(
      'Duration in seconds to sync a pod status update. Measures time from detection of a change to pod status until the API is successfully updated for that pod, even if multiple intevening changes to pod status occur.',
    ),
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 20, 30, 45, 60],
    registers: r,
  }),
  startedPods: new Counter({ name: 'kubelet_started_pods_total', help: alpha('Cumulative number of pods started'), registers: r }),
  startedPodsErrors: new Counter({
    name: 'kubelet_started_pods_errors_total',
    help: alpha('Cumulative number of errors when starting pods'),
    registers: r,
  }),
  // Upstream's StartedUserNamespacedPodsTotal and StartedUserNamespacedPodsErrorsTotal.
  startedUserNamespacedPods: new Counter({
    name: 'kubelet_started_user_namespaced_pods_total',
    help: alpha('Cumulative number of pods with user namespaces started. This metric will only be collected on Linux.'),
    registers: r,
  }),
  startedUserNamespacedPodsErrors: new Counter({
    name: 'kubelet_started_user_namespaced_pods_errors_total',
    help: alpha('Cumulative number of errors when starting pods with user namespaces. This metric will only be collected on Linux.'),
    registers: r,
  }),
  startedContainers: new Counter({
    name: 'kubelet_started_containers_total',
    help: alpha('Cumulative number of containers started'),
    labelNames: ['container_type'],
    registers: r,
  }),
  startedContainersErrors: new Counter({
    name: 'kubelet_started_containers_errors_total',
    help: alpha('Cumulative number of errors when starting containers'),
    labelNames: ['container_type', 'code'],
    registers: r,
  }),
  terminatedContainers: new Counter({
    name: 'kubelet_terminated_containers_total',
    help: alpha('Cumulative number of container terminations.'),
    labelNames: ['container_type', 'exit_code', 'reason'],
    registers: r,
  }),
  lifecycleHTTPFallbacks: new Counter({
    name: 'kubelet_lifecycle_handler_http_fallbacks_total',
    help: alpha('The number of times lifecycle handlers successfully fell back to http from https.'),
    registers: r,
  }),
  sleepTerminatedEarly: new Counter({
    name: 'kubelet_sleep_action_terminated_early_total',
    help: alpha('The number of times lifecycle sleep handler got terminated before it finishes'),
    registers: r,
  }),
  admissionRejections: new Counter({
    name: 'kubelet_admission_rejections_total',
    help: alpha('Cumulative number pod admission rejections by the Kubelet.'),
    labelNames: ['reason'],
    registers: r,
  }),
  imagePullDuration: new Histogram({
    name: 'kubelet_image_pull_duration_seconds',
    help: alpha('Duration in seconds to pull an image.'),
    labelNames: ['image_size_in_bytes'],
    buckets: [1, 5, 10, 20, 30, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600],
    registers: r,
  }),
  cgroupManagerDuration: new Histogram({
    name: 'kubelet_cgroup_manager_duration_seconds',
    help: alpha('Duration in seconds for cgroup manager operations. Broken down by method.'),
    labelNames: ['operation_type'],
    buckets,
    registers: r,
  }),
  ensureImageRequests: new Counter({
    name: 'kubelet_image_manager_ensure_image_requests_total',
    help: alpha('Number of ensure-image requests processed by the kubelet.'),
    labelNames: ['pull_policy', 'present_locally', 'pull_required'],
    registers: r,
  }),
  // In-place resize (src/resize), upstream's names.
  containerRequestedResizes: new Counter({
    name: 'kubelet_container_requested_resizes_total',
    help: alpha(
      "Number of requested resizes, counted at the container level. Different resources on the same container are counted separately. The 'requirement' label refers to 'memory' or 'limits'; the 'operation' label can be one of 'add', 'remove', 'increase' or 'decrease'.",
    ),
    labelNames: ['resource', 'requirement', 'operation'],
    registers: r,
  }),
  podInfeasibleResizes: new Counter({
    name: 'kubelet_pod_infeasible_resizes_total',
    help: alpha('Number of infeasible resizes for pods.'),
    labelNames: ['reason_detail'],
    registers: r,
  }),
  podDeferredAcceptedResizes: new Counter({
    name: 'kubelet_pod_deferred_accepted_resizes_total',
    help: alpha('Cumulative number of resizes that were accepted after being deferred.'),
    labelNames: ['retry_trigger'],
    registers: r,
  }),
  // Whole milliseconds, as upstream's Milliseconds().
  podResizeDuration: new Histogram({
    name: 'kubelet_pod_resize_duration_milliseconds',
    help: alpha('Duration in milliseconds to actuate a pod resize'),
    labelNames: ['success'],
    buckets: [10, 50, 100, 500, 1000, 2000, 5000, 10000, 20000, 30000, 60000, 120000, 300000, 600000],
    registers: r,
  }),
  cgroupVersion: new Gauge({ name: 'kubelet_cgroup_version', help: alpha('cgroup version on the hosts.'), registers: r }),
  runPodSandboxDuration: new Histogram({
    name: 'kubelet_run_podsandbox_duration_seconds',
    help: alpha('Duration in seconds of the run_podsandbox operations. Broken down by RuntimeClass.Handler.'),
    labelNames: ['runtime_handler'],
    buckets,
    registers: r,
  }),
  runPodSandboxErrors: new Counter({
    name: 'kubelet_run_podsandbox_errors_total',
    help: alpha('Cumulative number of the run_podsandbox operation errors by RuntimeClass.Handler.'),
    labelNames: ['runtime_handler'],
    registers: r,
  }),
  plegRelistDuration: new Histogram({
    name: 'kubelet_pleg_relist_duration_seconds',
    help: alpha('Duration in seconds for relisting pods in PLEG.'),
    buckets,
    registers: r,
  }),
  plegRelistInterval: new Histogram({
    name: 'kubelet_pleg_relist_interval_seconds',
    help: alpha('Interval in seconds between relisting in PLEG.'),
    buckets,
    registers: r,
  }),
  plegLastSeen: new Gauge({
    name: 'kubelet_pleg_last_seen_seconds',
    help: alpha('Timestamp in seconds when PLEG was last seen active.'),
    registers: r,
  }),
  // upstream's PLEG hands its events to the sync loop through a channel of 1000 and counts what a
  // full one discards; here a relist's events wake each pod's worker at once (pod-lifecycle.ts), so
  // none is ever discarded and the counter stays 0, as upstream's on a node that keeps up.
  plegDiscardEvents: new Counter({
    name: 'kubelet_pleg_discard_events',
    help: alpha('The number of discard events in PLEG.'),
    registers: r,
  }),
  runtimeOperations: new Counter({
    name: 'kubelet_runtime_operations_total',
    help: alpha('Cumulative number of runtime operations by operation type.'),
    labelNames: ['operation_type'],
    registers: r,
  }),
  // Upstream's ExponentialBuckets(.005, 2.5, 14): 5 ms to about 2 hours (an image pull can take long).
  runtimeOperationsDuration: new Histogram({
    name: 'kubelet_runtime_operations_duration_seconds',
    help: alpha('Duration in seconds of runtime operations. Broken down by operation type.'),
    labelNames: ['operation_type'],
    buckets: Array.from({ length: 14 }, (_, i) => 0.005 * 2.5 ** i),
    registers: r,
  }),
  runtimeOperationsErrors: new Counter({
    name: 'kubelet_runtime_operations_errors_total',
    help: alpha('Cumulative number of runtime operation errors by operation type.'),
    labelNames: ['operation_type'],
    registers: r,
  }),
  eventedPlegConnectionSuccess: new Counter({
    name: 'kubelet_evented_pleg_connection_success_count',
    help: alpha('The number of times a streaming client was obtained to receive CRI Events.'),
    registers: r,
  }),
  eventedPlegConnectionError: new Counter({
    name: 'kubelet_evented_pleg_connection_error_count',
    help: alpha('The number of errors encountered during the establishment of streaming connection with the CRI runtime.'),
    registers: r,
  }),
  // The kubelet API (src/server), labelled as upstream's server filter does.
  httpRequests: new Counter({
    name: 'kubelet_http_requests_total',
    help: alpha('Number of the http requests received since the server started'),
    labelNames: ['method', 'path', 'server_type', 'long_running'],
    registers: r,
  }),
  httpRequestsDuration: new Histogram({
    name: 'kubelet_http_requests_duration_seconds',
    help: alpha('Duration in seconds to serve http requests'),
    labelNames: ['method', 'path', 'server_type', 'long_running'],
    buckets,
    registers: r,
  }),
  // exec, attach and port-forward taken over WebSocket (ExtendWebSocketsToKubelet), by subresource.
  websocketStreamingRequests: new Counter({
    name: 'kubelet_websocket_streaming_requests_total',
    help: alpha('Total number of WebSocket streaming requests (exec/attach/portforward) received by the kubelet.'),
    labelNames: ['subresource'],
    registers: r,
  }),
  httpInflightRequests: new Gauge({
    name: 'kubelet_http_inflight_requests',
    help: alpha('Number of the inflight http requests'),
    labelNames: ['method', 'path', 'server_type', 'long_running'],
    registers: r,
  }),
  volumeMetricCollectionDuration: new Histogram({
    name: 'kubelet_volume_metric_collection_duration_seconds',
    help: alpha('Duration in seconds to calculate volume stats'),
    labelNames: ['metric_source'],
    buckets,
    registers: r,
  }),
  metricsProvider: new Gauge({
    name: 'kubelet_metrics_provider',
    help: alpha("Metrics provider used by kubelet to collect container stats. Values can be 'cadvisor' and 'cri'"),
    labelNames: ['provider'],
    registers: r,
  }),
  // The credential provider plugins (src/images/credential-provider), upstream's plugin/metrics.go.
  credentialProviderPluginErrors: new Counter({
    name: 'kubelet_credential_provider_plugin_errors_total',
    help: alpha('Number of errors from credential provider plugin'),
    labelNames: ['plugin_name'],
    registers: r,
  }),
  credentialProviderPluginDuration: new Histogram({
    name: 'kubelet_credential_provider_plugin_duration',
    help: alpha('Duration of execution in seconds for credential provider plugin'),
    labelNames: ['plugin_name'],
    buckets,
    registers: r,
  }),
  credentialProviderConfigInfo: new Gauge({
    name: 'kubelet_credential_provider_config_info',
    help: alpha('Information about the last applied credential provider configuration with hash as label'),
    labelNames: ['hash'],
    registers: r,
  }),
  // Ensure-secret-pulled-images (src/images/pulled), upstream's pullmanager/metrics.go.
  imageMustPullChecks: new Counter({
    name: 'kubelet_imagemanager_image_mustpull_checks_total',
    help: alpha('Counter for how many times kubelet checked whether credentials need to be re-verified to access an image'),
    labelNames: ['result'],
    registers: r,
  }),
  imagePullIntentsOnDisk: new Gauge({
    name: 'kubelet_imagemanager_ondisk_pullintents',
    help: alpha('Number of ImagePullIntents stored on disk.'),
    registers: r,
  }),
  imagePulledRecordsOnDisk: new Gauge({
    name: 'kubelet_imagemanager_ondisk_pulledrecords',
    help: alpha('Number of ImagePulledRecords stored on disk.'),
    registers: r,
  }),
  traceSpans: new Counter({
    name: 'kubelet_ts_trace_spans_total',
    help: 'Trace spans by what became of them: exported to the collector, dropped (the queue was full) or failed (the export gave up).',
    labelNames: ['result'],
    registers: r,
  }),
  // The kubelet's own heap (src/process/heap-trim.ts): the full collections run when it grew, and what they gave back.
  heapTrimDuration: new Histogram({
    name: 'kubelet_ts_heap_trim_duration_seconds',
    help: "Full garbage collections of the kubelet's heap, run when it grew by a few megabytes since the last, by how long each took.",
    buckets,
    registers: r,
  }),
  heapTrimFreed: new Counter({
    name: 'kubelet_ts_heap_trim_freed_bytes_total',
    help: "Bytes of the kubelet's heap those collections freed.",
    registers: r,
  }),
  eventsDropped: new Counter({
    name: 'kubelet_ts_events_dropped_total',
    help: 'Kubernetes Events dropped because the send queue was full.',
    registers: r,
  }),
  // component-base's version metric (every Kubernetes component has it): the release kubelet-ts implements.
  buildInfo: new Gauge({
    name: 'kubernetes_build_info',
    help: "[BETA] A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.",
    labelNames: ['build_date', 'compiler', 'git_commit', 'git_tree_state', 'git_version', 'go_version', 'major', 'minor', 'platform'],
    registers: r,
  }),
  // component-base's feature gate metric (featureGate.AddMetrics at the kubelet's start): every gate, 1 when on.
  featureEnabled: new Gauge({
    name: 'kubernetes_feature_enabled',
    help: '[BETA] This metric records the data about the stage and enablement of a k8s feature.',
    labelNames: ['name', 'stage'],
    registers: r,
  }),
  // client-go's request counter (src/apiserver/client.ts): what this kubelet costs the apiserver.
  restClientRequests: new Counter({
    name: 'rest_client_requests_total',
    help: alpha('Number of HTTP requests, partitioned by status code, method, and host.'),
    labelNames: ['code', 'host', 'method'],
    registers: r,
  }),
  // client-go's CA file looks (src/apiserver/ca-reload.ts), as component-base's restclient metrics name them.
  restClientTransportCAReloads: new Counter({
    name: 'rest_client_transport_ca_reload_total',
    help: alpha('Number of times a CA reload is attempted, partitioned by the result and reason for the reload attempt'),
    labelNames: ['reason', 'result'],
    registers: r,
  }),
  // client-go's exec credential plugin (src/apiserver/exec-credential.ts), as component-base's
  // restclient metrics register them in every component: the TTL +Inf without a plugin's certificate.
  restClientExecPluginCalls: new Counter({
    name: 'rest_client_exec_plugin_call_total',
    help: alpha(
      'Number of calls to an exec plugin, partitioned by the type of event encountered (no_error, plugin_execution_error, plugin_not_found_error, client_internal_error) and an optional exit code. The exit code will be set to 0 if and only if the plugin call was successful.',
    ),
    labelNames: ['code', 'call_status'],
    registers: r,
  }),
  restClientExecPluginCertRotation: new Histogram({
    name: 'rest_client_exec_plugin_certificate_rotation_age',
    help: alpha(
      'Histogram of the number of seconds the last auth exec plugin client certificate lived before being rotated. If auth exec plugin client certificates are unused, histogram will contain no data.',
    ),
    buckets: [600, 1800, 3600, 14400, 86400, 604800, 2592000, 7776000, 15552000, 31104000, 124416000],
    registers: r,
  }),
  restClientExecPluginCertTTL: new Gauge({
    name: 'rest_client_exec_plugin_ttl_seconds',
    help: alpha(
      'Gauge of the shortest TTL (time-to-live) of the client certificate(s) managed by the auth exec plugin. The value is in seconds until certificate expiry (negative if already expired). If auth exec plugins are unused or manage no TLS certificates, the value will be +INF.',
    ),
    registers: r,
    collect() {
      this.set(execPluginCertExpiryMs === undefined ? Infinity : (execPluginCertExpiryMs - Date.now()) / 1000);
    },
  }),
  // client-go's request histograms as component-base registers them (its restclient metrics.go): every
  // request but watches, by verb and host.
  restClientRequestDuration: new Histogram({
    name: 'rest_client_request_duration_seconds',
    help: alpha('Request latency in seconds. Broken down by verb, and host.'),
    labelNames: ['verb', 'host'],
    buckets: restClientLatencyBuckets,
    registers: r,
  }),
  restClientRateLimiterDuration: new Histogram({
    name: 'rest_client_rate_limiter_duration_seconds',
    help: alpha('Client side rate limiter latency in seconds. Broken down by verb, and host.'),
    labelNames: ['verb', 'host'],
    buckets: restClientLatencyBuckets,
    registers: r,
  }),
  restClientRequestSize: new Histogram({
    name: 'rest_client_request_size_bytes',
    help: alpha('Request size in bytes. Broken down by verb and host.'),
    labelNames: ['verb', 'host'],
    buckets: sizeBuckets,
    registers: r,
  }),
  restClientResponseSize: new Histogram({
    name: 'rest_client_response_size_bytes',
    help: alpha('Response size in bytes. Broken down by verb and host.'),
    labelNames: ['verb', 'host'],
    buckets: sizeBuckets,
    registers: r,
  }),
  // The volume operations (src/volumes, src/csi), as upstream's pkg/volume/util/metrics.go names them.
  storageOperationDuration: new Histogram({
    name: 'storage_operation_duration_seconds',
    help: alpha('Storage operation duration'),
    labelNames: ['volume_plugin', 'operation_name', 'status', 'migrated'],
    buckets: storageBuckets,
    registers: r,
  }),
  volumeOperationTotal: new Histogram({
    name: 'volume_operation_total_seconds',
    help: alpha('Storage operation end to end duration in seconds'),
    labelNames: ['plugin_name', 'operation_name'],
    buckets: storageBuckets,
    registers: r,
  }),
  // Volume reconstruction at start (src/volumes/reconstruct.ts), upstream's volumemanager metrics.
  reconstructVolumeOperations: new Counter({
    name: 'reconstruct_volume_operations_total',
    help: alpha(
      'The number of volumes that were attempted to be reconstructed from the operating system during kubelet startup. This includes both successful and failed reconstruction.',
    ),
    registers: r,
  }),
  reconstructVolumeOperationsErrors: new Counter({
    name: 'reconstruct_volume_operations_errors_total',
    help: alpha('The number of volumes that failed reconstruction from the operating system during kubelet startup.'),
    registers: r,
  }),
  forceCleanedFailedVolumeOperations: new Counter({
    name: 'force_cleaned_failed_volume_operations_total',
    help: alpha(
      'The number of volumes that were force cleaned after their reconstruction failed during kubelet startup. This includes both successful and failed cleanups.',
    ),
    registers: r,
  }),
  forceCleanedFailedVolumeOperationErrors: new Counter({
    name: 'force_cleaned_failed_volume_operation_errors_total',
    help: alpha('The number of volumes that failed force cleanup after their reconstruction failed during kubelet startup.'),
    registers: r,
  }),
  // Housekeeping and container garbage collection (src/gc).
  orphanedRuntimePods: new Counter({
    name: 'kubelet_orphaned_runtime_pods_total',
    help: alpha(
      'Number of pods that have been detected in the container runtime without being already known to the pod worker. This typically indicates the kubelet was restarted while a pod was force deleted in the API or in the local configuration, which is unusual.',
    ),
    registers: r,
  }),
  orphanPodCleanedVolumes: new Gauge({
    name: 'kubelet_orphan_pod_cleaned_volumes',
    help: alpha('The total number of orphaned Pods whose volumes were cleaned in the last periodic sweep.'),
    registers: r,
  }),
  orphanPodCleanedVolumesErrors: new Gauge({
    name: 'kubelet_orphan_pod_cleaned_volumes_errors',
    help: alpha('The number of orphaned Pods whose volumes failed to be cleaned in the last periodic sweep.'),
    registers: r,
  }),
  // The device manager (src/devices) and the PodResources API, under upstream's names.
  devicePluginRegistrations: new Counter({
    name: 'kubelet_device_plugin_registration_total',
    help: alpha('Cumulative number of device plugin registrations. Broken down by resource name.'),
    labelNames: ['resource_name'],
    registers: r,
  }),
  devicePluginAllocDuration: new Histogram({
    name: 'kubelet_device_plugin_alloc_duration_seconds',
    help: alpha('Duration in seconds to serve a device plugin Allocation request. Broken down by resource name.'),
    labelNames: ['resource_name'],
    buckets,
    registers: r,
  }),
  // The DRA manager (src/dra), upstream's DRADurationBuckets: ExponentialBucketsRange(0.1, 40, 15).
  draOperationsDuration: new Histogram({
    name: 'dra_operations_duration_seconds',
    help: alpha(
      "Latency histogram in seconds for the duration of handling all ResourceClaims referenced by a pod when the pod starts or stops. Identified by the name of the operation (PrepareResources or UnprepareResources) and separated by the success of the operation. The number of failed operations is provided through the histogram's overall count.",
    ),
    labelNames: ['operation_name', 'is_error'],
    buckets: draBuckets,
    registers: r,
  }),
  draGrpcOperationsDuration: new Histogram({
    name: 'dra_grpc_operations_duration_seconds',
    help: alpha('Duration in seconds of the DRA gRPC operations'),
    labelNames: ['driver_name', 'method_name', 'grpc_status_code'],
    buckets: draBuckets,
    registers: r,
  }),
  // The CPU manager (src/cpumanager), as upstream's kubelet metrics name it.
  cpuManagerPinningRequests: new Counter({
    name: 'kubelet_cpu_manager_pinning_requests_total',
    help: alpha('The number of cpu core allocations which required pinning.'),
    registers: r,
  }),
  cpuManagerPinningErrors: new Counter({
    name: 'kubelet_cpu_manager_pinning_errors_total',
    help: alpha('The number of cpu core allocations which required pinning failed.'),
    registers: r,
  }),
  cpuManagerSharedPoolMillicores: new Gauge({
    name: 'kubelet_cpu_manager_shared_pool_size_millicores',
    help: alpha('The size of the shared CPU pool for non-guaranteed QoS pods, in millicores.'),
    registers: r,
  }),
  cpuManagerExclusiveCPUs: new Gauge({
    name: 'kubelet_cpu_manager_exclusive_cpu_allocation_count',
    help: alpha('The total number of CPUs exclusively allocated to containers running on this node'),
    registers: r,
  }),
  cpuManagerAllocationPerNUMA: new Gauge({
    name: 'kubelet_cpu_manager_allocation_per_numa',
    help: alpha('Number of CPUs allocated per NUMA node'),
    labelNames: ['numa_node'],
    registers: r,
  }),
  // The CPU and topology managers' alignment outcomes, by scope (container, pod) and boundary
  // (physical_cpu, uncore_cache, numa_node).
  containerAlignedComputeResources: new Counter({
    name: 'kubelet_container_aligned_compute_resources_count',
    help: alpha('Cumulative number of aligned compute resources allocated to containers by alignment type.'),
    labelNames: ['scope', 'boundary'],
    registers: r,
  }),
  containerAlignedComputeResourcesFailure: new Counter({
    name: 'kubelet_container_aligned_compute_resources_failure_count',
    help: alpha('Cumulative number of failures to allocate aligned compute resources to containers by alignment type.'),
    labelNames: ['scope', 'boundary'],
    registers: r,
  }),
  // The memory and topology managers (src/memorymanager, src/topologymanager), as upstream names them.
  memoryManagerPinningRequests: new Counter({
    name: 'kubelet_memory_manager_pinning_requests_total',
    help: alpha('The number of memory pages allocations which required pinning.'),
    registers: r,
  }),
  memoryManagerPinningErrors: new Counter({
    name: 'kubelet_memory_manager_pinning_errors_total',
    help: alpha('The number of memory pages allocations which required pinning that failed.'),
    registers: r,
  }),
  topologyManagerAdmissionRequests: new Counter({
    name: 'kubelet_topology_manager_admission_requests_total',
    help: alpha('The number of admission requests where resources have to be aligned.'),
    registers: r,
  }),
  topologyManagerAdmissionErrors: new Counter({
    name: 'kubelet_topology_manager_admission_errors_total',
    help: alpha('The number of admission request failures where resources could not be aligned.'),
    registers: r,
  }),
  topologyManagerAdmissionDuration: new Histogram({
    name: 'kubelet_topology_manager_admission_duration_ms',
    help: alpha('Duration in milliseconds to serve a pod admission request.'),
    // metrics.ExponentialBuckets(.05, 2, 15)
    buckets: Array.from({ length: 15 }, (_, i) => 0.05 * 2 ** i),
    registers: r,
  }),
  cpuManagerReconcileFailures: new Counter({
    name: 'kubelet_ts_cpu_manager_reconcile_failures_total',
    help: "Containers whose cpuset the CPU manager's reconcile loop could not update (CRI UpdateContainerResources failed).",
    registers: r,
  }),
  podResourcesRequestsTotal: new Counter({
    name: 'kubelet_pod_resources_endpoint_requests_total',
    help: alpha('Cumulative number of requests to the PodResource endpoint. Broken down by server api version.'),
    labelNames: ['server_api_version'],
    registers: r,
  }),
  podResourcesRequestsList: new Counter({
    name: 'kubelet_pod_resources_endpoint_requests_list',
    help: alpha('Number of requests to the PodResource List endpoint. Broken down by server api version.'),
    labelNames: ['server_api_version'],
    registers: r,
  }),
  podResourcesRequestsGetAllocatable: new Counter({
    name: 'kubelet_pod_resources_endpoint_requests_get_allocatable',
    help: alpha('Number of requests to the PodResource GetAllocatableResources endpoint. Broken down by server api version.'),
    labelNames: ['server_api_version'],
    registers: r,
  }),
  podResourcesRequestsGet: new Counter({
    name: 'kubelet_pod_resources_endpoint_requests_get',
    help: alpha('Number of requests to the PodResource Get endpoint. Broken down by server api version.'),
    labelNames: ['server_api_version'],
    registers: r,
  }),
  podResourcesErrorsList: new Counter({
    name: 'kubelet_pod_resources_endpoint_errors_list',
    help: alpha('Number of requests to the PodResource List endpoint which returned error. Broken down by server api version.'),
    labelNames: ['server_api_version'],
    registers: r,
  }),
  podResourcesErrorsGetAllocatable: new Counter({
    name: 'kubelet_pod_resources_endpoint_errors_get_allocatable',
    help: alpha(
      'Number of requests to the PodResource GetAllocatableResources endpoint which returned error. Broken down by server api version.',
    ),
    labelNames: ['server_api_version'],
    registers: r,
  }),
  podResourcesErrorsGet: new Counter({
    name: 'kubelet_pod_resources_endpoint_errors_get',
    help: alpha('Number of requests to the PodResource Get endpoint which returned error. Broken down by server api version.'),
    labelNames: ['server_api_version'],
    registers: r,
  }),
  // The plugin manager (src/plugin-manager): upstream's name, without the kubelet_ prefix.
  pluginManagerTotalPlugins: new Gauge({
    name: 'plugin_manager_total_plugins',
    help: alpha('Number of plugins in Plugin Manager'),
    labelNames: ['socket_path', 'state'],
    registers: r,
  }),
  housekeepingDuration: new Histogram({
    name: 'kubelet_ts_housekeeping_duration_seconds',
    help: 'Duration in seconds of a pass of housekeeping (every 2 s), of container garbage collection (every minute) or of a stats sample (every 10 s).',
    labelNames: ['loop'],
    buckets,
    registers: r,
  }),
  housekeepingErrors: new Counter({
    name: 'kubelet_ts_housekeeping_errors_total',
    help: 'Passes of housekeeping or container garbage collection that failed.',
    labelNames: ['loop'],
    registers: r,
  }),
  // Upstream's eviction and image GC counters, and ours for the eviction manager and image GC loops.
  evictions: new Counter({
    name: 'kubelet_evictions',
    help: alpha('Cumulative number of pod evictions by eviction signal'),
    labelNames: ['eviction_signal'],
    registers: r,
  }),
  evictionStatsAge: new Histogram({
    name: 'kubelet_eviction_stats_age_seconds',
    help: alpha('Time between when stats are collected, and when pod is evicted based on those stats by eviction signal'),
    labelNames: ['eviction_signal'],
    buckets,
    registers: r,
  }),
  preemptions: new Counter({
    name: 'kubelet_preemptions',
    help: alpha('Cumulative number of pod preemptions by preemption resource'),
    labelNames: ['preemption_signal'],
    registers: r,
  }),
  evictionRoundDuration: new Histogram({
    name: 'kubelet_ts_eviction_round_duration_seconds',
    help: 'Duration of eviction manager rounds (stats, decision, reclaim, eviction).',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: r,
  }),
  // Graceful node shutdown (src/nodeshutdown): when the last one began and ended.
  gracefulShutdownStartTime: new Gauge({
    name: 'kubelet_graceful_shutdown_start_time_seconds',
    help: alpha('Last graceful shutdown start time since unix epoch in seconds'),
    registers: r,
  }),
  gracefulShutdownEndTime: new Gauge({
    name: 'kubelet_graceful_shutdown_end_time_seconds',
    help: alpha('Last graceful shutdown end time since unix epoch in seconds'),
    registers: r,
  }),
  evictionErrors: new Counter({ name: 'kubelet_ts_eviction_errors_total', help: 'Eviction manager rounds that failed.', registers: r }),
  imageGarbageCollected: new Counter({
    name: 'kubelet_image_garbage_collected_total',
    help: alpha('Total number of images garbage collected by the kubelet, whether through disk usage or image age.'),
    labelNames: ['reason'],
    registers: r,
  }),
  imageGCErrors: new Counter({
    name: 'kubelet_ts_image_gc_errors_total',
    help: 'Image garbage collection passes that failed.',
    registers: r,
  }),
  garbageCollected: new Counter({
    name: 'kubelet_ts_garbage_collected_total',
    help: 'Containers, sandboxes, pod directories and pod log directories removed by housekeeping and garbage collection.',
    labelNames: ['kind'],
    registers: r,
  }),
  // Container log rotation (src/container-logs).
  containerLogRotations: new Counter({
    name: 'kubelet_ts_container_log_rotations_total',
    help: 'Container log rotations by result: rotated, error (one container failed), list_error (a whole pass failed).',
    labelNames: ['result'],
    registers: r,
  }),
};

// Upstream's HandlePodCleanups adds the restarts it found, 0 too, to both series each pass: both exist from the start.
for (const isStatic of ['true', '']) metrics.restartedPods.inc({ static: isStatic }, 0);

/** Feeds kubelet_runtime_operations_* from the CRI client's observer hook. */
export function observeRuntimeOperation(operation: string, seconds: number, error?: unknown): void {
  metrics.runtimeOperations.inc({ operation_type: operation });
  metrics.runtimeOperationsDuration.observe({ operation_type: operation }, seconds);
  if (error) metrics.runtimeOperationsErrors.inc({ operation_type: operation });
}

/** What the pod gauges show, read at each scrape (upstream sets them in housekeeping). */
export interface PodGauges {
  desired: { regular: number; static: number };
  active: { regular: number; static: number };
  mirror: number;
  /** kubelet_working_pods: one entry per label set, zeros included. */
  working: { lifecycle: string; config: string; static: string; count: number }[];
  ephemeralContainers: number;
}

/** kubelet_desired_pods, _active_pods, _mirror_pods, _working_pods and _managed_ephemeral_containers, from read() at scrape time. */
export function registerPodGauges(read: () => PodGauges): void {
  // The last kubelet's is shown where one process runs several (hollow nodes, tests).
  const gauge = (name: string, help: string, labelNames: string[], set: (g: Gauge, p: PodGauges) => void) => {
    registry.removeSingleMetric(name);
    return new Gauge({
      name,
      help: alpha(help),
      labelNames,
      registers: r,
      collect() {
        set(this, read());
      },
    });
  };
  gauge(
    'kubelet_desired_pods',
    'The number of pods the kubelet is being instructed to run. static is true if the pod is not from the apiserver.',
    ['static'],
    (g, p) => {
      g.set({ static: '' }, p.desired.regular);
      g.set({ static: 'true' }, p.desired.static);
    },
  );
  gauge(
    'kubelet_active_pods',
    'The number of pods the kubelet considers active and which are being considered when admitting new pods. static is true if the pod is not from the apiserver.',
    ['static'],
    (g, p) => {
      g.set({ static: '' }, p.active.regular);
      g.set({ static: 'true' }, p.active.static);
    },
  );
  gauge('kubelet_mirror_pods', 'The number of mirror pods the kubelet will try to create (one per admitted static pod)', [], (g, p) =>
    g.set(p.mirror),
  );
  gauge(
    'kubelet_working_pods',
    'Number of pods the kubelet is actually running, broken down by lifecycle phase, whether the pod is desired, orphaned, or runtime only (also orphaned), and whether the pod is static. An orphaned pod has been removed from local configuration or force deleted in the API and consumes resources that are not otherwise visible.',
    ['lifecycle', 'config', 'static'],
    (g, p) => {
      for (const w of p.working) g.set({ lifecycle: w.lifecycle, config: w.config, static: w.static }, w.count);
    },
  );
  gauge('kubelet_managed_ephemeral_containers', 'Current number of ephemeral containers in pods managed by this kubelet.', [], (g, p) =>
    g.set(p.ephemeralContainers),
  );
}

/**
 * kubelet_pod_pending_resizes {reason} and kubelet_pod_in_progress_resizes, from read() at each
 * scrape (upstream sets them as the status manager's resize conditions change).
 */
export function registerResizeGauges(read: () => { pending: Record<string, number>; inProgress: number }): void {
  for (const name of ['kubelet_pod_pending_resizes', 'kubelet_pod_in_progress_resizes']) registry.removeSingleMetric(name);
  new Gauge({
    name: 'kubelet_pod_pending_resizes',
    help: alpha('Number of pending resizes for pods.'),
    labelNames: ['reason'],
    registers: r,
    collect() {
      this.reset();
      for (const [reason, n] of Object.entries(read().pending)) this.set({ reason }, n);
    },
  });
  new Gauge({
    name: 'kubelet_pod_in_progress_resizes',
    help: alpha('Number of in-progress resizes for pods.'),
    registers: r,
    collect() {
      this.set(read().inProgress);
    },
  });
}

// The certificate managers' series (src/certificates), as upstream names them: what
// kube-prometheus-stack's KubeletClientCertificateExpiration and KubeletServerCertificateExpiration
// alerts read. Only the serving certificate's manager has the rotation histogram.
const CERTIFICATE_SERIES = {
  client: {
    ttl: 'kubelet_certificate_manager_client_ttl_seconds',
    ttlHelp:
      "Gauge of the TTL (time-to-live) of the Kubelet's client certificate. The value is in seconds until certificate expiry (negative if already expired). If client certificate is invalid or unused, the value will be +INF.",
    renewErrors: 'kubelet_certificate_manager_client_expiration_renew_errors',
    rotation: undefined,
  },
  server: {
    ttl: 'kubelet_certificate_manager_server_ttl_seconds',
    ttlHelp:
      "Gauge of the shortest TTL (time-to-live) of the Kubelet's serving certificate. The value is in seconds until certificate expiry (negative if already expired). If serving certificate is invalid or unused, the value will be +INF.",
    renewErrors: 'kubelet_server_expiration_renew_errors',
    rotation: 'kubelet_certificate_manager_server_rotation_seconds',
  },
} as const;
// One minute, hour, 4 hours, day, week, month, 3 and 6 months, year and 4 years.
const certificateAgeBuckets = [60, 3600, 14400, 86400, 604800, 2592000, 7776000, 15552000, 31104000, 124416000];

/**
 * A certificate manager's series, registered when the manager is made, as upstream registers
 * them: the client's only with rotateCertificates (cmd/kubelet/app/server.go
 * buildKubeletClientConfig), the serving one's only with serverTLSBootstrap
 * (pkg/kubelet/certificate NewKubeletServerCertificateManager). The TTL is computed at scrape from
 * the notAfter last read: seconds, truncated, negative once past, +Inf while there is none.
 */
export function registerCertificateMetrics(which: keyof typeof CERTIFICATE_SERIES): {
  expiresAt(ms: number | undefined): void;
  renewFailed(): void;
  rotated(ageSeconds: number): void;
} {
  const s = CERTIFICATE_SERIES[which];
  for (const name of [s.ttl, s.renewErrors, s.rotation]) if (name) registry.removeSingleMetric(name);
  let notAfter: number | undefined;
  new Gauge({
    name: s.ttl,
    help: alpha(s.ttlHelp),
    registers: r,
    collect() {
      this.set(notAfter === undefined ? Number.POSITIVE_INFINITY : Math.trunc((notAfter - Date.now()) / 1000));
    },
  });
  const renewErrors = new Counter({ name: s.renewErrors, help: alpha('Counter of certificate renewal errors.'), registers: r });
  const rotation =
    s.rotation &&
    new Histogram({
      name: s.rotation,
      help: alpha('Histogram of the number of seconds the previous certificate lived before being rotated.'),
      buckets: certificateAgeBuckets,
      registers: r,
    });
  return {
    expiresAt: (ms) => {
      notAfter = ms;
    },
    renewFailed: () => renewErrors.inc(),
    rotated: (age) => rotation?.observe(age),
  };
}

/** dra_resource_claims_in_use {driver_name}, from read() at each scrape (upstream's claimInfoCollector). */
export function registerClaimsInUse(read: () => Record<string, number>): void {
  registry.removeSingleMetric('dra_resource_claims_in_use');
  new Gauge({
    name: 'dra_resource_claims_in_use',
    help: alpha(
      'The number of ResourceClaims that are currently in use on the node, by driver name (driver_name label value) and across all drivers (special value <any> for driver_name). Note that the sum of all by-driver counts is not the total number of in-use ResourceClaims because the same ResourceClaim might use devices from different drivers. Instead, use the count for the <any> driver_name.',
    ),
    labelNames: ['driver_name'],
    registers: r,
    collect() {
      this.reset();
      for (const [driver, n] of Object.entries(read())) this.set({ driver_name: driver }, n);
    },
  });
}

/** One series of volume_manager_total_volumes (src/volumes/volume-metrics.ts's VolumeCount). */
export interface VolumeManagerCount {
  plugin_name: string;
  state: string;
  count: number;
}

/**
 * upstream's totalVolumesCollector: volume_manager_total_volumes {plugin_name, state}, from read()
 * at each scrape (the volume manager's desired and actual state of world), rebuilt each.
 */
export function registerVolumeManagerTotals(read: () => VolumeManagerCount[]): void {
  // The last volume manager built is the one shown (tests build several).
  registry.removeSingleMetric('volume_manager_total_volumes');
  new Gauge({
    name: 'volume_manager_total_volumes',
    help: alpha('Number of volumes in Volume Manager'),
    labelNames: ['plugin_name', 'state'],
    registers: r,
    collect() {
      this.reset();
      for (const c of read()) this.set({ plugin_name: c.plugin_name, state: c.state }, c.count);
    },
  });
}

/**
 * What kubelet_volume_stats_* and kubelet_container_log_filesystem_used_bytes read of a pod in the
 * Summary (src/stats/summary-types.ts PodStats, structurally this): named here, so that metrics need
 * not import stats.
 */
export interface PodStatsView {
  podRef: { name: string; namespace: string; uid: string };
  containers?: { name: string; logs?: { usedBytes?: number } }[];
  volume?: {
    pvcRef?: { name: string; namespace: string };
    capacityBytes?: number;
    availableBytes?: number;
    usedBytes?: number;
    inodes?: number;
    inodesFree?: number;
    inodesUsed?: number;
    volumeHealthStats?: { abnormal: boolean };
  }[];
}

/** One claim's figures, as the kubelet_volume_stats_* series show them. */
export interface ClaimVolumeStats {
  namespace: string;
  persistentvolumeclaim: string;
  capacityBytes: number;
  availableBytes: number;
  usedBytes: number;
  inodes: number;
  inodesFree: number;
  inodesUsed: number;
  /** Only when the volume's health is known (CSIVolumeHealth). */
  abnormal?: boolean;
}

/** Pure: upstream's volumeStatsCollector: the pods' volumes that have a claim, the first of each namespace/claim. */
export function claimVolumeStats(pods: Pick<PodStatsView, 'volume'>[]): ClaimVolumeStats[] {
  const seen = new Map<string, ClaimVolumeStats>();
  for (const v of pods.flatMap((p) => p.volume ?? [])) {
    const ref = v.pvcRef;
    if (!ref || seen.has(`${ref.namespace}/${ref.name}`)) continue;
    seen.set(`${ref.namespace}/${ref.name}`, {
      namespace: ref.namespace,
      persistentvolumeclaim: ref.name,
      capacityBytes: v.capacityBytes ?? 0,
      availableBytes: v.availableBytes ?? 0,
      usedBytes: v.usedBytes ?? 0,
      inodes: v.inodes ?? 0,
      inodesFree: v.inodesFree ?? 0,
      inodesUsed: v.inodesUsed ?? 0,
      abnormal: v.volumeHealthStats?.abnormal,
    });
  }
  return [...seen.values()];
}

/** One container's log size, as kubelet_container_log_filesystem_used_bytes shows it. */
export interface ContainerLogSize {
  uid: string;
  namespace: string;
  pod: string;
  container: string;
  usedBytes: number;
}

/** Pure: upstream's logMetricsCollector: every container whose logs' size is known. */
export function containerLogSizes(pods: Pick<PodStatsView, 'podRef' | 'containers'>[]): ContainerLogSize[] {
  return pods.flatMap((p) =>
    (p.containers ?? []).flatMap((c) =>
      c.logs?.usedBytes === undefined
        ? []
        : [{ uid: p.podRef.uid, namespace: p.podRef.namespace, pod: p.podRef.name, container: c.name, usedBytes: c.logs.usedBytes }],
    ),
  );
}

/**
 * kubelet_volume_stats_* and kubelet_container_log_filesystem_used_bytes, from the pods' stats read
 * at each scrape (upstream's volumeStatsCollector and logMetricsCollector over ListPodStats).
 */
export function registerPodStats(read: () => Promise<PodStatsView[]>): void {
  // A scrape collects all eight at once: one read serves them. No stats yet: no series, as upstream.
  let pending: Promise<PodStatsView[]> | undefined;
  const pods = () =>
    (pending ??= read()
      .catch(() => [])
      .finally(() => {
        pending = undefined;
      }));
  registry.removeSingleMetric('kubelet_container_log_filesystem_used_bytes');
  new Gauge({
    name: 'kubelet_container_log_filesystem_used_bytes',
    help: alpha("Bytes used by the container's logs on the filesystem."),
    labelNames: ['uid', 'namespace', 'pod', 'container'],
    registers: r,
    async collect() {
      const all = containerLogSizes(await pods());
      this.reset();
      for (const { usedBytes, ...labels } of all) this.set(labels, usedBytes);
    },
  });
  // The last kubelet's is shown where one process runs several (hollow nodes, tests): prom-client
  // refuses a second metric of one name.
  const gauge = (key: string, help: string, value: (s: ClaimVolumeStats) => number | undefined) => {
    registry.removeSingleMetric(`kubelet_volume_stats_${key}`);
    return new Gauge({
      name: `kubelet_volume_stats_${key}`,
      help: alpha(help),
      labelNames: ['namespace', 'persistentvolumeclaim'],
      registers: r,
      async collect() {
        const all = claimVolumeStats(await pods());
        this.reset();
        for (const s of all) {
          const v = value(s);
          if (v !== undefined) this.set({ namespace: s.namespace, persistentvolumeclaim: s.persistentvolumeclaim }, v);
        }
      },
    });
  };
  gauge('capacity_bytes', 'Capacity in bytes of the volume', (s) => s.capacityBytes);
  gauge('available_bytes', 'Number of available bytes in the volume', (s) => s.availableBytes);
  gauge('used_bytes', 'Number of used bytes in the volume', (s) => s.usedBytes);
  gauge('inodes', 'Maximum number of inodes in the volume', (s) => s.inodes);
  gauge('inodes_free', 'Number of free inodes in the volume', (s) => s.inodesFree);
  gauge('inodes_used', 'Number of used inodes in the volume', (s) => s.inodesUsed);
  gauge(
    'health_status_abnormal',
    'Abnormal volume health status. The count is either 1 or 0. 1 indicates the volume is unhealthy, 0 indicates volume is healthy',
    (s) => (s.abnormal === undefined ? undefined : Number(s.abnormal)),
  );
}

/**
 * How often nodejs_eventloop_lag_*'s histogram samples the loop's delay (perf_hooks'
 * monitorEventLoopDelay: a libuv timer that wakes the process each time). prom-client's default
 * of 10 ms wakes an idle kubelet 6,000 times a minute: 0.16 s of CPU a minute on this project's
 * 2-core machines, 0.4-0.5 s when they are busy, against 0.03 s at 100 ms (docs/benchmarks.md,
 * "The event loop's 10 ms clock"); the upstream kubelet's whole idle minute is about 0.5 s.
 * A stall of 100 ms or more still shows.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * process_* (CPU, resident memory, open files, start time: what the upstream kubelet's Go
 * collector shows) and nodejs_* (event loop delay, heap, GC: the counterpart of its go_*).
 */
export function collectProcessMetrics(): void {
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  // client_golang's process collector has these too (src/metrics/process.ts), read at each scrape.
  const network = (name: string, help: string, bytes: (n: { receiveBytes: number; transmitBytes: number }) => number) =>
    new Counter({
      name,
      help,
      registers: r,
      collect() {
        const n = processNetwork();
        this.reset();
        if (n) this.inc(bytes(n));
      },
    });
  network('process_network_receive_bytes_total', 'Number of bytes received by the process over the network.', (n) => n.receiveBytes);
  network('process_network_transmit_bytes_total', 'Number of bytes sent by the process over the network.', (n) => n.transmitBytes);
  new Gauge({
    name: 'process_virtual_memory_max_bytes',
    help: 'Maximum amount of virtual memory available in bytes.',
    registers: r,
    collect() {
      const limit = processAddressSpaceLimit();
      if (limit !== undefined) this.set(limit);
    },
  });
}
