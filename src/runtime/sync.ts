// The CRI executor's SyncPod driver: carries out computePodActions' result against the runtime,
// in upstream's order (kuberuntime_manager.go SyncPod): reset or kill what must go, resize in
// place, then the sandbox (sandbox.ts) and the containers to start (start-container.ts). The
// only place where a pod's sandbox and containers are created, started, stopped and removed;
// the kubelet-level steps around it (allocation, volumes, the pod cgroup) are src/pods/sync-pod.ts.
import type { Container, Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import type { PodRuntimeStatus, Waiting } from '../container/types.ts';
import { podRef } from '../events/recorder.ts';
import { pullImageVolumes, type ImageVolumePull } from '../images/image-volumes.ts';
import type { ImageEvent } from '../images/puller.ts';

import { specAllocation } from '../resize/decide.ts';
import { wantsUserNamespace } from '../userns/mappings.ts';
import { computePodActions, type HealthOf, type PodActions } from './actions.ts';
import { CrashBackoff } from './crash-backoff.ts';
import { noEnvSource } from './env-sources.ts';
import { killContainer, killPod, MIN_GRACE_SECONDS, podGraceSeconds, removeSandboxes, resetContainers, stopContainers } from './kill.ts';
import { removePodLogs } from './log-links.ts';
import { requestsRecursiveReadOnly } from './recursive-read-only.ts';
import { REQUEUE_ERROR_MS, REQUEUE_NOW_MS } from './requeue.ts';
import { growForResize, resizeContainers } from './resize.ts';
import { allContainersCouldRestart, allContainersRestarting, shouldAllContainersRestart } from './restart-policy.ts';
import { RuntimeState, supportsRecursiveReadOnly } from './runtime-state.ts';
import { createSandbox, podSandboxConfig } from './sandbox.ts';
import { startContainer, type StartScope } from './start-container.ts';
import { isSidecar, logRef, type LogRef, initAndAppContainers } from '../podutil/podutil.ts';
import type { SyncContext, SyncResult } from './sync-context.ts';

export type { ContainerDevices, PodLevelSteps, SyncObserver, SyncResult } from './sync-context.ts';

/** What the runtime's SyncPod is given besides the pod (already with its allocated resources). */
export interface SyncOptions {
  /** Filled with what failed of an in-place resize, for the resize conditions. */
  errors: string[];
  /** The pod is being terminated: stop between steps (and abort a pull). */
  signal?: AbortSignal;
  /** The prober's liveness and startup states. */
  health?: HealthOf;
  /** The status the pod showed last (whether it restarts all its containers in place). */
  last?: PodStatus;
}

/** SyncContext without what the executor keeps itself (crash back-offs), with its defaulted parts optional. */
type Defaulted = 'env' | 'runtimeHandler' | 'runtimeState' | 'observe';
export type RuntimeSyncerDeps = Omit<SyncContext, Defaulted | 'crashBackoff'> &
  Partial<Pick<SyncContext, Defaulted>> & {
    /** The crash-loop back-off's initial delay and cap (crashLoopBackOffPeriods); unset: upstream's 10 s and 5 min. */
    crashLoopBackOff?: { initialMs: number; maxMs: number };
  };

/** Upstream's kubeGenericRuntimeManager as the pod workers use it: SyncPod, KillPod, and a removed pod's leftovers. */
export class RuntimeSyncer {
  readonly #ctx: SyncContext;

  constructor(d: RuntimeSyncerDeps) {
    this.#ctx = {
      ...d,
      crashBackoff: new CrashBackoff(d.crashLoopBackOff),
      env: d.env ?? noEnvSource,
      runtimeHandler:
        d.runtimeHandler ??
        (async (name) => {
          throw new Error(`RuntimeClass "${name}" cannot be looked up here`);
        }),
      // What CRI Status last listed (kept by the runtime probe); without one, Status is read once.
      runtimeState: d.runtimeState ?? new RuntimeState(() => d.cri.status({})),
      observe: d.observe ?? {},
    };
  }

  /** One sync of a pod: the runtime's state brought to what its spec asks; the pod is marked changed for the next read. */
  async syncPod(pod: Pod, o: SyncOptions): Promise<SyncResult> {
    try {
      return await this.#sync(pod, o);
    } finally {
      this.#ctx.view.changed(pod.metadata!.uid!);
    }
  }

  /** For the status's volumeMounts: whether the pod's containers get recursive read-only mounts (asked only when one wants them). */
  async recursiveReadOnlyMounts(pod: Pod): Promise<boolean> {
    const containers = initAndAppContainers(pod);
    return containers.some(requestsRecursiveReadOnly) && (await supportsRecursiveReadOnly(this.#ctx, pod));
  }

  /** kill.ts's killPod: every container, then the sandbox. */
  killPod(pod: Pod, status: PodRuntimeStatus, graceSeconds: number, why: string, signal?: AbortSignal): Promise<void> {
    return killPod(this.#ctx, pod, status, graceSeconds, why, signal);
  }

  /** A removed pod's sandboxes (and their containers) stopped and removed; returns what the runtime held. */
  removeSandboxes(uid: string): Promise<PodRuntimeStatus> {
    return removeSandboxes(this.#ctx, uid);
  }

  /** What the runtime side kept of a removed pod: its image pulls and crash back-offs, its logs. */
  forgetPod(uid: string, pod: Pod | undefined, status: PodRuntimeStatus): void {
    this.#ctx.images.forget(`${uid}/`);
    this.#ctx.crashBackoff.forget(`${uid}/`);
    if (pod) removePodLogs(this.#ctx, pod, status);
  }

  async #sync(pod: Pod, o: SyncOptions): Promise<SyncResult> {
    const ctx = this.#ctx;
    const uid = pod.metadata!.uid!;
    const ref = logRef(pod);
    const waiting = new Map<string, Waiting>();
    let status = await ctx.view.current(uid);
    // RestartAllContainers (restart-policy.ts), in two syncs as upstream's: the first kills and
    // removes every container, the next starts them all over. Both report the runtime as it was
    // before them and sync again at once: the status of the first shows the exit that triggered
    // it (AllContainersRestarting True), that of the second every container removed (restarted,
    // the condition False), before any new one runs.
    const restarting = allContainersCouldRestart(pod) && shouldAllContainersRestart(pod, status, o.last);
    const before = status;
    const actualOf = ctx.resizer.actualOf(uid, specAllocation(pod));
    const actions = computePodActions(pod, status, o.health, actualOf, allContainersRestarting(pod, status, o.last));
    ctx.log.v(4, 'computePodActions', { ...ref, actions });
    if (actions.containersToReset) {
      await resetContainers(ctx, pod, status, actions.containersToReset, ref);
      return { runtime: before, waiting, requeueAfterMs: REQUEUE_NOW_MS };
    }
    const resize = { pod, actions, status, actualOf, errors: o.errors, ref };
    const resizing = growForResize(ctx, resize);
    await this.#kill(pod, actions, status, ref);
    await resizeContainers(ctx, resize, resizing);
    const unmounted = await this.#mountVolumes(pod, actions, status);
    if (unmounted) return { ...unmounted, waiting };

    const userNamespaced = actions.createSandbox && wantsUserNamespace(pod);
    const sbConfig = await podSandboxConfig(ctx, pod, actions.sandboxAttempt, userNamespaced, ref);
    if (!sbConfig) return { runtime: status, waiting, requeueAfterMs: REQUEUE_ERROR_MS };
    let sandboxId = actions.sandboxId;
    if (actions.createSandbox) {
      const sandbox = await createSandbox(ctx, pod, sbConfig, actions.sandboxAttempt, userNamespaced, ref);
      if (!('id' in sandbox))
        return {
          runtime: sandbox.changed || actions.killPod ? await ctx.view.pod(uid) : status,
          waiting,
          requeueAfterMs: sandbox.requeueAfterMs,
        };
      sandboxId = sandbox.id;
      status = { ...status, sandboxes: [await ctx.view.sandboxStatus(sandboxId), ...status.sandboxes] };
    }

    const toStart = [...actions.ephemeralContainersToStart, ...actions.initContainersToStart, ...actions.containersToStart];
    const scope = { status, sandboxId: sandboxId!, sbConfig, waiting, envReads: ctx.env.session(), signal: o.signal };
    const requeueAfterMs = await this.#startContainers(pod, toStart, scope);
    // A container left waiting (its image, its config, its start) is a failed SyncResult upstream.
    if (userNamespaced) ctx.observe.userNamespacedPod?.(toStart.some(({ name }) => waiting.has(name)));
    const changed = toStart.length || actions.containersToKill.length || actions.killPod;
    if (restarting) return { runtime: before, waiting, requeueAfterMs: REQUEUE_NOW_MS };
    return { runtime: changed ? await ctx.view.pod(uid) : status, waiting, requeueAfterMs };
  }

  /** SyncPod's steps 2 and 3: the whole pod killed when its sandbox changed or it is done, then the containers to kill. */
  async #kill(pod: Pod, actions: PodActions, status: PodRuntimeStatus, ref: LogRef): Promise<void> {
    const ctx = this.#ctx;
    if (actions.killPod && actions.createSandbox) {
      // Before a new sandbox the old containers are (nearly always) dead already.
      await killPod(ctx, pod, status, MIN_GRACE_SECONDS, 'pod sandbox changed');
      // A sandbox that never got a container (its network setup failed) holds nothing worth keeping.
      for (const sb of status.sandboxes) {
        if (!status.containers.some((c) => c.sandboxId === sb.id)) await ctx.cri.removePodSandbox({ podSandboxId: sb.id });
      }
    } else if (actions.killPod) {
      // The pod is done: stop what still runs (sidecars). The sandbox goes when the pod is
      // terminated, after its final status is out, so that status is not held up by CNI teardown.
      await stopContainers(ctx, pod, status, Date.now() + podGraceSeconds(pod) * 1000);
    }
    const deadline = Date.now() + podGraceSeconds(pod) * 1000;
    for (const k of actions.containersToKill) {
      const c = status.containers.find((x) => x.id === k.id)!;
      ctx.log.info('Killing container', { ...ref, container: k.name, containerID: k.id, reason: k.reason });
      // A probe's own terminationGracePeriodSeconds, when it killed, replaces the pod's.
      const until = k.gracePeriodSeconds === undefined ? deadline : Date.now() + Math.max(MIN_GRACE_SECONDS, k.gracePeriodSeconds) * 1000;
      await killContainer(ctx, pod, c, status.sandboxes[0]?.ip, until, k.message);
    }
  }

  /**
   * Volumes before the sandbox, as upstream's WaitForAttachAndMount: a pod whose volumes cannot
   * be set up starts nothing and waits (ContainerCreating); running pods get their
   * configMap/secret/token contents refreshed here. Returns the sync's end when they are not ready.
   */
  async #mountVolumes(pod: Pod, actions: PodActions, status: PodRuntimeStatus): Promise<Omit<SyncResult, 'waiting'> | undefined> {
    const starts = actions.createSandbox || actions.initContainersToStart.length > 0 || actions.containersToStart.length > 0;
    if (!starts && !status.containers.some((c) => c.phase === 'running')) return undefined;
    const v = await this.#ctx.podLevel.mountVolumes(pod);
    if (v.ready) return undefined;
    if (v.rejection) return { runtime: status, rejected: v.rejection };
    const changed = actions.containersToKill.length || actions.killPod;
    return { runtime: changed ? await this.#ctx.view.pod(pod.metadata!.uid!) : status, requeueAfterMs: v.retryAfterMs };
  }

  /**
   * Ephemeral containers first (as upstream), then init containers one after another (a
   * sidecar must run before the next starts), then the app. Returns the soonest requeue asked.
   */
  async #startContainers(pod: Pod, toStart: { name: string }[], scope: Omit<StartScope, 'imageVolumes'>): Promise<number | undefined> {
    const ctx = this.#ctx;
    const spec = pod.spec!;
    const all = [...((spec.ephemeralContainers as Container[]) ?? []), ...(spec.initContainers ?? []), ...spec.containers];
    const specs = new Map(all.map((c) => [c.name, c]));
    // Image volumes: pulled once in this sync, when the first container is about to start (upstream's
    // getImageVolumes, made lazy by kubernetes#138655 after v1.36.3: a steady pod pulls nothing and
    // leaves no event).
    let pulls: Promise<Map<string, ImageVolumePull>> | undefined;
    const onEvent = (e: ImageEvent) => ctx.events.event(podRef(pod), e.type, e.reason, e.message);
    const imageVolumes = () => (pulls ??= pullImageVolumes(pod, ctx.images, onEvent, scope.signal));
    let requeueAfterMs: number | undefined;
    for (const { name } of toStart) {
      scope.signal?.throwIfAborted();
      const c = specs.get(name)!;
      const wait = (await startContainer(ctx, pod, c, { ...scope, imageVolumes })) ?? (isSidecarOf(spec, c) ? REQUEUE_NOW_MS : undefined);
      if (wait !== undefined) requeueAfterMs = Math.min(requeueAfterMs ?? wait, wait);
    }
    return requeueAfterMs;
  }
}

/** A restartable init container of this pod (a sidecar): the containers after it wait for it to run. */
const isSidecarOf = (spec: NonNullable<Pod['spec']>, c: Container) => isSidecar(c) && (spec.initContainers ?? []).includes(c);
