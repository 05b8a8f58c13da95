// Stopping a pod's containers and sandbox: upstream's killPodWithSyncResult,
// killContainersWithSyncResult and killContainer (kuberuntime_container.go), with preStop
// hooks, the grace period, and sidecars stopped after the containers they serve.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { podRef } from '../events/recorder.ts';
import type { ContainerState, PodRuntimeStatus } from '../container/types.ts';
import type { ContainerToReset } from './actions.ts';
import { runHook } from './hooks.ts';
import { containerFieldPath } from './pod-config.ts';
import { logRef, type LogRef } from '../podutil/podutil.ts';
import type { SyncContext } from './sync-context.ts';
import { terminationPrereqs } from './termination-order.ts';

// runc needs a moment to deliver SIGKILL after SIGTERM: upstream's minimum.
export const MIN_GRACE_SECONDS = 2;

/** The pod's terminationGracePeriodSeconds (30 unset), at least the minimum. */
export const podGraceSeconds = (pod: Pod) => Math.max(MIN_GRACE_SECONDS, pod.spec?.terminationGracePeriodSeconds ?? 30);

/**
 * Stops every container and then the sandbox, as upstream's killPodWithSyncResult: app
 * containers together, then sidecars in reverse order; each runs its preStop hook first, within
 * the grace period. Idempotent.
 */
export async function killPod(
  ctx: SyncContext,
  pod: Pod,
  status: PodRuntimeStatus,
  graceSeconds: number,
  why: string,
  signal?: AbortSignal,
): Promise<void> {
  await ctx.view.stopping(status.uid, async () => {
    await stopContainers(ctx, pod, status, Date.now() + Math.max(MIN_GRACE_SECONDS, graceSeconds) * 1000, signal);
    signal?.throwIfAborted();
    for (const sb of status.sandboxes.filter((s) => s.ready)) await ctx.cri.stopPodSandbox({ podSandboxId: sb.id });
  });
  ctx.log.info('Killed pod', { ...logRef(pod), reason: why, gracePeriod: graceSeconds });
}

/**
 * Upstream's killContainersWithSyncResult: every running container is stopped at once, its
 * preStop hook run at once; a sidecar's stop signal waits for its turn (termination-order.ts).
 * All by the deadline. signal: the kill is cancelled (upstream's context, when a shorter grace
 * period arrives): the waits end and it throws; the kill is then begun again with the new grace.
 */
export async function stopContainers(
  ctx: SyncContext,
  pod: Pod,
  status: PodRuntimeStatus,
  deadline: number,
  signal?: AbortSignal,
): Promise<void> {
  const running = status.containers.filter((c) => c.phase === 'running' || c.phase === 'unknown');
  const prereqs = terminationPrereqs(pod);
  const names = [...new Set(running.map((c) => c.name))];
  // Set before any kill starts, so that a turn sees every container it waits for. A container
  // that failed to stop frees the others' turn all the same (upstream's is bounded by the
  // grace period); its error fails the kill, and the next sync finds it running.
  const exited = new Map(names.map((n) => [n, Promise.withResolvers<void>()]));
  const turn = (name: string) => () => Promise.all((prereqs.get(name) ?? []).map((p) => exited.get(p)?.promise));
  const kills = names.map(async (name) => {
    try {
      await Promise.all(
        running
          .filter((c) => c.name === name)
          .map((c) => killContainer(ctx, pod, c, status.sandboxes[0]?.ip, deadline, undefined, turn(name), signal)),
      );
    } finally {
      exited.get(name)!.resolve();
    }
  });
  await Promise.all(kills);
}

/**
 * Upstream's killContainer: preStop (bounded by what is left of the grace period), then the
 * container's turn if it must wait for others (bounded too), then StopContainer with the rest.
 */
