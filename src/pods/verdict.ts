// An admission handler's verdict on a pod (upstream's lifecycle.PodAdmitResult): shared by every
// handler (resources, node affinity, AppArmor, eviction, node shutdown), so it depends on none.
import type { Pod } from 'kubernetes-types/core/v1.js';

/**
 * preempt: a critical pod is admitted once these pods are stopped (src/pods/preemption.ts);
 * preemptFor: the resource it lacked without them (cpu, memory, pods).
 */
export type Admission = { admit: true; preempt?: Pod[]; preemptFor?: string } | { admit: false; reason: string; message: string };
