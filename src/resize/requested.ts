// The resizes a pod update asks for, container by container: upstream's recordResizeOperations
// (kubelet.go HandlePodUpdates), which counts them in kubelet_container_requested_resizes_total
// before the allocation decides anything.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { parseQuantity } from '../resources/quantity.ts';
import { isSidecar } from '../podutil/podutil.ts';

export interface RequestedResize {
  resource: 'cpu' | 'memory';
  requirement: 'requests' | 'limits';
  operation: 'add' | 'remove' | 'increase' | 'decrease';
}

/** Upstream's resizeOperationForResources: an absent quantity counts as zero. */
function operation(now: string | undefined, before: string | undefined): RequestedResize['operation'] | undefined {
  const n = parseQuantity(now ?? '0') ?? 0,
    b = parseQuantity(before ?? '0') ?? 0;
  if (n === 0 && b !== 0) return 'remove';
  if (b === 0 && n !== 0) return 'add';
  if (n < b) return 'decrease';
  if (n > b) return 'increase';
  return undefined;
}

/**
 * Pure: each resizable container's changed cpu and memory requests and limits, in upstream's
 * order (memory requests, memory limits, cpu requests, cpu limits). Resizable: the regular
 * containers, and the init containers with InPlacePodVerticalScalingInitContainers (else only
 * the sidecars), as upstream's IsResizableContainer.
 */
export function requestedResizes(before: Pod, now: Pod, initContainers: boolean): RequestedResize[] {
  const resizable = (p: Pod): [Container, string][] => [
    ...(p.spec?.initContainers ?? []).filter((c) => initContainers || isSidecar(c)).map((c): [Container, string] => [c, 'init']),
    ...(p.spec?.containers ?? []).map((c): [Container, string] => [c, 'app']),
  ];
  const current = new Map(resizable(now).map(([c, kind]) => [`${kind}/${c.name}`, c]));
  const out: RequestedResize[] = [];
  for (const [old, kind] of resizable(before)) {
    const c = current.get(`${kind}/${old.name}`);
    if (!c) continue;
    for (const [resource, requirement] of [
      ['memory', 'requests'],
      ['memory', 'limits'],
      ['cpu', 'requests'],
      ['cpu', 'limits'],
    ] as const) {
      const op = operation(c.resources?.[requirement]?.[resource], old.resources?.[requirement]?.[resource]);
      if (op) out.push({ resource, requirement, operation: op });
    }
  }
  return out;
}
