// The per-pod state machine, as upstream's pod workers: a pod is synced until it is
// deleted or finished, then terminated (containers stopped within the grace period),
// then, once the apiserver no longer needs it, cleaned up and forgotten.
//
//   syncing ──(deleted, or phase Succeeded/Failed)──> terminating ──> terminated
//      terminated ──(deletionTimestamp set, or gone from the apiserver)──> finished
//
// Pure: the worker runs the step this returns and records the state it leads to.
import type { Pod, PodCondition } from 'kubernetes-types/core/v1.js';
import { isStaticPod } from '../podutil/podutil.ts';

export type PodState = 'syncing' | 'terminating' | 'terminated' | 'finished';

/** The kubelet's own decision to stop a pod (eviction, preemption): its grace period and final status. */
export interface KillPodOptions {
  gracePeriodSeconds: number;
  reason: string;
  message: string;
  condition?: PodCondition;
}

export type Step =
  | { do: 'sync' }
  | { do: 'terminate'; gracePeriodSeconds: number; reason: string; kill?: KillPodOptions }
  | { do: 'finish'; deleteFromApiserver: boolean }
  | { do: 'nothing' };

export const isTerminalPhase = (phase?: string) => phase === 'Succeeded' || phase === 'Failed';

/**
 * pod is the newest object from the apiserver (undefined once it is gone);
 * phase is the phase the kubelet last computed for it; blocked: an older static pod
 * with the same full name still runs (upstream starts those in order); kill: the kubelet
 * decided to stop the pod itself; lastPod: the last object seen, once its source dropped it.
 */
export function nextStep(
  state: PodState,
  pod: Pod | undefined,
  phase?: string,
  blocked = false,
  kill?: KillPodOptions,
  lastPod?: Pod,
): Step {
  const deleting = !pod || !!pod.metadata?.deletionTimestamp;
  switch (state) {
    case 'syncing':
      if (kill) {
        // The shorter of the kill's and a deletion's (upstream's calculateEffectiveGracePeriod):
        // a user's --grace-period=0 during an eviction's kill cuts it short too.
        const deletion = deleting ? pod?.metadata?.deletionGracePeriodSeconds : undefined;
        const grace = deletion === undefined ? kill.gracePeriodSeconds : Math.min(kill.gracePeriodSeconds, deletion);
        return { do: 'terminate', gracePeriodSeconds: grace, reason: kill.reason, kill };
      }
      if (deleting) {
        // Force deletion (gone, or grace 0) still gives containers upstream's minimum.
        const grace = pod?.metadata?.deletionGracePeriodSeconds ?? pod?.spec?.terminationGracePeriodSeconds ?? 30;
        if (pod) return { do: 'terminate', gracePeriodSeconds: grace, reason: 'deleted' };
        // A static pod whose file went is stopped within its own grace period (upstream's
        // calculateEffectiveGracePeriod on the last pod seen); a pod gone from the apiserver was
        // deleted there, with its grace period spent or forced.
        if (lastPod && isStaticPod(lastPod))
          return {
            do: 'terminate',
            gracePeriodSeconds: lastPod.spec?.terminationGracePeriodSeconds ?? 30,
            reason: 'removed from its source',
          };
        return { do: 'terminate', gracePeriodSeconds: 0, reason: 'removed from the apiserver' };
      }
      if (isTerminalPhase(phase))
        return { do: 'terminate', gracePeriodSeconds: pod.spec?.terminationGracePeriodSeconds ?? 30, reason: `phase ${phase}` };
      return blocked ? { do: 'nothing' } : { do: 'sync' };
    case 'terminating':
      return { do: 'nothing' }; // the terminate step moves the pod on
    case 'terminated':
      return deleting ? { do: 'finish', deleteFromApiserver: !!pod } : { do: 'nothing' };
    case 'finished':
      return { do: 'nothing' };
  }
}

/** The state a completed step leads to. */
export function afterStep(state: PodState, step: Step): PodState {
  switch (step.do) {
    case 'terminate':
      return 'terminated';
    case 'finish':
      return 'finished';
    default:
      return state;
  }
}

/** ms until the pod's activeDeadlineSeconds passes (<= 0: it has), or undefined without one. */
export function activeDeadlineLeft(pod: Pod, startTime: string | undefined, now: Date): number | undefined {
  const secs = pod.spec?.activeDeadlineSeconds;
  if (secs === undefined || !startTime) return undefined;
  return Date.parse(startTime) + secs * 1000 - now.getTime();
}