export async function killContainer(
  ctx: SyncContext,
  pod: Pod,
  c: Pick<ContainerState, 'id' | 'name' | 'phase'>,
  podIP: string | undefined,
  deadline: number,
  message?: string,
  turn?: () => Promise<unknown>,
  signal?: AbortSignal,
): Promise<void> {
  const fieldPath = containerFieldPath(pod, c.name);
  ctx.events.event(podRef(pod, fieldPath), 'Normal', 'Killing', message ?? `Stopping container ${c.name}`);
  const spec = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((x) => x.name === c.name);
  const preStop = spec?.lifecycle?.preStop;
  const left = () => Math.ceil((deadline - Date.now()) / 1000);
  if (spec && preStop && c.phase === 'running' && left() > 0) {
    // upstream's executePreStopHook: the hook runs until it ends or the container dies; the
    // kill waits for it at most the grace period, and a failure is reported whenever it comes.
    const hook = runHook(ctx, { pod, container: spec, containerId: c.id, podIP }, preStop, undefined, signal).then((failed) => {
      if (!failed) return;
      ctx.log.error('PreStop hook failed', { ...logRef(pod), containerName: c.name, containerID: c.id, err: failed });
      // The hook's message stays in the log: what a hook prints stays off the apiserver (hooks.ts).
      ctx.events.event(podRef(pod, fieldPath), 'Warning', 'FailedPreStopHook', 'PreStopHook failed');
    });
    await untilDeadline(hook, deadline, signal);
  }
  if (turn && left() > 0) await untilDeadline(turn(), deadline, signal);
  signal?.throwIfAborted();
  // A StopContainer with a longer timeout may still be under way (a cancelled kill's): this one's
  // shorter timeout is what the runtime then keeps to.
  await untilAborted(ctx.cri.stopContainer({ containerId: c.id, timeout: Math.max(MIN_GRACE_SECONDS, left()) }), signal);
}

/** Waits for p, or until the deadline, whichever comes first; throws once signal aborts. */
async function untilDeadline(p: Promise<unknown>, deadline: number, signal?: AbortSignal): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await untilAborted(Promise.race([p, new Promise((r) => (timer = setTimeout(r, deadline - Date.now())))]), signal);
  } finally {
    clearTimeout(timer);
  }
}

/** p, unless signal aborts first: then its reason is thrown (p goes on, unawaited). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Upstream's SyncPod for ContainersToReset: each instance killed without a grace period (no
 * preStop hook) if it runs, then removed; its log stays, so that the next instance's restart
 * count goes on from it (calcRestartCountByLogDir). A failure ends the sync, to be tried again.
 */
export async function resetContainers(ctx: SyncContext, pod: Pod, status: PodRuntimeStatus, reset: ContainerToReset[], ref: LogRef) {
  ctx.log.info('Restarting all containers of the pod', { ...ref, containers: reset.length });
  for (const r of reset) {
    const c = status.containers.find((x) => x.id === r.id)!;
    ctx.log.v(3, 'Removing container before pod restarts', { ...ref, container: r.name, containerID: r.id, kill: r.kill });
    if (r.kill) await killContainer(ctx, pod, c, status.sandboxes[0]?.ip, Date.now(), 'killing');
    await ctx.cri.removeContainer({ containerId: r.id });
  }
}

/**
 * Every sandbox of a pod that is gone removed (with their containers), a ready one stopped first;
 * returns what the runtime held. A stopped one is not stopped again: the terminate step's killPod
 * stopped it (30 pods deleted made 60 StopPodSandbox calls), and upstream's sandbox GC removes the
 * sandboxes that are not ready with RemovePodSandbox alone.
 */
export async function removeSandboxes(ctx: SyncContext, uid: string): Promise<PodRuntimeStatus> {
  const status = await ctx.view.current(uid);
  try {
    for (const sb of status.sandboxes) {
      if (sb.ready) await ctx.cri.stopPodSandbox({ podSandboxId: sb.id });
      await ctx.cri.removePodSandbox({ podSandboxId: sb.id });
    }
  } finally {
    ctx.view.changed(uid);
  }
  return status;
}
