// A pod's QoS class, by upstream's rules (ComputePodQOS): with pod-level resources
// (spec.resources) from those alone, else from its containers: Guaranteed when cpu and memory
// limits are set and the requests equal them, BestEffort when nothing is set, else Burstable.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { isSidecar } from '../podutil/podutil.ts';
import {
  aggregateContainerRequests,
  containerLimits,
  containerRequests,
  isPodLevelRequestsSet,
  podLevelResources,
  type Amounts,
} from './pod-resources.ts';

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const QOS_RESOURCES = ['cpu', 'memory'];

/** Adds the positive cpu and memory amounts of from to into (processResourceList); returns which were positive. */
function addPositive(into: Amounts, from: Amounts): Set<string> {
  const found = new Set<string>();
  for (const r of QOS_RESOURCES) {
    const v = from[r];
    if (v === undefined || v <= 0) continue;
    found.add(r);
    into[r] = (into[r] ?? 0) + v;
  }
  return found;
}

/** Upstream's ComputePodQOS (GetPodQOS without a status.qosClass), with PodLevelResources on. */
export function qosClass(pod: Pod): QOSClass {
  const requests: Amounts = {},
    limits: Amounts = {};
  let guaranteed = true;
  // Any spec.resources, even an empty one, takes the pod-level branch, as upstream.
  const level = podLevelResources(pod);
  if (level) {
    addPositive(requests, level.requests);
    const found = addPositive(limits, level.limits);
    if (Object.keys(level.limits).length && !(found.has('cpu') && found.has('memory'))) guaranteed = false;
  } else {
    for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
      addPositive(requests, containerRequests(c));
      const found = addPositive(limits, containerLimits(c));
      if (!(found.has('cpu') && found.has('memory'))) guaranteed = false;
    }
  }
  const names = Object.keys(requests);
  if (!names.length && !Object.keys(limits).length) return 'BestEffort';
  if (guaranteed && names.some((r) => limits[r] !== requests[r])) guaranteed = false;
  return guaranteed && names.length === Object.keys(limits).length ? 'Guaranteed' : 'Burstable';
}

const GUARANTEED_OOM_SCORE_ADJ = -997;
const BESTEFFORT_OOM_SCORE_ADJ = 1000;

/**
 * Upstream's GetContainerOOMScoreAdjust: node-critical and Guaranteed pods last, BestEffort
 * first, a Burstable container by the share of the node's memory it requests (a sidecar no
 * higher than the app container with the least). memoryCapacity: the node's, in bytes.
 */
export function containerOOMScoreAdj(pod: Pod, c: Container, memoryCapacity: number): number {
  if (pod.spec?.priorityClassName === 'system-node-critical') return GUARANTEED_OOM_SCORE_ADJ;
  const qos = qosClass(pod);
  if (qos === 'Guaranteed') return GUARANTEED_OOM_SCORE_ADJ;
  if (qos === 'BestEffort') return BESTEFFORT_OOM_SCORE_ADJ;
  const memReq = (x: Container) => containerRequests(x).memory ?? 0;
  // Go's int64 division truncates.
  const score = (bytes: number) => 1000 - Math.trunc((1000 * bytes) / memoryCapacity);
  // With pod-level requests, the pod's memory request not spread over its containers is shared out equally.
  const extra = isPodLevelRequestsSet(pod) ? remainingPodMemReqPerContainer(pod) : 0;
  let adj = score(memReq(c) + extra);
  const sidecar = isSidecar(c) && (pod.spec?.initContainers ?? []).some((i) => i.name === c.name);
  if (sidecar) {
    const apps = pod.spec?.containers ?? [];
    const min = apps.length ? Math.min(...apps.map(memReq)) : 0;
    adj = Math.min(adj, score(min + extra));
  }
  if (adj < 1000 + GUARANTEED_OOM_SCORE_ADJ) return 1000 + GUARANTEED_OOM_SCORE_ADJ;
  if (adj === BESTEFFORT_OOM_SCORE_ADJ) return adj - 1;
  return adj;
}

/** Upstream's remainingPodMemReqPerContainer: (pod memory request - the containers' aggregate) / number of containers. */
export function remainingPodMemReqPerContainer(pod: Pod): number {
  const podMemory = podLevelResources(pod)?.requests.memory ?? 0;
  if (!podMemory) return 0;
  const n = (pod.spec?.containers?.length ?? 0) + (pod.spec?.initContainers?.length ?? 0);
  return Math.trunc((podMemory - (aggregateContainerRequests(pod).memory ?? 0)) / n);
}
