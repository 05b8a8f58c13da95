// Pod facts the eviction manager ranks and spares by: criticality, priority and requests.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { parseQuantity } from '../resources/quantity.ts';
import { isStaticPod } from '../sources/static-file.ts';
import { isMirrorPod } from '../pods/mirror.ts';

/** scheduling.SystemCriticalPriority: system-cluster-critical's value; system-node-critical is above it. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

/**
 * upstream's kubetypes.IsCriticalPod: static and mirror pods (a static pod evicted is never
 * admitted again) and system-critical priorities. Never evicted, always admitted.
 */
export const isCriticalPod = (pod: Pod) => isStaticPod(pod) || isMirrorPod(pod) || (pod.spec?.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY;

/** corev1helpers.PodPriority: no priority is the static default, 0. */
export const podPriority = (pod: Pod) => pod.spec?.priority ?? 0;

/** The text of a container's request; limits stand in, as the apiserver's defaulting copies them. */
export const requestText = (c: Container, resource: string): string | undefined => c.resources?.requests?.[resource] ?? c.resources?.limits?.[resource];

const request = (c: Container, resource: string) => parseQuantity(requestText(c, resource) ?? '0') ?? 0;

/**
 * The pod's request for a resource (GetResourceRequestQuantity over PodRequests): the
 * containers' sum, or more while an init container runs beside the sidecars started before
 * it; plus the pod overhead when the request is not zero.
 */
export function podRequest(pod: Pod, resource: string): number {
  let sum = (pod.spec?.containers ?? []).reduce((n, c) => n + request(c, resource), 0);
  let sidecars = 0, initPeak = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    if (c.restartPolicy === 'Always') {
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
