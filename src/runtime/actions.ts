// computePodActions: what must change in the runtime to make a pod match its spec.
// Pure over (pod, runtime status); the sync executes the result. Mirrors upstream
// kuberuntime_manager.go's function of the same name.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { type PodRuntimeStatus, type ContainerState, latest } from './types.ts';
import { containerHash } from './hash.ts';

export interface PodActions {
  /** Stop every container and the sandbox before anything else (the sandbox must be replaced). */
  killPod: boolean;
  createSandbox: boolean;
  /** The sandbox to use, when kept. */
  sandboxId?: string;
  /** CRI attempt of the sandbox to create. */
  sandboxAttempt: number;
  containersToStart: { name: string; reason: string }[];
  containersToKill: { id: string; name: string; reason: string }[];
}

/** Whether a container that exited should run again, per the pod's restartPolicy. */
export function shouldRestart(pod: Pod, c: ContainerState): boolean {
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (policy === 'Always') return true;
  if (policy === 'OnFailure') return c.exitCode !== 0;
  return false;
}

export function computePodActions(pod: Pod, status: PodRuntimeStatus): PodActions {
  const spec = pod.spec?.containers ?? [];
  const sandbox = status.sandboxes[0];
  const actions: PodActions = {
    killPod: false, createSandbox: false, sandboxId: sandbox?.id, sandboxAttempt: 0, containersToStart: [], containersToKill: [],
  };

  const sandboxOK = sandbox?.ready && (pod.spec?.hostNetwork || !!sandbox.ip);
  if (!sandboxOK) {
    // A finished Never/OnFailure pod whose sandbox died stays finished: nothing to start again.
    const everyoneDone = spec.length > 0 && spec.every((c) => { const s = latest(status, c.name); return s?.phase === 'exited' && !shouldRestart(pod, s); });
    if (sandbox && everyoneDone) return actions;
    actions.killPod = !!sandbox;
    actions.createSandbox = true;
    actions.sandboxId = undefined;
    // Names are name_namespace_uid_attempt and stay reserved while a sandbox exists: never reuse one.
    actions.sandboxAttempt = sandbox ? Math.max(...status.sandboxes.map((s) => s.attempt)) + 1 : 0;
    for (const c of spec) {
      const s = latest(status, c.name);
      if (!s || s.phase !== 'exited' || shouldRestart(pod, s)) actions.containersToStart.push({ name: c.name, reason: sandbox ? 'pod sandbox changed' : 'not started yet' });
    }
    return actions;
  }

  const specByName = new Map<string, Container>(spec.map((c) => [c.name, c]));
  for (const c of spec) {
    const s = latest(status, c.name);
    if (!s) { actions.containersToStart.push({ name: c.name, reason: 'not started yet' }); continue; }
    if (s.phase === 'running' || s.phase === 'unknown') {
      if (s.hash && s.hash !== containerHash(c)) {
        actions.containersToKill.push({ id: s.id, name: c.name, reason: 'Container spec hash changed' });
        actions.containersToStart.push({ name: c.name, reason: 'spec changed' });
      }
      continue;
    }
    // created-but-never-started or exited: run a new instance if the policy says so
    if (s.phase === 'created' || shouldRestart(pod, s)) actions.containersToStart.push({ name: c.name, reason: s.phase === 'created' ? 'never started' : 'restart' });
  }
  for (const s of status.containers) {
    if ((s.phase === 'running' || s.phase === 'unknown') && !specByName.has(s.name)) {
      actions.containersToKill.push({ id: s.id, name: s.name, reason: 'Container is not in the pod spec' });
    }
  }
  return actions;
}
