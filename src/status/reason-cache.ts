// Why a container waits, kept beyond the sync that said so: upstream's ReasonCache
// (pkg/kubelet/reason_cache.go), which each sync's StartContainer results update (a failure
// adds its reason, a start removes it) and convertToAPIContainerStatuses reads for every
// container that should be restarted. A container no sync tries again keeps the reason its
// last start failed with: an ephemeral container whose process could not start stays Waiting
// (RunContainerError), as upstream shows it, not Terminated. Here a reason is dropped once the
// container has a newer instance than when it was given (it was started again) or runs; pure.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { PodRuntimeStatus, Waiting } from '../container/types.ts';
import { shouldContainerBeRestarted } from '../runtime/restart-policy.ts';

/** A reason, and the container's newest instance when it was given (none: it had none). */
export interface Reason {
  waiting: Waiting;
  instance?: string;
}

const newest = (rt: PodRuntimeStatus, name: string) => rt.containers.find((c) => c.name === name);

/**
 * Pure: the waiting reasons the status shows after a sync (fresh: the sync's own) and what
 * is kept for the next one (kept: what the last call returned).
 */
export function rememberReasons(
  pod: Pod,
  rt: PodRuntimeStatus,
  fresh: ReadonlyMap<string, Waiting>,
  kept: ReadonlyMap<string, Reason> = new Map(),
): { waiting: Map<string, Waiting>; kept: Map<string, Reason> } {
  const waiting = new Map(fresh);
  const next = new Map<string, Reason>();
  for (const [name, w] of fresh) next.set(name, { waiting: w, instance: newest(rt, name)?.id });
  const spec = new Map<string, Container>(
    [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? []), ...(pod.spec?.ephemeralContainers ?? [])].map((c) => [
      c.name,
      c as Container,
    ]),
  );
  for (const [name, r] of kept) {
    if (fresh.has(name)) continue;
    const c = spec.get(name);
    if (!c || newest(rt, name)?.id !== r.instance || !shouldContainerBeRestarted(c, pod, rt)) continue;
    waiting.set(name, r.waiting);
    next.set(name, r);
  }
  return { waiting, kept: next };
}
