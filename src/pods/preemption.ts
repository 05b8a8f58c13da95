// Critical pod admission (upstream's CriticalPodAdmissionHandler): a critical pod (static,
// mirror, or system-critical priority) that does not fit is admitted after lower-priority,
// non-critical pods are stopped to make room. Pure: which pods go; the workers stop them.
import type { Node, Pod, PodCondition } from 'kubernetes-types/core/v1.js';
import { podPriority } from '../eviction/pods.ts';
import { qosClass } from '../resources/qos.ts';
import { parseQuantity } from '../resources/quantity.ts';
import { admitPod, podRequests, type Admission } from './admission.ts';
import { isCriticalPod } from '../podutil/podutil.ts';

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

const RESOURCE_REASONS = ['OutOfcpu', 'OutOfmemory', 'OutOfpods'];
const QOS_ORDER = ['BestEffort', 'Burstable', 'Guaranteed'];

/**
 * Pure: the pods to stop so that a critical pod the node refused for lack of cpu, memory or
 * pod slots fits: BestEffort before Burstable before Guaranteed, lower priority first, larger
 * requests first; never a critical pod or one of equal or higher priority. Undefined when the
 * pod is not critical, was refused for another reason, or cannot fit even so.
 */
export function podsToPreempt(pod: Pod, refusal: Admission, active: Pod[], node: Node): Pod[] | undefined {
  if (refusal.admit || !RESOURCE_REASONS.includes(refusal.reason) || !isCriticalPod(pod)) return undefined;
  const alloc = node.status?.allocatable ?? {};
  const want = podRequests(pod);
  const used = (pods: Pod[], r: 'cpu' | 'memory') => pods.reduce((n, p) => n + podRequests(p)[r], 0);
  const shortfall = (rest: Pod[]) => ({
    cpu: want.cpu > 0 ? used(rest, 'cpu') + want.cpu - (parseQuantity(alloc.cpu ?? '') ?? Infinity) : 0,
    memory: want.memory > 0 ? used(rest, 'memory') + want.memory - (parseQuantity(alloc.memory ?? '') ?? Infinity) : 0,
    pods: rest.length + 1 - Number(alloc.pods ?? Infinity),
  });
  const candidates = active
    .filter((p) => !isCriticalPod(p) && podPriority(p) < podPriority(pod))
    .sort(
      (a, b) =>
        QOS_ORDER.indexOf(qosClass(a)) - QOS_ORDER.indexOf(qosClass(b)) ||
        podPriority(a) - podPriority(b) ||
        podRequests(b).cpu - podRequests(a).cpu ||
        podRequests(b).memory - podRequests(a).memory,
    );
  const victims: Pod[] = [];
  let rest = active;
  for (const c of candidates) {
    const s = shortfall(rest);
    if (s.cpu <= 0 && s.memory <= 0 && s.pods <= 0) break;
    const r = podRequests(c);
    // Only a pod that frees something still short is worth stopping.
    if ((s.cpu > 0 && r.cpu > 0) || (s.memory > 0 && r.memory > 0) || s.pods > 0) {
      victims.push(c);
      rest = rest.filter((p) => p !== c);
    }
  }
  return victims.length && admitPod(pod, rest, node).admit ? victims : undefined;
}
