// Per-container checks computePodActions and computeInitContainerActions share (upstream's
// kuberuntime_manager.go helpers): whether an instance is alive, runs once, failed a probe,
// has started (a sidecar), and what an in-place resize asks of it. Pure.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { ContainerState } from '../container/types.ts';
import { containerResize, effectiveResources } from '../resize/decide.ts';
import { podSpecResources } from '../resources/pod-resources.ts';
import type { ActualOf, HealthOf, PodActions, ProbeHealth } from './pod-actions.ts';

/**
 * Upstream's runOnce in computePodActions: a container that succeeded does not run again in a new
 * sandbox when its policy (its own, else the pod's) is OnFailure.
 */
export const runOnce = (pod: Pod, c: Container) => (c.restartPolicy ?? pod.spec?.restartPolicy) === 'OnFailure';

export const alive = (s: ContainerState | undefined) => s?.phase === 'running' || s?.phase === 'unknown';

/**
 * In-place resize of a running container (upstream's computePodResizeAction): an update of its
 * cgroup, or a kill when its resizePolicy asks for a restart (the caller starts it again). A
 * container without its own limits gets the pod's (spec.resources), so a pod-level resize
 * reaches it too.
 */
export function resize(pod: Pod, c: Container, s: ContainerState, actions: PodActions, actual?: ActualOf): 'none' | 'update' | 'restart' {
  const now = s.phase === 'running' ? actual?.(s) : undefined;
  if (!now) return 'none';
  const podLevel = podSpecResources(pod);
  const r = containerResize(c, now, podLevel);
  if (r.action === 'none') return 'none';
  if (r.action === 'restart') {
    const message = `Container ${c.name} resize requires restart`;
    actions.containersToKill.push({ id: s.id, name: c.name, reason: message, message, resize: true });
    return 'restart';
  }
  actions.containersToUpdate.push({ id: s.id, name: c.name, resources: effectiveResources(c.resources, podLevel), changed: r.changed });
  return 'update';
}

/** Which probe a running container failed, if any (liveness first, as upstream). */
export function failedProbe(c: Container, s: ContainerState, health?: HealthOf): 'Liveness' | 'Startup' | undefined {
  const h = health?.(s.id);
  if (c.livenessProbe && h?.liveness === 'Failure') return 'Liveness';
  if (c.startupProbe && h?.startup === 'Failure') return 'Startup';
  return undefined;
}

/** A sidecar's startup state: Success without a startup probe or without a prober; undefined while it has not run. */
export function sidecarStartup(c: Container, s: ContainerState, health?: HealthOf): ProbeHealth['startup'] {
  if (!c.startupProbe || !health) return 'Success';
  return health(s.id)?.startup;
}

/** The probe-level terminationGracePeriodSeconds, which upstream uses when that probe kills. */
export function probeGrace(c: Container, probe: 'Liveness' | 'Startup'): { gracePeriodSeconds?: number } {
  const g = (probe === 'Liveness' ? c.livenessProbe : c.startupProbe)?.terminationGracePeriodSeconds;
  return g !== undefined && g !== null ? { gracePeriodSeconds: g } : {};
}
