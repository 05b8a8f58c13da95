// The prober's metrics, served on /metrics/probes from a registry of their own, as
// upstream does (pkg/kubelet/prober/prober_manager.go). The prober calls observeProbe
// after each probe and forgetProbe when it stops probing a container.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export const probeRegistry = new Registry();

// component-base prefixes help texts with the metric's stability level.
const results = new Counter({
  name: 'prober_probe_total',
  help: '[BETA] Cumulative number of a liveness, readiness or startup probe for a container by result.',
  labelNames: ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid'],
  registers: [probeRegistry],
});
const duration = new Histogram({
  name: 'prober_probe_duration_seconds',
  help: '[ALPHA] Duration in seconds for a probe response.',
  labelNames: ['probe_type', 'container', 'pod', 'namespace'],
  registers: [probeRegistry],
  // Prometheus' default buckets, as upstream's histogram uses.
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
});
new Gauge({
  name: 'process_start_time_seconds',
  help: '[ALPHA] Start time of the process since unix epoch in seconds.',
  registers: [probeRegistry],
}).set(Math.floor((Date.now() - process.uptime() * 1000) / 1000));

export type ProbeType = 'Liveness' | 'Readiness' | 'Startup';
/** Upstream's result label values. */
export type ProbeResult = 'successful' | 'failed' | 'unknown';

export interface ProbeTarget {
  probeType: ProbeType;
  container: string;
  pod: string;
  namespace: string;
  podUID: string;
}

const resultLabels = (t: ProbeTarget, result: ProbeResult) => ({
  probe_type: t.probeType,
  result,
  container: t.container,
  pod: t.pod,
  namespace: t.namespace,
  pod_uid: t.podUID,
});
const durationLabels = (t: ProbeTarget) => ({ probe_type: t.probeType, container: t.container, pod: t.pod, namespace: t.namespace });

/**
 * One probe done (not one that failed to run: upstream counts those nowhere). Counts its
 * result and times it, except failures, which upstream's worker does not time.
 */
export function observeProbe(t: ProbeTarget, result: ProbeResult, seconds: number): void {
  results.inc(resultLabels(t, result));
  if (result !== 'failed') duration.observe(durationLabels(t), seconds);
}

/** The container is no longer probed (removed, or its pod deleted): its series go, as upstream's worker stop does. */
export function forgetProbe(t: ProbeTarget): void {
  for (const r of ['successful', 'failed', 'unknown'] as const) results.remove(resultLabels(t, r));
  duration.remove(durationLabels(t));
}
