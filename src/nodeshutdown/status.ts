// What a graceful node shutdown shows: the status a terminated pod ends in (upstream's
// killPods status function), the admission refusal while the node goes down (its Admit),
// and the Node's Ready condition (its ShutdownStatus, read by nodestatus.ReadyCondition). Pure.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Admission } from '../pods/admission.ts';
import type { KillPodOptions } from '../pods/lifecycle.ts';
import { disruptionCondition } from '../eviction/evicted-status.ts';

export const NODE_SHUTDOWN_REASON = 'Terminated';
export const NODE_SHUTDOWN_MESSAGE = 'Pod was terminated in response to imminent node shutdown.';
export const NODE_SHUTDOWN_NOT_ADMITTED_REASON = 'NodeShutdown';
export const NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE = 'Pod was rejected as the node is shutting down.';
/** ShutdownStatus's error: the Ready condition's message (joined with any other problem). */
export const NODE_SHUTTING_DOWN = 'node is shutting down';

/**
 * How a pod is stopped for the shutdown: Failed, reason Terminated, and DisruptionTarget
 * (TerminationByKubelet) with the same message, through the eviction manager's kill path.
 */
export const shutdownKill = (pod: Pod, gracePeriodSeconds: number): KillPodOptions => ({
  gracePeriodSeconds,
  reason: NODE_SHUTDOWN_REASON,
  message: NODE_SHUTDOWN_MESSAGE,
  condition: disruptionCondition(pod, NODE_SHUTDOWN_MESSAGE),
});

/** Every pod is refused while the node shuts down, critical ones too. The prefix is rejectPod's. */
export const admitDuringShutdown = (shuttingDown: boolean): Admission =>
  shuttingDown
    ? { admit: false, reason: NODE_SHUTDOWN_NOT_ADMITTED_REASON, message: `Pod was rejected: ${NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE}` }
    : { admit: true };

/** The Ready condition's problem while shutting down; undefined otherwise. */
export const shutdownStatus = (shuttingDown: boolean): string | undefined => (shuttingDown ? NODE_SHUTTING_DOWN : undefined);
