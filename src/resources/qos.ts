// A pod's QoS class, by upstream's rules: Guaranteed when every container's requests
// equal its limits for cpu and memory, BestEffort when nothing is set, else Burstable.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { parseQuantity } from './quantity.ts';
import { isSidecar } from '../podutil/podutil.ts';

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

export function qosClass(pod: Pod): QOSClass {
  const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  let anySet = false,
    guaranteed = true;
  for (const c of containers) {
    const limits = c.resources?.limits ?? {},
      requests = { ...limits, ...(c.resources?.requests ?? {}) };
    for (const r of ['cpu', 'memory']) {
      const req = requests[r] === undefined ? undefined : parseQuantity(requests[r]!);
      const lim = limits[r] === undefined ? undefined : parseQuantity(limits[r]!);
      if (req || lim) anySet = true;
      if (lim === undefined || req !== lim) guaranteed = false;
    }
  }
  if (!anySet) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
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
  const memReq = (x: Container) => Math.ceil(parseQuantity(x.resources?.requests?.memory ?? 0) ?? 0);
  const score = (bytes: number) => 1000 - Math.trunc((1000 * bytes) / memoryCapacity);
  let adj = score(memReq(c));
  const sidecar = isSidecar(c) && (pod.spec?.initContainers ?? []).some((i) => i.name === c.name);
  if (sidecar) {
    const apps = pod.spec?.containers ?? [];
    const min = apps.length ? Math.min(...apps.map(memReq)) : 0;
    adj = Math.min(adj, score(min));
  }
  if (adj < 1000 + GUARANTEED_OOM_SCORE_ADJ) return 1000 + GUARANTEED_OOM_SCORE_ADJ;
  if (adj === BESTEFFORT_OOM_SCORE_ADJ) return adj - 1;
  return adj;
}
