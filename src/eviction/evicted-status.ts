// What an evicted pod is told (upstream's evictionMessage and evictPod): the reason
// "Evicted", a message naming the starved resource and the containers using more than
// they asked for, the DisruptionTarget condition, and the grace period it gets.
import type { Pod, PodCondition } from 'kubernetes-types/core/v1.js';
import { parseQuantity } from '../resources/quantity.ts';
import { canonicalQuantity, formatQuantity } from './format.ts';
import type { Observations } from './observations.ts';
import { requestText } from './pods.ts';
import type { Candidate } from './ranking.ts';
import { isHard, thresholdQuantity } from './thresholds.ts';
import { SIGNAL_RESOURCE, type ReclaimResource, type Signal, type Threshold } from './types.ts';
import { isCriticalPod } from '../podutil/podutil.ts';
import { isPodLevelResourcesSet, podLevelResources, podSpecResources } from '../resources/pod-resources.ts';

export const EVICTED_REASON = 'Evicted';
/** How long a pod gets to stop on a hard threshold (upstream's immediateEvictionGracePeriodSeconds). */
export const IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS = 1;

/** The keys upstream puts on the Evicted event's annotations. */
export const OFFENDING_CONTAINERS_KEY = 'offending_containers';
export const OFFENDING_CONTAINERS_USAGE_KEY = 'offending_containers_usage';
export const STARVED_RESOURCE_KEY = 'starved_resource';
export const OFFENDING_POD_KEY = 'offending_pod';
export const OFFENDING_POD_USAGE_KEY = 'offending_pod_usage';

/** spec.resources.requests.memory as written (the apiserver defaults it), else as defaulting would make it. */
function podLevelMemoryRequest(pod: Pod): string | undefined {
  const text = podSpecResources(pod)?.requests?.memory;
  if (text !== undefined) return canonicalQuantity(text) ?? text;
  const bytes = podLevelResources(pod)?.requests.memory;
  return bytes === undefined ? undefined : formatQuantity(bytes, 'BinarySI');
}

/** The DisruptionTarget condition; observedGeneration is newer than kubernetes-types' PodCondition. */
export type DisruptionCondition = PodCondition & { observedGeneration?: number };

export interface Eviction {
  pod: Pod;
  /** Overrides the pod's own terminationGracePeriodSeconds. */
  gracePeriodSeconds: number;
  reason: typeof EVICTED_REASON;
  message: string;
  /** For the Warning event "Evicted" on the pod. */
  annotations: Record<string, string>;
  /** Set for pressure evictions; absent for local storage limit evictions, as upstream. */
  condition?: DisruptionCondition;
  /** The signal (or local storage limit) behind it, for the evictions metric's label. */
  signal: Signal | 'ephemeralcontainerfs.limit' | 'ephemeralpodfs.limit' | 'emptydirfs.limit';
}

/** Bytes print in binary form; inodes and pids, being counts, in decimal. */
const printAvailable = (resource: ReclaimResource, n: number) =>
  formatQuantity(n, resource === 'inodes' || resource === 'pids' ? 'DecimalSI' : 'BinarySI');

