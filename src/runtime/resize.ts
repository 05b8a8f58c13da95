// In-place resize carried out by a sync, as upstream's doPodResizeAction
// (kuberuntime_manager.go): the decisions and the allocation are src/resize's; here their order
// around the sync's kills. A memory limit is not set below what is in use (the kernel would
// reclaim or refuse); the pod cgroup grows before any container gets more, and shrinks once
// none needs more, before the restarted ones start with their new limits.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { PodRuntimeStatus } from '../container/types.ts';
import { podRef } from '../events/recorder.ts';
import type { ActualOf, PodActions } from './actions.ts';
import type { LogRef } from '../podutil/podutil.ts';
import type { SyncContext } from './sync-context.ts';

/** One sync's resize: what it is about, and where its errors (for the resize conditions) go. */
export interface ResizeScope {
  pod: Pod;
  actions: PodActions;
  status: PodRuntimeStatus;
  actualOf: ActualOf;
  errors: string[];
  ref: LogRef;
}

/** A resize under way in this sync: when it began, the errors before it, the pod cgroup's shrink. */
export interface ResizeInFlight {
  startedMs: number;
  errorsBefore: number;
  shrinkPodCgroup: () => void;
}

/**
 * Before the kills: a resize that would set memory below usage is refused (a ResizeError
 * event, no container updated); else the pod cgroup grows. A pod-level resize (spec.resources)
 * of a running pod resizes the pod cgroup even when no container changes (upstream's
 * UpdatePodLevelResources). Returns the resize under way, for after the updates.
 */
export function growForResize(ctx: SyncContext, r: ResizeScope): ResizeInFlight | undefined {
  const { pod, actions } = r;
  const startedMs = performance.now();
  const podLevelResize = !actions.createSandbox && !actions.killPod && ctx.resizer.podLevelResize(pod);
  const belowUsage =
    actions.containersToUpdate.length || podLevelResize ? ctx.resizer.memoryBelowUsage(pod, actions, r.status, r.actualOf) : undefined;
  if (belowUsage) {
    r.errors.push(belowUsage);
    ctx.events.event(podRef(pod), 'Warning', 'ResizeError', `Pod resize error: ${belowUsage}`);
    actions.containersToUpdate = [];
    // Upstream's doPodResizeAction validates first: a refused resize is one that failed.
    ctx.observe.podResized?.(performance.now() - startedMs, false);
    return undefined;
  }
  const resizing = podLevelResize || actions.containersToUpdate.length > 0 || actions.containersToKill.some((k) => k.resize);
  if (!resizing) return undefined;
  const errorsBefore = r.errors.length;
  return { startedMs, errorsBefore, shrinkPodCgroup: ctx.resizer.growPodCgroup(pod, r.ref, r.errors) };
}

/**
 * After the kills: UpdateContainerResources for the containers resized in place, then the pod
 * cgroup's shrink; the resize timed as upstream's doPodResizeAction (success: no error in it).
 */
export async function resizeContainers(ctx: SyncContext, r: ResizeScope, inFlight: ResizeInFlight | undefined): Promise<void> {
  if (r.actions.containersToUpdate.length) await ctx.resizer.updateContainers(r.pod, r.actions, r.status, r.actualOf, r.errors, r.ref);
  if (!inFlight) return;
  inFlight.shrinkPodCgroup();
  ctx.observe.podResized?.(performance.now() - inFlight.startedMs, r.errors.length === inFlight.errorsBefore);
}
