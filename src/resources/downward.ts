// The downward API's values, for env vars (runtime/env.ts) and downwardAPI volumes
// (volumes/payload.ts) alike: upstream's fieldpath.ExtractFieldPathAsString,
// podFieldSelectorRuntimeValue and ExtractContainerResourceValue with the defaulted limits.
import type { Container, ObjectFieldSelector, Pod, ResourceFieldSelector } from 'kubernetes-types/core/v1.js';
import { parseQuantity } from './quantity.ts';
import { isSupportedPodLevelResource, podSpecResources } from './pod-resources.ts';
import { goQuote } from '../log/go-quote.ts';

// --- fieldRef: podFieldSelectorRuntimeValue, fieldpath.ExtractFieldPathAsString --------

export type Value = { value: string } | { error: string };

/** The node and pod addresses a fieldRef may name. */
export interface Addresses {
  podIPs: string[];
  hostIPs: string[];
}

export function fieldRefValue(fs: ObjectFieldSelector, pod: Pod, inputs: Addresses): Value {
  const version = fs.apiVersion ?? 'v1';
  if (version !== 'v1') return { error: `unsupported pod version: ${version}` };
  const path = fs.fieldPath;
  const sub = /^(.+?)\['(.*)'\]$/.exec(path);
  if (sub) {
    const [, field, key] = sub;
    if (field === 'metadata.labels') return { value: pod.metadata?.labels?.[key!] ?? '' };
    if (field === 'metadata.annotations') return { value: pod.metadata?.annotations?.[key!] ?? '' };
    return { error: `field label does not support subscript: ${path}` };
  }
  switch (path) {
    case 'metadata.name':
      return { value: pod.metadata?.name ?? '' };
    case 'metadata.namespace':
      return { value: pod.metadata?.namespace ?? '' };
    case 'metadata.uid':
      return { value: pod.metadata?.uid ?? '' };
    case 'metadata.labels':
      return { value: formatMap(pod.metadata?.labels) };
    case 'metadata.annotations':
      return { value: formatMap(pod.metadata?.annotations) };
    case 'spec.nodeName':
    case 'spec.host':
      return { value: pod.spec?.nodeName ?? '' };
    case 'spec.serviceAccountName':
      return { value: pod.spec?.serviceAccountName ?? '' };
    case 'status.podIP':
      return { value: inputs.podIPs[0] ?? '' };
    case 'status.podIPs':
      return { value: inputs.podIPs.join(',') };
    case 'status.hostIP':
      return inputs.hostIPs.length ? { value: inputs.hostIPs[0]! } : { error: 'failed to find node object, expected a node' };
    case 'status.hostIPs':
      return inputs.hostIPs.length ? { value: inputs.hostIPs.join(',') } : { error: 'failed to find node object, expected a node' };
    case 'spec.restartPolicy':
    case 'spec.schedulerName':
    case 'status.phase':
      return { error: `unsupported fieldPath: ${path}` };
  }
  return { error: `field label not supported: ${path}` };
}

/** key="value" lines, keys sorted, values in Go's %q (fieldpath.FormatMap). */
export const formatMap = (m: Record<string, string> | undefined) =>
  Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${goQuote(m![k]!)}`)
    .join('\n');

// --- resourceFieldRef: defaultPodLimitsForDownwardAPI, ExtractContainerResourceValue ---

const DEFAULTED_LIMITS = ['cpu', 'memory', 'ephemeral-storage'] as const;

/**
 * Upstream's defaultPodLimitsForDownwardAPI and MergeContainerResourceLimits: a limit the
 * container leaves unset (or zero) reads as the pod-level limit when there is a non-zero one
 * (cpu, memory: the pod-level resources among these), else as the node's allocatable; only a
 * resource the node reports is defaulted at all.
 */
export function defaultedLimits(pod: Pod, c: Container, allocatable: Record<string, string>): Record<string, string> {
  const limits: Record<string, string> = { ...c.resources?.limits };
  const podLimits = podSpecResources(pod)?.limits ?? {};
  for (const r of DEFAULTED_LIMITS) {
    const set = limits[r] !== undefined && (parseQuantity(limits[r]) ?? 0) !== 0;
    if (set) continue;
    const podLimit =
      isSupportedPodLevelResource(r) && podLimits[r] !== undefined && (parseQuantity(podLimits[r]) ?? 0) !== 0 ? podLimits[r] : undefined;
    const fallback = allocatable[r] === undefined ? undefined : (podLimit ?? allocatable[r]);
    if (fallback !== undefined) limits[r] = fallback;
  }
  return limits;
}

// Quantities are decimals: round away float noise before taking the ceiling as Go's Quantity does.
const ceil = (x: number) => Math.ceil(Math.round(x * 1e6) / 1e6);

/** c: the container asking (env vars); a volume names its container in containerName. */
export function resourceFieldRefValue(
  fs: ResourceFieldSelector,
  pod: Pod,
  c: Container | undefined,
  allocatable: Record<string, string> | undefined,
): Value {
  if (!allocatable) return { error: 'failed to find node object, expected a node' };
  let target: Container | undefined = c;
  // Upstream defaults the limits of this container and of the pod's app containers, not of
  // another init container named by containerName.
  let defaulted = true;
  if (fs.containerName) {
    target = pod.spec?.containers?.find((x) => x.name === fs.containerName);
    if (!target) {
      target = pod.spec?.initContainers?.find((x) => x.name === fs.containerName);
      defaulted = false;
    }
    if (!target) return { error: `container ${fs.containerName} not found` };
  }
  if (!target) return { error: 'container  not found' };
  const limits = defaulted ? defaultedLimits(pod, target, allocatable) : (target.resources?.limits ?? {});
  const requests = target.resources?.requests ?? {};
  const d = fs.divisor === undefined ? 0 : (parseQuantity(fs.divisor) ?? 0);
  const divisor = d === 0 ? 1 : d;
  const m = /^(limits|requests)\.(.+)$/.exec(fs.resource);
  const resource = m?.[2];
  if (!m || !(resource === 'cpu' || resource === 'memory' || resource === 'ephemeral-storage' || resource!.startsWith('hugepages-'))) {
    return { error: `unsupported container resource : ${fs.resource}` };
  }
  const q = parseQuantity((m[1] === 'limits' ? limits : requests)[resource!] ?? '0') ?? 0;
  // CPU in millicores against the divisor's millicores; the rest in whole units.
  const value = resource === 'cpu' ? Math.ceil(ceil(q * 1000) / ceil(divisor * 1000)) : Math.ceil(ceil(q) / ceil(divisor));
  return { value: String(value) };
}