/** Pure: the message and event annotations for evicting a pod to reclaim a resource. */
export function evictionMessage(
  resource: ReclaimResource,
  candidate: Candidate,
  thresholds: Threshold[],
  observations: Observations,
): { message: string; annotations: Record<string, string> } {
  let message = `The node was low on resource: ${resource}. `;
  // The first threshold on this resource with an observation: the line and what was left.
  for (const t of thresholds) {
    const o = observations[t.signal];
    if (SIGNAL_RESOURCE[t.signal] !== resource || !o) continue;
    // A configured amount prints as configured; a percentage as the bytes it came to.
    const line =
      'quantity' in t.value
        ? formatQuantity(t.value.quantity, t.value.format)
        : formatQuantity(thresholdQuantity(t.value, o.capacity), 'BinarySI');
    message += `Threshold quantity: ${line}, available: ${printAvailable(resource, o.available)}. `;
    break;
  }
  const { pod, stats } = candidate;
  if (!stats) return { message, annotations: {} };
  // Pod-level resources: the pod's memory use and pod-level request come first, whether or not above it, as upstream.
  const podAnnotations: Record<string, string> = {};
  const podMemoryRequest = resource === 'memory' && isPodLevelResourcesSet(pod) ? podLevelMemoryRequest(pod) : undefined;
  if (podMemoryRequest !== undefined && stats.memory) {
    const used = formatQuantity(stats.memory.workingSetBytes ?? 0, 'BinarySI');
    message += `Pod ${pod.metadata?.name} was using ${used}, request is ${podMemoryRequest}, has larger consumption of ${resource}. `;
    podAnnotations[OFFENDING_POD_KEY] = pod.metadata?.name ?? '';
    podAnnotations[OFFENDING_POD_USAGE_KEY] = used;
  }
  // Ephemeral containers cannot state requests, so they are never named.
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  const names: string[] = [],
    usages: string[] = [];
  for (const cs of stats.containers) {
    const c = containers.find((x) => x.name === cs.name);
    if (!c) continue;
    let usage: number | undefined;
    if (resource === 'ephemeral-storage' && cs.rootfs?.usedBytes !== undefined && cs.logs?.usedBytes !== undefined)
      usage = cs.rootfs.usedBytes + cs.logs.usedBytes;
    if (resource === 'memory' && cs.memory?.workingSetBytes !== undefined) usage = cs.memory.workingSetBytes;
    // No request is a zero one, so any use is larger.
    const req = requestText(c, resource) ?? '0';
    if (usage === undefined || usage <= (parseQuantity(req) ?? 0)) continue;
    const used = formatQuantity(usage, 'BinarySI');
    message += `Container ${c.name} was using ${used}, request is ${canonicalQuantity(req) ?? req}, has larger consumption of ${resource}. `;
    names.push(c.name);
    usages.push(used);
  }
  return {
    message,
    annotations: {
      ...podAnnotations,
      [OFFENDING_CONTAINERS_KEY]: names.join(','),
      [OFFENDING_CONTAINERS_USAGE_KEY]: usages.join(','),
      [STARVED_RESOURCE_KEY]: resource,
    },
  };
}

/**
 * Pure: the grace period for an eviction. Hard thresholds allow 1s; soft ones
 * evictionMaxPodGracePeriod, or the pod's own terminationGracePeriodSeconds when shorter.
 */
export function evictionGracePeriodSeconds(threshold: Threshold, pod: Pod, maxPodGracePeriodSeconds: number): number {
  if (isHard(threshold)) return IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS;
  const own = pod.spec?.terminationGracePeriodSeconds;
  return own === undefined ? maxPodGracePeriodSeconds : Math.min(maxPodGracePeriodSeconds, own);
}

/** Pure: the DisruptionTarget condition an evicted pod carries, so controllers see why it went. */
export function disruptionCondition(pod: Pod, message: string): DisruptionCondition {
  const c: DisruptionCondition = { type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message };
  return pod.metadata?.generation === undefined ? c : { ...c, observedGeneration: pod.metadata.generation };
}

export interface ChooseInput {
  /** What evaluate() returned this round. */
  threshold: Threshold;
  resource: ReclaimResource;
  thresholds: Threshold[];
  observations: Observations;
  /** evictionMaxPodGracePeriod (upstream default 0). */
  maxPodGracePeriodSeconds: number;
}

/**
 * Pure: the one pod to evict this round: the first in rank order that is not critical
 * (static, mirror or system-critical pods are never evicted here). Upstream evicts at most
 * one pod a round and then waits for it to be cleaned up before looking again.
 */
export function chooseEviction(ranked: Candidate[], input: ChooseInput): Eviction | undefined {
  const victim = ranked.find((c) => !isCriticalPod(c.pod));
  if (!victim) return undefined;
  const { message, annotations } = evictionMessage(input.resource, victim, input.thresholds, input.observations);
  return {
    pod: victim.pod,
    gracePeriodSeconds: evictionGracePeriodSeconds(input.threshold, victim.pod, input.maxPodGracePeriodSeconds),
    reason: EVICTED_REASON,
    message,
    annotations,
    condition: disruptionCondition(victim.pod, message),
    signal: input.threshold.signal,
  };
}
