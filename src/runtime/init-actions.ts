// Init container actions, as upstream's computeInitContainerActions (kuberuntime_manager.go):
// part of computePodActions (actions.ts), kept apart for its size. Pure.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { latest, type PodRuntimeStatus } from '../container/types.ts';
import { isSidecar } from '../podutil/podutil.ts';
import type { ActualOf, HealthOf, PodActions, Start } from './pod-actions.ts';
import { alive, probeGrace, resize, sidecarStartup } from './container-checks.ts';
import { hashChanged } from './hash.ts';
import { shouldContainerBeRestarted } from './restart-policy.ts';

/**
 * Init container actions (upstream's computeInitContainerActions): regular init containers
 * run one at a time, each to success; a sidecar counts as done once it runs and is restarted
 * whenever it stops. Returns whether the pod is initialized.
 */
export function initContainerActions(
  pod: Pod,
  status: PodRuntimeStatus,
  actions: PodActions,
  health?: HealthOf,
  actual?: ActualOf,
): boolean {
  const inits = pod.spec?.initContainers ?? [];
  if (!inits.length) return true;
  // An app container that was created or runs means initialization happened in this sandbox,
  // even if the init containers were garbage collected since.
  let initialized = (pod.spec?.containers ?? []).some((c) => {
    const s = latest(status, c.name);
    return s?.phase === 'created' || alive(s);
  });
  let previousDone = initialized;
  const starts: Start[] = [];
  const podRestartsOnFailure = (pod.spec?.restartPolicy ?? 'Always') !== 'Never';
  // Backwards: the last init container that ran says how far initialization got.
  for (let i = inits.length - 1; i >= 0; i--) {
    const c = inits[i]!;
    const s = latest(status, c.name);
    const last = i === inits.length - 1;
    if (!s) {
      if (previousDone && isSidecar(c)) starts.push({ name: c.name, reason: 'sidecar not running' });
      continue;
    }
    if (previousDone && !isSidecar(c)) continue; // done: only sidecars must keep running
    if (s.phase === 'created') {
      starts.push({ name: c.name, reason: 'never started' });
    } else if (s.phase === 'running' && !isSidecar(c)) {
      // The init container running now is resized in place too, or restarted when its
      // resizePolicy says so (InPlacePodVerticalScalingInitContainers, beta and on in 1.36).
      if (resize(pod, c, s, actions, actual) === 'restart') starts.push({ name: c.name, reason: 'resize requires restart' });
    } else if (s.phase === 'running') {
      // A sidecar with a startup probe counts as started only once it succeeded; one that
      // failed it (or its liveness probe) is restarted, as upstream's computeInitContainerActions.
      const startup = sidecarStartup(c, s, health);
      if (startup !== 'Success') {
        if (startup === 'Failure') {
          const message = `Init container ${c.name} failed startup probe`;
          actions.containersToKill.push({ id: s.id, name: c.name, reason: message, message, ...probeGrace(c, 'Startup') });
          starts.push({ name: c.name, reason: message });
        }
      } else {
        if (last) initialized = true;
        else if (!previousDone) starts.push({ name: inits[i + 1]!.name, reason: 'not started yet' });
        if (s.hash && hashChanged(c, s.hash)) {
          actions.containersToKill.push({ id: s.id, name: c.name, reason: `Init container ${c.name} definition changed` });
          starts.push({ name: c.name, reason: 'spec changed' });
        } else if (c.livenessProbe && health?.(s.id)?.liveness === 'Failure') {
          const message = `Init container ${c.name} failed liveness probe`;
          actions.containersToKill.push({ id: s.id, name: c.name, reason: message, message, ...probeGrace(c, 'Liveness') });
          starts.push({ name: c.name, reason: message });
        } else if (resize(pod, c, s, actions, actual) === 'restart') {
          starts.push({ name: c.name, reason: 'resize requires restart' });
        }
      }
    } else if (s.phase === 'exited') {
      if (isSidecar(c)) starts.push({ name: c.name, reason: 'restart' });
      else if (s.exitCode !== 0) {
        // A failed init container runs again if its policy and rules say so (else the pod's);
        // if not, the pod has failed.
        if (!shouldContainerBeRestarted(c, pod, status)) {
          actions.killPod = true;
          return false;
        }
        starts.push({ name: c.name, reason: 'restart' });
      } else if (last) initialized = true;
      else starts.push({ name: inits[i + 1]!.name, reason: 'not started yet' });
    } else {
      // unknown: make sure the old instance is gone before a new one starts. With no exit
      // code, only the restartPolicy (its own, else the pod's) decides, as upstream.
      const restartOnFailure = c.restartPolicy ? c.restartPolicy !== 'Never' : podRestartsOnFailure;
      if (!isSidecar(c) && !restartOnFailure) {
        actions.killPod = true;
        return false;
      }
      actions.containersToKill.push({
        id: s.id,
        name: c.name,
        reason: `Init container is in "unknown" state, try killing it before restart`,
      });
      starts.push({ name: c.name, reason: 'restart' });
    }
    previousDone = true;
  }
  if (!previousDone) starts.push({ name: inits[0]!.name, reason: 'not started yet' });
  actions.initContainersToStart = starts.reverse();
  return initialized;
}
