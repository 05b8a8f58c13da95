// What a container's status keeps from its previous one when the runtime cannot tell: the
// restart count and last termination of a container whose old instances are gone (removed by
// RestartAllContainers, or lost), and the status of a container removed by RestartAllContainers.
// Pure. Mirrors upstream's convertToAPIContainerStatuses (pkg/kubelet/kubelet_pods.go) with
// RestartAllContainersOnContainerExits on.
import type { ContainerStatus, PodCondition, PodStatus } from 'kubernetes-types/core/v1.js';
import type { Waiting } from '../container/types.ts';
import { RESTART_ALL_CONTAINERS_STARTED, RESTARTING_ALL_CONTAINERS } from '../runtime/restart-policy.ts';

const REMOVED = 'The container is removed because RestartAllContainers in place';

export interface RuntimeSide {
  /** The runtime holds an instance of the container. */
  present: boolean;
  /** It holds an older one too (which the status shows as lastState). */
  previousInstance: boolean;
  /** The newest instance's restart count (CRI attempt). */
  attempt: number;
  /** The pod restarts all its containers in place (upstream's ShouldAllContainersRestart). */
  restarting: boolean;
  /** Why the container waits, from the last sync. */
  waiting?: Waiting;
}

/** st: the status from the runtime alone; old: the container's last status, if any. */
export function withPreviousStatus(st: ContainerStatus, old: ContainerStatus | undefined, rt: RuntimeSide): ContainerStatus {
  if (!old) return st;
  if (rt.present) {
    // The count never goes back, and a new instance started after its old ones were removed
    // still has a termination before it.
    let restartCount = Math.max(st.restartCount, old.restartCount);
    if (st.state?.running && old.state?.terminated && old.restartCount >= rt.attempt) restartCount = old.restartCount + 1;
    let lastState = st.lastState;
    if (!rt.previousInstance && !lastState?.terminated) {
      if (old.containerID !== st.containerID && old.state?.terminated) lastState = { terminated: old.state.terminated };
      else if (old.lastState?.terminated) lastState = { terminated: old.lastState.terminated };
    }
    return { ...st, restartCount, lastState };
  }
  // No instance: a terminated container stays as it was, any other keeps its count and last termination.
  let s: ContainerStatus = old.state?.terminated ? { ...old } : { ...st, restartCount: old.restartCount, lastState: old.lastState ?? {} };
  if (rt.restarting && !old.state?.waiting) {
    // Removed to be restarted: waiting, and counted as a restart.
    return {
      ...s,
      ready: false,
      started: false,
      state: { waiting: rt.waiting ?? { reason: RESTARTING_ALL_CONTAINERS, message: REMOVED } },
      lastState: { terminated: { reason: RESTARTING_ALL_CONTAINERS, message: REMOVED, exitCode: 137 } },
      restartCount: old.restartCount + 1,
    };
  }
  // Failed to start again (an image pull, a back-off): waiting, its termination the last one.
  if (rt.waiting && s.state?.terminated) s = { ...s, ready: false, started: false, state: { waiting: rt.waiting }, lastState: s.state };
  return s;
}

/**
 * Upstream's GenerateAllContainersRestartingCondition: True from the exit that triggered a
 * restart of all containers until the runtime holds none of the old ones; False otherwise.
 */
export function allContainersRestartingCondition(
  phase: PodStatus['phase'],
  restarting: boolean,
  cleanedUp: boolean,
): Pick<PodCondition, 'status' | 'reason' | 'message'> {
  if (phase === 'Succeeded') return { status: 'False', reason: 'PodCompleted' };
  if (phase === 'Failed') return { status: 'False', reason: 'PodFailed' };
  if (!restarting || cleanedUp) return { status: 'False' };
  return { status: 'True', reason: RESTART_ALL_CONTAINERS_STARTED, message: 'container exited with restart policy rule' };
}
