// A pod's QoS class, by upstream's rules: Guaranteed when every container's requests
// equal its limits for cpu and memory, BestEffort when nothing is set, else Burstable.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { parseQuantity } from './quantity.ts';

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

export function qosClass(pod: Pod): QOSClass {
  const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  let anySet = false, guaranteed = true;
  for (const c of containers) {
    const limits = c.resources?.limits ?? {}, requests = { ...limits, ...(c.resources?.requests ?? {}) };
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
