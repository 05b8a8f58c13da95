// The kubelet's Prometheus metrics, under upstream's names so existing dashboards and
// alerts work unchanged.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();

const buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const metrics = {
  nodeName: new Gauge({ name: 'kubelet_node_name', help: "The node's name. The count is always 1.", labelNames: ['node'], registers: [registry] }),
  runningPods: new Gauge({ name: 'kubelet_running_pods', help: 'Number of pods that have a running pod sandbox', registers: [registry] }),
  runningContainers: new Gauge({ name: 'kubelet_running_containers', help: 'Number of containers currently running', labelNames: ['container_state'], registers: [registry] }),
  podWorkerDuration: new Histogram({ name: 'kubelet_pod_worker_duration_seconds', help: 'Duration in seconds to sync a single pod.', labelNames: ['operation'], buckets, registers: [registry] }),
  plegRelistDuration: new Histogram({ name: 'kubelet_pleg_relist_duration_seconds', help: 'Duration in seconds for relisting pods in PLEG.', buckets, registers: [registry] }),
  plegRelistInterval: new Histogram({ name: 'kubelet_pleg_relist_interval_seconds', help: 'Interval in seconds between relisting in PLEG.', buckets: [0.5, 1, 1.5, 2, 5, 10, 30], registers: [registry] }),
  plegLastSeen: new Gauge({ name: 'kubelet_pleg_last_seen_seconds', help: 'Timestamp in seconds when PLEG was last seen active.', registers: [registry] }),
  runtimeOperations: new Counter({ name: 'kubelet_runtime_operations_total', help: 'Cumulative number of runtime operations by operation type.', labelNames: ['operation_type'], registers: [registry] }),
  runtimeOperationsDuration: new Histogram({ name: 'kubelet_runtime_operations_duration_seconds', help: 'Duration in seconds of runtime operations.', labelNames: ['operation_type'], buckets, registers: [registry] }),
  runtimeOperationsErrors: new Counter({ name: 'kubelet_runtime_operations_errors_total', help: 'Cumulative number of runtime operation errors by operation type.', labelNames: ['operation_type'], registers: [registry] }),
  eventedPlegConnectionSuccess: new Counter({ name: 'kubelet_evented_pleg_connection_success_count', help: 'The number of times the event stream from the runtime was (re)established.', registers: [registry] }),
  eventedPlegConnectionError: new Counter({ name: 'kubelet_evented_pleg_connection_error_count', help: 'The number of errors on the event stream from the runtime.', registers: [registry] }),
  podStatusPatches: new Counter({ name: 'kubelet_ts_pod_status_patches_total', help: 'Pod status patches sent to the apiserver (sent only on change).', registers: [registry] }),
  eventsDropped: new Counter({ name: 'kubelet_ts_events_dropped_total', help: 'Kubernetes Events dropped because the send queue was full.', registers: [registry] }),
  // Housekeeping and container garbage collection (src/gc).
  orphanedRuntimePods: new Counter({ name: 'kubelet_orphaned_runtime_pods_total', help: 'Pods found in the container runtime that no pod worker knew of (typically force-deleted while the kubelet was down), which housekeeping then killed and removed.', registers: [registry] }),
  housekeepingDuration: new Histogram({ name: 'kubelet_ts_housekeeping_duration_seconds', help: 'Duration in seconds of a pass of housekeeping (every 2 s) or of container garbage collection (every minute).', labelNames: ['loop'], buckets, registers: [registry] }),
  housekeepingErrors: new Counter({ name: 'kubelet_ts_housekeeping_errors_total', help: 'Passes of housekeeping or container garbage collection that failed.', labelNames: ['loop'], registers: [registry] }),
  // Upstream's eviction counter, and ours for the eviction manager and image GC loops.
  evictions: new Counter({ name: 'kubelet_evictions', help: 'Cumulative number of pod evictions by eviction signal.', labelNames: ['eviction_signal'], registers: [registry] }),
  evictionRoundDuration: new Histogram({ name: 'kubelet_ts_eviction_round_duration_seconds', help: 'Duration of eviction manager rounds (stats, decision, reclaim, eviction).', buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: [registry] }),
  evictionErrors: new Counter({ name: 'kubelet_ts_eviction_errors_total', help: 'Eviction manager rounds that failed.', registers: [registry] }),
  imagesGarbageCollected: new Counter({ name: 'kubelet_ts_images_garbage_collected_total', help: 'Unused images removed by image garbage collection.', registers: [registry] }),
  imageGCErrors: new Counter({ name: 'kubelet_ts_image_gc_errors_total', help: 'Image garbage collection passes that failed.', registers: [registry] }),
  garbageCollected: new Counter({ name: 'kubelet_ts_garbage_collected_total', help: 'Containers, sandboxes, pod directories and pod log directories removed by housekeeping and garbage collection.', labelNames: ['kind'], registers: [registry] }),
  // Container log rotation (src/logrotate).
  containerLogRotations: new Counter({ name: 'kubelet_ts_container_log_rotations_total', help: 'Container log rotations by result: rotated, error (one container failed), list_error (a whole pass failed).', labelNames: ['result'], registers: [registry] }),
};

/** Feeds kubelet_runtime_operations_* from the CRI client's observer hook. */
export function observeRuntimeOperation(operation: string, seconds: number, error?: unknown): void {
  metrics.runtimeOperations.inc({ operation_type: operation });
  metrics.runtimeOperationsDuration.observe({ operation_type: operation }, seconds);
  if (error) metrics.runtimeOperationsErrors.inc({ operation_type: operation });
}
