// Taints and tolerations as the kubelet reads them: admission's NoExecute check
// (src/pods/admission.ts) and the eviction manager's memory-pressure one (src/eviction/admit.ts).
import type { Taint, Toleration } from 'kubernetes-types/core/v1.js';

/**
 * Upstream's Toleration.ToleratesTaint. Lt and Gt (the alpha TaintTolerationComparisonOperators,
 * which kubelet-ts refuses) tolerate nothing.
 */
export function toleratesTaint(t: Toleration, taint: Pick<Taint, 'key' | 'value' | 'effect'>): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? '') {
    case '':
    case 'Equal':
      return (t.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/** Upstream's FindMatchingUntoleratedTaint: the first taint the filter keeps that no toleration tolerates. */
export const untoleratedTaint = (taints: Taint[], tolerations: Toleration[], filter: (t: Taint) => boolean): Taint | undefined =>
  taints.find((taint) => filter(taint) && !tolerations.some((t) => toleratesTaint(t, taint)));
