// Admission under node pressure (upstream's eviction manager Admit): a node short of a
// resource takes no new pods that would only be evicted again, except critical pods, and
// under memory pressure alone the pods that declared what memory they need.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Admission } from '../pods/admission.ts';
import { qosClass } from '../resources/qos.ts';
import { PRESSURE_CONDITIONS, type PressureCondition } from './types.ts';
import { isCriticalPod } from '../podutil/podutil.ts';
import { toleratesTaint } from '../podutil/tolerations.ts';

export const TAINT_MEMORY_PRESSURE = 'node.kubernetes.io/memory-pressure';

/**
 * Pure: conditions are the ones evaluate() reports True. The message carries the "Pod was
 * rejected: " prefix upstream's rejectPod adds, as admitPod's do; the event gets the
 * upstream message after it.
 */
export function admitUnderPressure(pod: Pod, conditions: PressureCondition[]): Admission {
  if (conditions.length === 0) return { admit: true };
  // Critical pods keep the node itself running (kubernetes/kubernetes#40573).
  if (isCriticalPod(pod)) return { admit: true };
  if (conditions.length === 1 && conditions[0] === 'MemoryPressure') {
    if (qosClass(pod) !== 'BestEffort') return { admit: true };
    const taint = { key: TAINT_MEMORY_PRESSURE, effect: 'NoSchedule' };
    if ((pod.spec?.tolerations ?? []).some((t) => toleratesTaint(t, taint))) return { admit: true };
  }
  // Go prints the condition list as [A B].
  const list = PRESSURE_CONDITIONS.filter((c) => conditions.includes(c)).join(' ');
  return { admit: false, reason: 'Evicted', message: `Pod was rejected: The node had condition: [${list}]. ` };
}
