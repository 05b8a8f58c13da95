// When and in which order the kubelet tries deferred resizes again (upstream's
// RetryPendingResizes and sortPendingResizes in pkg/kubelet/allocation): not at each sync of the
// pod, but when room may have been made (pods added, a resize requested, pods removed, a pod
// terminated, a pod's requests shrank) and every 3 minutes, in an order that lets the resizes
// most likely to fit, and the most important pods, go first.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { podCPUAndMemoryRequests } from '../resources/pod-resources.ts';
import { qosClass } from '../resources/qos.ts';
import { type Allocation, withAllocation } from './decide.ts';

/** Upstream's retry_trigger label values of kubelet_pod_deferred_accepted_resizes_total. */
export type RetryTrigger = 'pods_added' | 'pod_updated' | 'pods_removed' | 'pod_terminated' | 'pod_resized' | 'periodic_retry';

/** Upstream's retryDelay: the pending resizes are tried again this long after the last try. */
export const RETRY_PERIOD_MS = 3 * 60_000;

/** Pure: the resize asks more cpu or memory than the pod's allocation (upstream's isResizeIncreasingRequests). */
export function resizeIncreasing(pod: Pod, allocated: Allocation): boolean {
  const want = podCPUAndMemoryRequests(pod);
  const has = podCPUAndMemoryRequests(withAllocation(pod, allocated));
  return want.cpu > has.cpu || want.memory > has.memory;
}

export interface PendingResize {
  uid: string;
  pod: Pod;
  allocated: Allocation;
  /** When the resize was first deferred (its PodResizePending condition's lastTransitionTime); undefined: not yet. */
  deferredSinceMs?: number;
}

/**
 * Pure: upstream's sortPendingResizes order: resizes that ask no more first (they always fit),
 * then the higher priority, then Guaranteed pods, then the longest deferred (a resize not yet
 * deferred last).
 */
export function retryOrder(pending: PendingResize[]): string[] {
  const keyed = pending.map((p) => ({
    uid: p.uid,
    increasing: resizeIncreasing(p.pod, p.allocated),
    priority: p.pod.spec?.priority ?? 0,
    guaranteed: qosClass(p.pod) === 'Guaranteed',
    since: p.deferredSinceMs ?? Infinity,
  }));
  keyed.sort(
    (a, b) =>
      Number(a.increasing) - Number(b.increasing) ||
      b.priority - a.priority ||
      Number(b.guaranteed) - Number(a.guaranteed) ||
      (a.since === b.since ? 0 : a.since < b.since ? -1 : 1),
  );
  return keyed.map((k) => k.uid);
}
