// Pod facts the eviction manager ranks and spares by: criticality, priority and requests.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { parseQuantity } from '../resources/quantity.ts';
import { isSidecar } from '../podutil/podutil.ts';

/** corev1helpers.PodPriority: no priority is the static default, 0. */
export const podPriority = (pod: Pod) => pod.spec?.priority ?? 0;

/** The text of a container's request; limits stand in, as the apiserver's defaulting copies them. */
export const requestText = (c: Container, resource: string): string | undefined =>
  c.resources?.requests?.[resource] ?? c.resources?.limits?.[resource];

const request = (c: Container, resource: string) => parseQuantity(requestText(c, resource) ?? '0') ?? 0;

/**
 * The pod's request for a resource (GetResourceRequestQuantity over PodRequests): the
 * containers' sum, or more while an init container runs beside the sidecars started before
 * it; plus the pod overhead when the request is not zero.
 */
export function podRequest(pod: Pod, resource: string): number {
  let sum = (pod.spec?.containers ?? []).reduce((n, c) => n + request(c, resource), 0);
  let sidecars = 0,
    initPeak = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    if (isSidecar(c)) {
      // A sidecar keeps running beside everything after it.
      sum += request(c, resource);
      sidecars += request(c, resource);
      initPeak = Math.max(initPeak, sidecars);
    } else {
      initPeak = Math.max(initPeak, request(c, resource) + sidecars);
    }
  }
  const total = Math.max(sum, initPeak);
  const overhead = pod.spec?.overhead?.[resource];
  return total > 0 && overhead !== undefined ? total + (parseQuantity(overhead) ?? 0) : total;
}
