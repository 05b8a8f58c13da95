// Critical pod admission (upstream's CriticalPodAdmissionHandler, pkg/kubelet/preemption): a
// critical pod (static, mirror, or system-critical priority) refused only for resources the
// node lacks is admitted once pods it may preempt are stopped to free them. Pure: which pods
// go; the workers stop them.
import type { Pod, PodCondition } from 'kubernetes-types/core/v1.js';
import { qosClass } from '../resources/qos.ts';
import { resourceRequest } from '../resources/pod-resources.ts';
import { isCriticalPod } from '../podutil/podutil.ts';
import type { Admission, PredicateFailure } from './verdict.ts';

/** Upstream's status and condition for a preempted pod. */
export const PREEMPTED = {
  reason: 'Preempting',
  message: 'Preempted in order to admit critical pod',
  condition: {
    type: 'DisruptionTarget',
    status: 'True',
    reason: 'TerminationByKubelet',
    message: 'Pod was preempted by Kubelet to accommodate a critical pod.',
  } as PodCondition,
};

/** How much of a resource must be freed (upstream's admissionRequirement). */
export interface Requirement {
  resource: string;
  quantity: number;
}

/** GetResourceRequest: a pod holds one pod slot; cpu in millicores. */
const request = (pod: Pod, resource: string) => (resource === 'pods' ? 1 : resourceRequest(pod, resource));

/** admissionRequirementList.subtract: what is still needed once these pods are gone. */
function subtract(reqs: Requirement[], pods: Pod[]): Requirement[] {
  const left: Requirement[] = [];
  for (const r of reqs) {
    let q = r.quantity;
    for (const p of pods) {
      q -= request(p, r.resource);
      if (q <= 0) break;
    }
    if (q > 0) left.push({ resource: r.resource, quantity: q });
  }
  return left;
}

/** admissionRequirementList.distance: the squared fractions of each requirement the pod leaves unmet. */
const distance = (reqs: Requirement[], pod: Pod) =>
  reqs.reduce((d, r) => {
    const remaining = r.quantity - request(pod, r.resource);
    return remaining > 0 ? d + (remaining / r.quantity) ** 2 : d;
  }, 0);

/** smallerResourceRequest: memory first, then cpu; equal counts as smaller. */
function smaller(a: Pod, b: Pod): boolean {
  for (const r of ['memory', 'cpu']) {
    const x = request(a, r),
      y = request(b, r);
    if (x !== y) return x < y;
  }
  return true;
}

const unmet = (reqs: Requirement[]) =>
  `no set of running pods found to reclaim resources: [${reqs.map((r) => `(res: ${r.resource}, q: ${r.quantity}), `).join('')}]`;

/** getPodsToPreemptByDistance: each round the pod nearest to what is still needed, the smaller on a tie. */
function byDistance(candidates: Pod[], reqs: Requirement[]): Pod[] | { error: string } {
  const pods = [...candidates],
    chosen: Pod[] = [];
  while (reqs.length) {
    if (!pods.length) return { error: unmet(reqs) };
    let best = reqs.length + 1,
      at = 0;
    pods.forEach((p, i) => {
      const d = distance(reqs, p);
      if (d < best || (d === best && smaller(p, pods[at]!))) {
        best = d;
        at = i;
      }
    });
    const p = pods[at]!;
    // Upstream moves the last pod into the chosen one's place, which decides later ties.
    pods[at] = pods[pods.length - 1]!;
    pods.pop();
    reqs = subtract(reqs, [p]);
    chosen.push(p);
  }
  return chosen;
}

/** kubetypes.Preemptable: any non-critical pod, or one of lower priority when both have one. */
function preemptable(preemptor: Pod, preemptee: Pod): boolean {
  if (isCriticalPod(preemptor) && !isCriticalPod(preemptee)) return true;
  const a = preemptor.spec?.priority,
    b = preemptee.spec?.priority;
  return a !== undefined && b !== undefined && a > b;
}

/**
 * getPodsToPreempt: the fewest and smallest Guaranteed pods needed if every Burstable and
 * BestEffort one went, then the Burstable ones needed beside those, then the BestEffort ones.
 */
export function podsToPreempt(pod: Pod, active: Pod[], reqs: Requirement[]): Pod[] | { error: string } {
  const mine = active.filter((p) => preemptable(pod, p));
  const of = (qos: string) => mine.filter((p) => qosClass(p) === qos);
  const [bestEffort, burstable, guaranteed] = [of('BestEffort'), of('Burstable'), of('Guaranteed')];
  const never = subtract(reqs, [...bestEffort, ...burstable, ...guaranteed]);
  if (never.length) return { error: unmet(never) };
  const g = byDistance(guaranteed, subtract(reqs, [...bestEffort, ...burstable]));
  if ('error' in g) return g;
  const b = byDistance(burstable, subtract(reqs, [...bestEffort, ...g]));
  if ('error' in b) return b;
  const be = byDistance(bestEffort, subtract(reqs, [...b, ...g]));
  if ('error' in be) return be;
  return [...be, ...b, ...g];
}

/**
 * HandleAdmissionFailure: the failures that still refuse the pod (all of them for a pod that is
 * not critical; for a critical one those other than resources), or, for a critical pod refused
 * for resources alone, its admission once pods are preempted, or upstream's
 * UnexpectedAdmissionError when no set of pods frees enough.
 */
export function handleAdmissionFailure(pod: Pod, failures: PredicateFailure[], active: Pod[]): PredicateFailure[] | Admission {
  if (!isCriticalPod(pod)) return failures;
  const other = failures.filter((f) => !('resource' in f));
  if (other.length) return other;
  const reqs = failures.map((f) => {
    const r = f as Extract<PredicateFailure, { resource: string }>;
    return { resource: r.resource, quantity: r.requested - (r.capacity - r.used) };
  });
  const victims = podsToPreempt(pod, active, reqs);
  if ('error' in victims)
    return {
      admit: false,
      reason: 'UnexpectedAdmissionError',
      message: `Pod was rejected: Unexpected error while attempting to recover from admission failure: preemption: error finding a set of pods to preempt: ${victims.error}`,
    };
  return { admit: true, preempt: victims, preemptFor: reqs[0]!.resource };
}
