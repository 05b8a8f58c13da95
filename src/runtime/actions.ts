// computePodActions: what must change in the runtime to make a pod match its spec.
// Pure over (pod, runtime status); the sync executes the result. Mirrors upstream
// kuberuntime_manager.go's function of the same name, with init containers and
// sidecars (init containers with restartPolicy Always) as computeInitContainerActions (init-actions.ts).
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { type PodRuntimeStatus, type ContainerState, latest } from '../container/types.ts';
import { hashChanged } from './hash.ts';
import { containerShouldRestart, findMatchingRestartRule, shouldContainerBeRestarted } from './restart-policy.ts';
import { alive, failedProbe, probeGrace, resize, runOnce } from './container-checks.ts';
import { initContainerActions } from './init-actions.ts';
import type { ActualOf, ContainerToReset, HealthOf, PodActions } from './pod-actions.ts';

export type { ActualOf, ContainerToKill, ContainerToReset, HealthOf, PodActions, ProbeHealth, Start, Update } from './pod-actions.ts';

/** Whether a container that exited should run again: its own restartPolicy and rules, else the pod's (restart-policy.ts). */
export function shouldRestart(pod: Pod, c: ContainerState): boolean {
  const spec = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((x) => x.name === c.name);
  return containerShouldRestart(spec ?? { name: c.name }, pod, c.exitCode ?? 0);
}

/**
 * pod: with its allocated resources (src/resize), which running containers must get.
 * restartAllContainers: the pod restarts all its containers in place (restart-policy.ts allContainersRestarting).
 */
