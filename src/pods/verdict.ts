// An admission handler's verdict on a pod (upstream's lifecycle.PodAdmitResult): shared by every
// handler (resources, node affinity, AppArmor, eviction, node shutdown), so it depends on none.
import type { Pod } from 'kubernetes-types/core/v1.js';

/**
 * preempt: a critical pod is admitted once these pods are stopped (src/pods/preemption.ts);
 * preemptFor: the first resource it lacked without them (cpu, memory, pods, hugepages-2Mi...).
 */
export type Admission =
  | { admit: true; preempt?: Pod[]; preemptFor?: string }
  /** refetchNode: node affinity was the only failure, which the Node read anew may lift (upstream's generalFilter). */
  | { admit: false; reason: string; message: string; refetchNode?: boolean };

/**
 * One of GeneralPredicates' failures: a resource the node has too little of (upstream's
 * InsufficientResourceError: cpu in millicores, memory and storage in bytes, pods and other
 * resources in units), or a predicate by name (PredicateFailureError).
 */
export type PredicateFailure =
  | { resource: string; requested: number; used: number; capacity: number }
  | { predicate: string; desc: string };

/**
 * A resource manager's allocation that threw, as admission.GetPodAdmitResult answers it: a typed
 * error (SMTAlignmentError, TopologyAffinityError) keeps its reason; anything else is
 * UnexpectedAdmissionError.
 */
export function allocationRefusal(e: unknown): Admission {
  const err = e as Error & { reason?: string };
  return err.reason
    ? { admit: false, reason: err.reason, message: `Pod was rejected: ${err.message}` }
    : {
        admit: false,
        reason: 'UnexpectedAdmissionError',
        message: `Pod was rejected: Allocate failed due to ${err.message}, which is unexpected`,
      };
}
