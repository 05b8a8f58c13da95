// What a container's CRI labels and annotations say of its pod and spec when the pod itself is
// no longer known (deleted while the kubelet was down): upstream's restoreSpecsFromContainerLabels,
// from what pod-config.ts wrote at CreateContainer (newContainerLabels, newContainerAnnotations).
// Pure.
import type { Container, LifecycleHandler, Pod } from 'kubernetes-types/core/v1.js';
import { labels as keys } from '../container/types.ts';

const json = <T>(text: string | undefined): T | undefined => {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined; // upstream logs and goes on without it
  }
};
const int = (text: string | undefined) => (text !== undefined && /^-?\d+$/.test(text) ? Number(text) : undefined);

/** The pod and container as far as the runtime remembers them: names, grace periods, the preStop hook and ports. */
export function restoreSpecs(labels: Record<string, string>, annotations: Record<string, string>): { pod: Pod; container: Container } {
  const preStop = json<LifecycleHandler>(annotations[keys.preStopHandler]);
  const ports = json<Container['ports']>(annotations[keys.ports]);
  const deletionGrace = int(annotations[keys.deletionGracePeriod]);
  const grace = int(annotations[keys.terminationGracePeriod]);
  return {
    pod: {
      metadata: {
        name: labels[keys.podName],
        namespace: labels[keys.podNamespace],
        uid: labels[keys.podUID],
        ...(deletionGrace !== undefined ? { deletionGracePeriodSeconds: deletionGrace } : {}),
      },
      spec: { containers: [], ...(grace !== undefined ? { terminationGracePeriodSeconds: grace } : {}) },
    },
    container: {
      name: labels[keys.containerName] ?? '',
      ...(preStop ? { lifecycle: { preStop } } : {}),
      ...(ports ? { ports } : {}),
    },
  };
}