export function computePodActions(
  pod: Pod,
  status: PodRuntimeStatus,
  health?: HealthOf,
  actual?: ActualOf,
  restartAllContainers = false,
): PodActions {
  const spec = pod.spec?.containers ?? [];
  const inits = pod.spec?.initContainers ?? [];
  const sandbox = status.sandboxes[0];
  const actions: PodActions = {
    killPod: false,
    createSandbox: false,
    sandboxId: sandbox?.id,
    sandboxAttempt: 0,
    initContainersToStart: [],
    containersToStart: [],
    ephemeralContainersToStart: [],
    containersToKill: [],
    containersToUpdate: [],
  };
  const killAll = () => {
    actions.killPod = !!sandbox?.ready || status.containers.some((c) => alive(c));
  };

  // As upstream: the old containers go first, all of them, app containers before init
  // containers and the ones that triggered it last; the next sync starts from a clean slate.
  if (restartAllContainers) {
    actions.containersToReset = containersToReset(pod, status);
    return actions;
  }

  const sandboxOK = sandbox?.ready && (pod.spec?.hostNetwork || !!sandbox.ip);
  if (!sandboxOK) {
    // A Never pod that ran its containers does not get a new sandbox: it is done.
    if (sandbox && pod.spec?.restartPolicy === 'Never' && status.containers.length) {
      killAll();
      return actions;
    }
    // Neither does a pod whose containers all succeeded and run once (OnFailure).
    const succeeded = (c: Container) => {
      const s = latest(status, c.name);
      return s?.phase === 'exited' && s.exitCode === 0;
    };
    const toStart = spec.filter((c) => !(runOnce(pod, c) && succeeded(c)));
    if (sandbox && spec.length > 0 && toStart.length === 0) {
      killAll();
      return actions;
    }
    actions.killPod = !!sandbox;
    actions.createSandbox = true;
    actions.sandboxId = undefined;
    // Names are name_namespace_uid_attempt and stay reserved while a sandbox exists: never reuse one.
    actions.sandboxAttempt = sandbox ? Math.max(...status.sandboxes.map((s) => s.attempt)) + 1 : 0;
    const reason = sandbox ? 'pod sandbox changed' : 'not started yet';
    // Initialization starts over in a new sandbox.
    if (inits.length) {
      actions.initContainersToStart.push({ name: inits[0]!.name, reason });
      return actions;
    }
    for (const c of toStart) actions.containersToStart.push({ name: c.name, reason });
    return actions;
  }

  // As upstream, ephemeral containers start in a running sandbox whatever the pod's other
  // containers do, and only once: one that exited stays exited.
  for (const c of pod.spec?.ephemeralContainers ?? []) {
    if (!latest(status, c.name)) actions.ephemeralContainersToStart.push({ name: c.name, reason: 'not started yet' });
  }
  if (!initContainerActions(pod, status, actions, health, actual)) return actions;

  let keep = 0;
  for (const c of spec) {
    const s = latest(status, c.name);
    if (!s) {
      actions.containersToStart.push({ name: c.name, reason: 'not started yet' });
      continue;
    }
    if (alive(s)) {
      if (s.hash && hashChanged(c, s.hash)) {
        actions.containersToKill.push({ id: s.id, name: c.name, reason: 'Container spec hash changed' });
        actions.containersToStart.push({ name: c.name, reason: 'spec changed' });
      } else {
        const failed = failedProbe(c, s, health);
        if (!failed) {
          if (resize(pod, c, s, actions, actual) === 'restart')
            actions.containersToStart.push({ name: c.name, reason: 'resize requires restart' });
          else keep++;
          continue;
        }
        // As upstream: a container that failed liveness or startup is killed, and started
        // again unless its restartPolicy (its own, else the pod's) is Never; rules need an exit code.
        const restart = (c.restartPolicy ?? pod.spec?.restartPolicy ?? 'Always') !== 'Never';
        const message = `Container ${c.name} failed ${failed.toLowerCase()} probe${restart ? ', will be restarted' : ''}`;
        actions.containersToKill.push({ id: s.id, name: c.name, reason: message, message, ...probeGrace(c, failed) });
        if (restart) actions.containersToStart.push({ name: c.name, reason: message });
      }
      continue;
    }
    // created-but-never-started or exited: run a new instance if the policy says so
    if (shouldContainerBeRestarted(c, pod, status))
      actions.containersToStart.push({ name: c.name, reason: s.phase === 'created' ? 'never started' : 'restart' });
  }
  // Nothing runs and nothing will: the pod is done, and its sidecars must not keep it alive.
  if (keep === 0 && actions.containersToStart.length === 0) {
    killAll();
    actions.initContainersToStart = [];
    actions.ephemeralContainersToStart = [];
    actions.containersToKill = [];
    actions.containersToUpdate = [];
    return actions;
  }
  const known = new Set([...spec, ...inits, ...(pod.spec?.ephemeralContainers ?? [])].map((c) => c.name));
  for (const s of status.containers) {
    if (alive(s) && !known.has(s.name))
      actions.containersToKill.push({ id: s.id, name: s.name, reason: 'Container is not in the pod spec' });
  }
  return actions;
}

/**
 * Upstream's getContainersToReset, for init and app containers alike: every instance (the old
 * ones too, so that the runtime holds none), with the instances whose exit matched a
 * RestartAllContainers rule apart; then ordered as upstream's computePodActions: app containers,
 * init containers, and the triggering app and init containers last.
 */
function containersToReset(pod: Pod, status: PodRuntimeStatus): ContainerToReset[] {
  const split = (containers: Container[]) => {
    const sources: ContainerToReset[] = [];
    const targets: ContainerToReset[] = [];
    for (const c of containers) {
      for (const s of status.containers.filter((x) => x.name === c.name)) {
        if (s.phase !== 'exited') targets.push({ id: s.id, name: c.name, kill: true });
        else if (findMatchingRestartRule(c, s.exitCode ?? 0)?.action === 'RestartAllContainers')
          sources.push({ id: s.id, name: c.name, kill: false });
        else targets.push({ id: s.id, name: c.name, kill: false });
      }
    }
    return { sources, targets };
  };
  const inits = split(pod.spec?.initContainers ?? []);
  const apps = split(pod.spec?.containers ?? []);
  return [...apps.targets, ...inits.targets, ...apps.sources, ...inits.sources];
}
