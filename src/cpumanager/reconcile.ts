// What the CPU manager's reconcile loop does each round, as upstream's removeStaleState and
// reconcileState decide it: drop the assignments of containers no active pod has, then give
// every running container of an active pod its cpuset (its own CPUs, else the shared pool)
// when it differs from the one last applied. Pure.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { CPUSet } from './cpuset.ts';
import { type CPUState, cpusOrDefault } from './static-policy.ts';

/** A running container as the runtime lists it (CRI labels). */
export interface RunningContainer {
  id: string;
  podUID: string;
  name: string;
}

/** pod UID -> its init and app containers' names (upstream's activeContainers). */
export function activeContainers(pods: Pod[]): Map<string, Set<string>> {
  return new Map(
    pods.map((p) => [p.metadata!.uid!, new Set([...(p.spec?.initContainers ?? []), ...(p.spec?.containers ?? [])].map((c) => c.name))]),
  );
}

/** removeStaleState: the assignments of containers not in an active pod, as [pod UID, container name]. */
export function staleAssignments(s: CPUState, active: Map<string, Set<string>>): [string, string][] {
  const out: [string, string][] = [];
  for (const [pod, cs] of s.assignments) for (const name of cs.keys()) if (!active.get(pod)?.has(name)) out.push([pod, name]);
  return out;
}

export interface CPUSetUpdate extends RunningContainer {
  cpus: CPUSet;
}

/**
 * reconcileState: the running containers of active pods whose cpuset is not the one last
 * applied (applied: container id -> cpuset text). An empty cpuset (the none policy) is left alone.
 */
export function cpusetUpdates(
  s: CPUState,
  running: RunningContainer[],
  active: Map<string, Set<string>>,
  applied: ReadonlyMap<string, string>,
): CPUSetUpdate[] {
  const out: CPUSetUpdate[] = [];
  for (const c of running) {
    if (!active.get(c.podUID)?.has(c.name)) continue;
    const cpus = cpusOrDefault(s, c.podUID, c.name);
    if (cpus.isEmpty() || applied.get(c.id) === cpus.toString()) continue;
    out.push({ ...c, cpus });
  }
  return out;
}
