// Pod facts the eviction manager ranks and spares by: criticality, priority and requests.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { resourceRequest } from '../resources/pod-resources.ts';

/** corev1helpers.PodPriority: no priority is the static default, 0. */
export const podPriority = (pod: Pod) => pod.spec?.priority ?? 0;

/** The text of a container's request; limits stand in, as the apiserver's defaulting copies them. */
export const requestText = (c: Container, resource: string): string | undefined =>
  c.resources?.requests?.[resource] ?? c.resources?.limits?.[resource];

/**
 * The pod's request for a resource (upstream's GetResourceRequestQuantity over PodRequests):
 * the containers' sum, or more while an init container runs beside the sidecars started
 * before it; with pod-level resources the pod-level request alone (0 for a resource not set
 * there); plus the pod overhead when the request is not zero. cpu in millicores, else bytes.
 */
export const podRequest = (pod: Pod, resource: string): number => resourceRequest(pod, resource);
