// The order in which a pod's containers stop (upstream's terminationOrdering,
// kuberuntime_termination_order.go): every container is stopped at once and runs its preStop
// hook at once, but a sidecar is sent its signal only after the app containers and the
// sidecars started after it have exited (or its grace period ran out), so that sidecars serve
// the app to the end and stop in the reverse of their start order. Pure.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { isSidecar } from '../podutil/podutil.ts';

/** Whom each container waits for before its stop signal: none for app containers. */
export function terminationPrereqs(pod: Pod): Map<string, string[]> {
  const apps = (pod.spec?.containers ?? []).map((c) => c.name);
  const out = new Map<string, string[]>(apps.map((n) => [n, []]));
  let later: string | undefined;
  for (const c of [...(pod.spec?.initContainers ?? [])].reverse()) {
    if (!isSidecar(c)) continue;
    out.set(c.name, later ? [...apps, later] : [...apps]);
    later = c.name;
  }
  return out;
}
