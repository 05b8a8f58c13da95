// What upstream's housekeeping reports of the pods (kubelet_desired_pods, _active_pods,
// _mirror_pods, _working_pods, _managed_ephemeral_containers), from the pod workers' snapshot.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { PodGauges } from '../metrics/metrics.ts';
import type { PodSnapshot } from './pod-manager.ts';

// Upstream's lifecycle label values for the pod worker states (finished workers are gone).
const LIFECYCLE = { syncing: 'sync', terminating: 'terminating', terminated: 'terminated' } as const;

/** Pure. isStatic: the pod comes from a file or URL rather than the apiserver. */
export function podGauges(workers: PodSnapshot[], isStatic: (p: Pod) => boolean): PodGauges {
  const g: PodGauges = {
    desired: { regular: 0, static: 0 },
    active: { regular: 0, static: 0 },
    mirror: 0,
    working: [],
    ephemeralContainers: 0,
  };
  const working = new Map<string, number>();
  for (const w of workers) {
    if (w.state === 'finished') continue;
    const stat = isStatic(w.pod);
    const kind = stat ? 'static' : 'regular';
    if (w.desired) {
      g.desired[kind]++;
      g.ephemeralContainers += w.pod.spec?.ephemeralContainers?.length ?? 0;
    }
    // Active: admitted and not yet stopped, what admission weighs a new pod against.
    if (w.state === 'syncing') {
      g.active[kind]++;
      if (stat) g.mirror++;
    }
    const key = `${LIFECYCLE[w.state]}/${w.desired ? 'desired' : 'orphan'}/${stat ? 'true' : ''}`;
    working.set(key, (working.get(key) ?? 0) + 1);
  }
  // Every label set upstream reports, zeros included; runtime_only pods are killed by housekeeping without a worker.
  for (const lifecycle of Object.values(LIFECYCLE)) {
    for (const config of ['desired', 'orphan'])
      for (const stat of ['', 'true'])
        g.working.push({ lifecycle, config, static: stat, count: working.get(`${lifecycle}/${config}/${stat}`) ?? 0 });
    g.working.push({ lifecycle, config: 'runtime_only', static: 'unknown', count: 0 });
  }
  return g;
}
