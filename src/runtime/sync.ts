// Executes computePodActions against the runtime: the only place where a pod's
// sandbox and containers are created, started, stopped and removed.
import type { DeviceRunOptions } from '../devices/allocation.ts';
import { mkdirSync, rmSync } from 'node:fs';
import type { Container, Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import type { ImagePuller } from '../images/puller.ts';
import { containerImageVolumes, pullImageVolumes, type ImageVolumePull } from '../images/image-volumes.ts';
import type { Recorder } from '../events/recorder.ts';
import { podRef } from '../events/recorder.ts';
import type { Logger } from '../log/log.ts';
import { computePodActions, type ContainerToReset, type HealthOf } from './actions.ts';
import { runHook } from './hooks.ts';
import { ensurePodCgroup, podCgroupLimits, removePodCgroup, type PodCgroupLimits } from '../resources/pod-cgroup.ts';
import type { PodResizer } from '../resize/pod-resizer.ts';
import { effectiveResources, specAllocation, withAllocation } from '../resize/decide.ts';
import { podSpecResources } from '../resources/pod-resources.ts';
import type { PodRuntime, PodView } from './pod-runtime.ts';
import {
  containerConfig,
  containerFieldPath,
  containerType,
  podCgroup,
  podLogDir,
  sandboxConfig,
  type ContainerType,
  type NodeContext,
  type PodSandboxConfig,
} from './pod-config.ts';
import { securityContextError } from './security-context.ts';
import { type ContainerState, type PodRuntimeStatus, type Waiting, latest } from '../container/types.ts';
import { containerEnvironment } from './env.ts';
import { noEnvSource, type EnvReads, type EnvSource } from './env-sources.ts';
import type { VolumeManager } from '../volumes/volume-manager.ts';
import { createLogSymlink, legacyLogSymlink, removeLogSymlink } from '../container-logs/symlink.ts';
import { formatDuration } from '../config/duration.ts';
import { requestsRecursiveReadOnly, runtimeHandlerSupportsRecursiveReadOnlyMounts, withRecursiveReadOnly } from './recursive-read-only.ts';
import { RuntimeHandlers } from './runtime-handlers.ts';
import { CrashBackoff, crashBackoffKey } from './crash-backoff.ts';
import { terminationPrereqs } from './termination-order.ts';
import { allContainersCouldRestart, allContainersRestarting, shouldAllContainersRestart } from './restart-policy.ts';
import { calcRestartCountByLogDir } from '../container-logs/restart-count.ts';
import type { UserNamespaces } from '../userns/manager.ts';
import { wantsUserNamespace } from '../userns/mappings.ts';

export interface SyncResult {
  runtime: PodRuntimeStatus;
  waiting: Map<string, Waiting>;
  /** Sync again after this long, when something waits on a back-off. */
  requeueAfterMs?: number;
  /** The pod's runtime handler makes recursive read-only mounts (asked only when a container wants one), for the status's volumeMounts. */
  recursiveReadOnlyMounts?: boolean;
}

/** What the syncer reports for upstream's started-pods and started-containers metrics. */
export interface SyncObserver {
  /**
   * A pod sandbox was started with its RuntimeClass handler ('' the default); RunPodSandbox took
   * seconds (undefined: not called, the RuntimeClass lookup failed); error: it failed.
   */
  sandbox?(runtimeHandler: string, seconds: number | undefined, error?: unknown): void;
  /** A container is being created and started; error: creating or starting it failed. */
  container?(type: ContainerType, error?: unknown): void;
  /**
   * A sync created (or tried to create) the sandbox of a hostUsers: false pod; failed: something
   * in that sync failed (its sandbox, a container of it), as upstream's SyncPod counts
   * StartedUserNamespacedPodsTotal and, from its SyncResults, ...ErrorsTotal.
   */
  userNamespacedPod?(failed: boolean): void;
}

/** The pod's own cgroup (src/resources/pod-cgroup.ts); tests pass one that leaves /sys/fs/cgroup alone. */
export interface PodCgroups {
  /** The QoS cgroups up to date with the active pods (src/resources/qos-cgroups.ts), before a pod cgroup is made. */
  updateQos?(): void;
  ensure(path: string, limits: PodCgroupLimits): void;
  /** What is still busy is left to housekeeping's orphan cleanup. */
  remove(path: string): unknown;
}
const hostPodCgroups: PodCgroups = { ensure: ensurePodCgroup, remove: removePodCgroup };

/** What a container gets from the device plugins (src/devices/manager.ts); throws when its devices cannot be had. */
export interface ContainerDevices {
  containerOptions(pod: Pod, c: Container): Promise<DeviceRunOptions | undefined>;
}

// runc needs a moment to deliver SIGKILL after SIGTERM: upstream's minimum.
const MIN_GRACE_SECONDS = 2;

/** When to look again at a container waiting on an image: soon while a pull fails or backs off. */
const pullRetryMs = (w: Waiting) => (w.reason === 'ErrImagePull' || w.reason === 'ImagePullBackOff' ? 1000 : 10_000);

export class PodSyncer {
  readonly #cri: PodRuntime;
  readonly #view: PodView;
  readonly #images: Pick<ImagePuller, 'ensure' | 'forget'>;
  readonly #events: Recorder;
  readonly #node: NodeContext;
  readonly #log: Logger;
  readonly #crashBackoff = new CrashBackoff();
  readonly #env: EnvSource;
  readonly #volumes?: Pick<VolumeManager, 'setUp' | 'containerMounts' | 'containerDevices' | 'tearDown'>;
  /** In-place resize: what each pod is allocated and what its containers run with (src/resize). */
  readonly #resizer: PodResizer;
  readonly #runtimeHandler: (runtimeClassName: string) => Promise<string>;
  readonly #runtimeHandlers: RuntimeHandlers;
  readonly #observe: SyncObserver;
  readonly #podCgroups: PodCgroups;
  /** The device manager (src/devices): a container's devices at its creation. */
  readonly #devices?: ContainerDevices;
  /** The DRA manager (src/dra): the pod's ResourceClaims prepared before its sandbox. */
  readonly #claims?: { prepareResources(pod: Pod): Promise<void> };
  /** Pods' user namespaces (src/userns): hostUsers: false pods' IDs, on the sandbox and its containers. */
  readonly #userns?: Pick<UserNamespaces, 'forPod' | 'release'>;

  /**
   * runtime and view: the CRI calls and the runtime's state of a pod (RuntimeClient and RuntimeView, or a fake).
   * resizer: in-place resize, built by the caller over the same runtime. runtimeHandler: the handler of a
   * RuntimeClass (its error fails the sandbox, as upstream's lookup). runtimeHandlers: what CRI Status last
   * listed (kept by the runtime probe; without one, Status is read once).
   */
  constructor(d: {
    runtime: PodRuntime;
    view: PodView;
    images: Pick<ImagePuller, 'ensure' | 'forget'>;
    events: Recorder;
    node: NodeContext;
    log: Logger;
    env?: EnvSource;
    volumes?: Pick<VolumeManager, 'setUp' | 'containerMounts' | 'containerDevices' | 'tearDown'>;
    resizer: PodResizer;
    runtimeHandler?: (runtimeClassName: string) => Promise<string>;
    runtimeHandlers?: RuntimeHandlers;
    observe?: SyncObserver;
    podCgroups?: PodCgroups;
    devices?: ContainerDevices;
    claims?: { prepareResources(pod: Pod): Promise<void> };
    userns?: Pick<UserNamespaces, 'forPod' | 'release'>;
  }) {
    this.#cri = d.runtime;
    this.#view = d.view;
    this.#images = d.images;
    this.#events = d.events;
    this.#node = d.node;
    this.#log = d.log;
    this.#runtimeHandler =
      d.runtimeHandler ??
      (async (name) => {
        throw new Error(`RuntimeClass "${name}" cannot be looked up here`);
      });
    this.#runtimeHandlers = d.runtimeHandlers ?? new RuntimeHandlers(() => d.runtime.status({}));
    this.#observe = d.observe ?? {};
    this.#env = d.env ?? noEnvSource;
    this.#volumes = d.volumes;
    this.#resizer = d.resizer;
    this.#podCgroups = d.podCgroups ?? hostPodCgroups;
    this.#devices = d.devices;
    this.#claims = d.claims;
    this.#userns = d.userns;
  }

  /**
   * signal: the pod is being terminated; stop between steps (and abort a pull). health: the prober's liveness and startup states.
   * last: the status the pod showed last (whether it restarts all its containers in place).
   * The pod runs with what the kubelet allocated: a resize of its spec is accepted first (or left pending).
   */
  async syncPod(pod: Pod, signal?: AbortSignal, health?: HealthOf, last?: PodStatus): Promise<SyncResult> {
    const { allocated, pending } = this.#resizer.allocate(pod);
    const errors: string[] = [];
    const result = await this.#sync(withAllocation(pod, allocated), errors, signal, health, last).finally(() =>
      this.#view.changed(pod.metadata!.uid!),
    );
    const resize = this.#resizer.state(pod, allocated, result.runtime, pending, errors);
    if (resize.pending?.reason === 'Deferred' || resize.inProgress)
      result.requeueAfterMs = Math.min(result.requeueAfterMs ?? 10_000, 10_000);
    const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
    const rro = containers.some(requestsRecursiveReadOnly) && (await this.#supportsRecursiveReadOnly(pod));
    return { ...result, runtime: { ...result.runtime, resize }, ...(rro ? { recursiveReadOnlyMounts: true } : {}) };
  }

  async #sync(pod: Pod, errors: string[], signal?: AbortSignal, health?: HealthOf, last?: PodStatus): Promise<SyncResult> {
    const uid = pod.metadata!.uid!;
    const ref = { pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`, podUID: uid };
    const waiting = new Map<string, Waiting>();
    let requeueAfterMs: number | undefined;
    const requeue = (ms: number) => {
      requeueAfterMs = Math.min(requeueAfterMs ?? ms, ms);
    };
    let status = await this.#view.current(uid);
    // RestartAllContainers (restart-policy.ts), in two syncs as upstream's: the first kills and
    // removes every container, the next starts them all over. Both report the runtime as it was
    // before them and sync again at once: the status of the first shows the exit that triggered
    // it (AllContainersRestarting True), that of the second every container removed (restarted,
    // the condition False), before any new one runs.
    const restarting = allContainersCouldRestart(pod) && shouldAllContainersRestart(pod, status, last);
    const before = status;
    const actualOf = this.#resizer.actualOf(uid, specAllocation(pod));
    const actions = computePodActions(pod, status, health, actualOf, allContainersRestarting(pod, status, last));
    this.#log.v(4, 'computePodActions', { ...ref, actions });
    if (actions.containersToReset) {
      await this.#resetContainers(pod, status, actions.containersToReset, ref);
      return { runtime: before, waiting, requeueAfterMs: 0 };
    }
    // In-place resize: a memory limit is not set below what is in use (the kernel would reclaim or
    // refuse); then the pod cgroup grows before any container gets more. A pod-level resize
    // (spec.resources) of a running pod resizes the pod cgroup even when no container changes
    // (upstream's UpdatePodLevelResources).
    const podLevelResize = !actions.createSandbox && !actions.killPod && this.#resizer.podLevelResize(pod);
    const belowUsage =
      actions.containersToUpdate.length || podLevelResize ? this.#resizer.memoryBelowUsage(pod, actions, status, actualOf) : undefined;
    if (belowUsage) {
      errors.push(belowUsage);
      this.#events.event(podRef(pod), 'Warning', 'ResizeError', `Pod resize error: ${belowUsage}`);
      actions.containersToUpdate = [];
    }
    const resizing =
      !belowUsage && (podLevelResize || actions.containersToUpdate.length > 0 || actions.containersToKill.some((k) => k.resize));
    const shrinkPodCgroup = resizing ? this.#resizer.growPodCgroup(pod, ref, errors) : undefined;

    if (actions.killPod && actions.createSandbox) {
      // Before a new sandbox the old containers are (nearly always) dead already.
      await this.killPod(pod, status, MIN_GRACE_SECONDS, 'pod sandbox changed');
      // A sandbox that never got a container (its network setup failed) holds nothing worth keeping.
      for (const sb of status.sandboxes) {
        if (!status.containers.some((c) => c.sandboxId === sb.id)) await this.#cri.removePodSandbox({ podSandboxId: sb.id });
      }
    } else if (actions.killPod) {
      // The pod is done: stop what still runs (sidecars). The sandbox goes when the pod is
      // terminated, after its final status is out, so that status is not held up by CNI teardown.
      await this.#stopContainers(pod, status, Date.now() + this.#grace(pod) * 1000);
    }
    const deadline = Date.now() + this.#grace(pod) * 1000;
    for (const k of actions.containersToKill) {
      const c = status.containers.find((x) => x.id === k.id)!;
      this.#log.info('Killing container', { ...ref, container: k.name, containerID: k.id, reason: k.reason });
      // A probe's own terminationGracePeriodSeconds, when it killed, replaces the pod's.
      const until = k.gracePeriodSeconds === undefined ? deadline : Date.now() + Math.max(MIN_GRACE_SECONDS, k.gracePeriodSeconds) * 1000;
      await this.#killContainer(pod, c, status.sandboxes[0]?.ip, until, k.message);
    }
    if (actions.containersToUpdate.length) await this.#resizer.updateContainers(pod, actions, status, actualOf, errors, ref);
    // ...and shrinks once none needs more, before the restarted ones start with their new limits.
    shrinkPodCgroup?.();

    // Volumes before the sandbox, as upstream's WaitForAttachAndMount: a pod whose volumes
    // cannot be set up starts nothing and waits (ContainerCreating); running pods get their
    // configMap/secret/token contents refreshed here.
    const starts = actions.createSandbox || actions.initContainersToStart.length > 0 || actions.containersToStart.length > 0;
    if (this.#volumes && (starts || status.containers.some((c) => c.phase === 'running'))) {
      const v = await this.#volumes.setUp(pod);
      for (const f of v.failed) this.#events.event(podRef(pod), 'Warning', 'FailedMount', f.message);
      if (!v.ready)
        return {
          runtime: actions.containersToKill.length || actions.killPod ? await this.#view.pod(uid) : status,
          waiting,
          requeueAfterMs: v.retryAfterMs,
        };
    }

    let sandboxId = actions.sandboxId;
    let sbConfig: PodSandboxConfig;
    const userNamespaced = actions.createSandbox && wantsUserNamespace(pod);
    try {
      // Upstream's NamespacesForPod: a hostUsers: false pod's IDs, or the refusal of its handler or of a full range.
      const userns = await this.#userns?.forPod(pod, async () => ({
        handler: pod.spec?.runtimeClassName ? await this.#runtimeHandler(pod.spec.runtimeClassName) : '',
        handlers: await this.#runtimeHandlers.list(),
      }));
      sbConfig = sandboxConfig(pod, actions.sandboxAttempt, this.#node, userns);
    } catch (e) {
      // Upstream's createPodSandbox fails on generatePodSandboxConfig's error: the pod stays Pending.
      if (userNamespaced) this.#observe.userNamespacedPod?.(true);
      this.#events.event(podRef(pod), 'Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${(e as Error).message}`);
      this.#log.error('Failed to generate sandbox config for pod', { ...ref, err: e });
      return { runtime: status, waiting, requeueAfterMs: 10_000 };
    }
    if (actions.createSandbox) {
      // Upstream does not start pod-network sandboxes while the runtime's network is not
      // ready: a sandbox that fails then keeps its name reserved in containerd.
      const notReady = pod.spec?.hostNetwork ? undefined : await this.#networkNotReady();
      if (notReady) {
        this.#events.event(podRef(pod), 'Warning', 'NetworkNotReady', `network is not ready: ${notReady}`);
        return { runtime: status, waiting, requeueAfterMs: 1000 };
      }
      // The pod's ResourceClaims prepared by their DRA drivers before its sandbox, as upstream's SyncPod (PrepareDynamicResources).
      try {
        await this.#claims?.prepareResources(pod);
      } catch (e) {
        const message = `Failed to prepare dynamic resources: ${(e as Error).message}`;
        this.#events.event(podRef(pod), 'Warning', 'FailedPrepareDynamicResources', message);
        this.#log.error('Failed to prepare dynamic resources', { ...ref, err: e });
        return { runtime: status, waiting, requeueAfterMs: 10_000 };
      }
      mkdirSync(sbConfig.logDirectory!, { recursive: true });
      // The pod's own cgroup with its limits first, as upstream's SyncPod: the QoS cgroups
      // updated (UpdateQOSCgroups; a failure only logs), then the pod container manager's EnsureExists.
      try {
        this.#podCgroups.updateQos?.();
      } catch (e) {
        this.#log.v(2, 'Failed to update QoS cgroups while syncing pod', { ...ref, err: e });
      }
      try {
        this.#podCgroups.ensure(podCgroup(pod, this.#node.cgroupRoot), podCgroupLimits(pod, this.#node.podPidsLimit, this.#node.cfs));
      } catch (e) {
        this.#log.warn('Cannot set up the pod cgroup; its containers keep their own limits', { ...ref, err: e });
      }
      this.#resizer.notePodActuated(pod);
      let runtimeHandler = '';
      let started: number | undefined;
      try {
        // A pod asking for a RuntimeClass runs with its handler or not at all: never silently with the default one.
        if (pod.spec?.runtimeClassName) runtimeHandler = await this.#runtimeHandler(pod.spec.runtimeClassName);
        started = performance.now();
        sandboxId = (await this.#cri.runPodSandbox({ config: sbConfig, runtimeHandler })).podSandboxId;
        this.#observe.sandbox?.(runtimeHandler, (performance.now() - started) / 1000);
        this.#log.info('Created pod sandbox', { ...ref, sandboxID: sandboxId, attempt: actions.sandboxAttempt, runtimeHandler });
      } catch (e) {
        this.#observe.sandbox?.(runtimeHandler, started === undefined ? undefined : (performance.now() - started) / 1000, e);
        if (userNamespaced) this.#observe.userNamespacedPod?.(true);
        const msg = `Failed to create pod sandbox: ${(e as Error).message}`;
        this.#events.event(podRef(pod), 'Warning', 'FailedCreatePodSandBox', msg);
        this.#log.error('Failed to create pod sandbox', { ...ref, err: e });
        return { runtime: await this.#view.pod(uid), waiting, requeueAfterMs: 2000 };
      }
      status = { ...status, sandboxes: [await this.#view.sandboxStatus(sandboxId), ...status.sandboxes] };
    }

    // Ephemeral containers first (as upstream), then init containers one after another (a
    // sidecar must run before the next starts), then the app.
    const specs = new Map(
      [...((pod.spec!.ephemeralContainers as Container[]) ?? []), ...(pod.spec!.initContainers ?? []), ...pod.spec!.containers].map((c) => [
        c.name,
        c,
      ]),
    );
    // ConfigMaps, Secrets and Services for the containers' environment: read once in this sync.
    const envReads = this.#env.session();
    // Image volumes: pulled once in this sync, when the first container is about to start (upstream's
    // getImageVolumes, made lazy by kubernetes#138655 after v1.36.3: a steady pod pulls nothing and
    // leaves no event).
    let imageVolumePulls: Promise<Map<string, ImageVolumePull>> | undefined;
    const imageVolumes = () =>
      (imageVolumePulls ??= pullImageVolumes(
        pod,
        this.#images,
        (e) => this.#events.event(podRef(pod), e.type, e.reason, e.message),
        signal,
      ));
    const toStart = [...actions.ephemeralContainersToStart, ...actions.initContainersToStart, ...actions.containersToStart];
    for (const { name } of toStart) {
      signal?.throwIfAborted();
      const wait = await this.#startContainer(pod, specs.get(name)!, status, sandboxId!, sbConfig, waiting, imageVolumes, signal, envReads);
      if (wait !== undefined) requeue(wait);
    }
    // A container left waiting (its image, its config, its start) is a failed SyncResult upstream.
    if (userNamespaced) this.#observe.userNamespacedPod?.(toStart.some(({ name }) => waiting.has(name)));
    const changed =
      actions.ephemeralContainersToStart.length ||
      actions.initContainersToStart.length ||
      actions.containersToStart.length ||
      actions.containersToKill.length ||
      actions.killPod;
    if (restarting) return { runtime: before, waiting, requeueAfterMs: 0 };
    return { runtime: changed ? await this.#view.pod(uid) : status, waiting, requeueAfterMs };
  }

  /**
   * Upstream's SyncPod for ContainersToReset: each instance killed without a grace period (no
   * preStop hook) if it runs, then removed; its log stays, so that the next instance's restart
   * count goes on from it (calcRestartCountByLogDir). A failure ends the sync, to be tried again.
   */
  async #resetContainers(pod: Pod, status: PodRuntimeStatus, reset: ContainerToReset[], ref: { pod: string; podUID: string }) {
    this.#log.info('Restarting all containers of the pod', { ...ref, containers: reset.length });
    for (const r of reset) {
      const c = status.containers.find((x) => x.id === r.id)!;
      this.#log.v(3, 'Removing container before pod restarts', { ...ref, container: r.name, containerID: r.id, kill: r.kill });
      if (r.kill) await this.#killContainer(pod, c, status.sandboxes[0]?.ip, Date.now(), 'killing');
      await this.#cri.removeContainer({ containerId: r.id });
    }
  }

  /** Starts one container, unless it waits on a back-off or its image; returns when to look again. */
  async #startContainer(
    pod: Pod,
    c: Container,
    status: PodRuntimeStatus,
    sandboxId: string,
    sbConfig: PodSandboxConfig,
    waiting: Map<string, Waiting>,
    imageVolumes: () => Promise<ReadonlyMap<string, ImageVolumePull>>,
    signal?: AbortSignal,
    envReads?: EnvReads,
  ): Promise<number | undefined> {
    const uid = pod.metadata!.uid!;
    const name = c.name;
    const fieldPath = containerFieldPath(pod, name);
    const prev = latest(status, name);
    const key = `${uid}/${name}`;
    // As upstream's doBackOff: the newest exited instance decides, also when the latest one ran
    // until this sync killed it (a failed liveness probe), so that repeated kills back off too.
    // Keyed as upstream's GetBackoffKey (image and resources too): a new image starts a fresh back-off.
    const exited = status.containers.find((x) => x.name === name && x.phase === 'exited');
    if (exited) {
      const backoffKey = crashBackoffKey(pod, c);
      const wait = this.#crashBackoffRemaining(backoffKey, exited.finishedAtNs);
      if (wait > 0) {
        const podDesc = `${pod.metadata!.name}_${pod.metadata!.namespace}(${uid})`;
        const message = `back-off ${formatDuration(this.#crashBackoff.get(backoffKey))} restarting failed container=${name} pod=${podDesc}`;
        waiting.set(name, { reason: 'CrashLoopBackOff', message });
        this.#events.event(podRef(pod, fieldPath), 'Warning', 'BackOff', `Back-off restarting failed container ${name} in pod ${podDesc}`);
        return wait;
      }
    }
    // The image volumes it mounts, then its own image: a failed pull of either leaves it waiting
    // with the pull's reason and an "Error: <reason>" event, as upstream's toKubeContainerImageVolumes
    // and startContainer.
    const volumeImages = containerImageVolumes(c, await imageVolumes());
    if (volumeImages.failed) {
      for (const message of volumeImages.events) this.#events.event(podRef(pod, fieldPath), 'Warning', 'Failed', message);
      waiting.set(name, volumeImages.failed);
      return pullRetryMs(volumeImages.failed);
    }
    const pulled = await this.#images.ensure(
      c,
      key,
      (e) => this.#events.event(podRef(pod, e.onPod ? undefined : fieldPath), e.type, e.reason, e.message),
      pod,
      signal,
    );
    if (pulled.waiting) {
      this.#events.event(podRef(pod, fieldPath), 'Warning', 'Failed', `Error: ${pulled.waiting.reason}`);
      waiting.set(name, pulled.waiting);
      return pullRetryMs(pulled.waiting);
    }
    // A container the runtime has no instance of (all removed: RestartAllContainers, or lost) goes
    // on counting from its log files, as upstream's calcRestartCountByLogDir.
    const attempt = prev ? prev.attempt + 1 : this.#restartCountFromLogs(pod, name, sbConfig);
    // The environment and the expanded command and args, as upstream's generateContainerConfig:
    // a missing ConfigMap, Secret or key leaves the container waiting, and it is tried again.
    const resolved = await this.#environment(pod, c, status, sandboxId, envReads ?? this.#env.session());
    if ('error' in resolved) return this.#configError(pod, name, waiting, resolved.error);
    // Volume mounts, /etc/hosts and the termination message file (src/volumes), as upstream's makeMounts.
    let mounts: ReturnType<VolumeManager['containerMounts']> | undefined;
    let volumeDevices: ReturnType<VolumeManager['containerDevices']> | undefined;
    try {
      mounts = this.#volumes?.containerMounts(pod, c, {
        podIPs: [status.sandboxes.find((s) => s.id === sandboxId)?.ip ?? ''].filter(Boolean),
        clusterDomain: this.#node.clusterDomain,
        env: resolved.env,
        imageVolumes: volumeImages.specs,
      });
      // recursiveReadOnly against what the pod's runtime handler supports (src/runtime/recursive-read-only.ts).
      if (requestsRecursiveReadOnly(c)) mounts = withRecursiveReadOnly(c, mounts, await this.#supportsRecursiveReadOnly(pod));
      volumeDevices = this.#volumes?.containerDevices(pod, c);
    } catch (e) {
      return this.#configError(pod, name, waiting, (e as Error).message);
    }
    // runAsNonRoot against the image's user, and a usable seccomp profile, as upstream's generateContainerConfig.
    const insecure = securityContextError(pod, c, pulled.user, this.#node);
    if (insecure) return this.#configError(pod, name, waiting, insecure);
    // The device plugins' Allocate (and PreStartContainer) for the container's devices, as upstream's GetDeviceRunContainerOptions.
    let devices: DeviceRunOptions | undefined;
    try {
      devices = await this.#devices?.containerOptions(pod, c);
    } catch (e) {
      return this.#configError(pod, name, waiting, (e as Error).message);
    }
    let containerId: string | undefined;
    const type = containerType(pod, name);
    this.#observe.container?.(type);
    try {
      const config = containerConfig(pod, c, attempt, {
        ...resolved,
        mounts,
        volumeDevices,
        imageUser: pulled.user,
        security: this.#node,
        memoryCapacityBytes: this.#node.memoryCapacity?.(),
        swap: this.#node.swap,
        singleProcessOOMKill: this.#node.singleProcessOOMKill,
        cfs: this.#node.cfs,
        devices,
        // The same user namespace as the sandbox's (upstream's NamespacesForPod again).
        userNamespace: sbConfig.linux?.securityContext?.namespaceOptions?.usernsOptions ?? undefined,
      });
      ({ containerId } = await this.#cri.createContainer({ podSandboxId: sandboxId, config, sandboxConfig: sbConfig }));
      this.#resizer.noteActuated(uid, containerId, effectiveResources(c.resources, podSpecResources(pod)));
      this.#events.event(podRef(pod, fieldPath), 'Normal', 'Created', `Created container: ${name}`);
      await this.#cri.startContainer({ containerId });
      this.#events.event(podRef(pod, fieldPath), 'Normal', 'Started', `Started container ${name}`);
      this.#log.info('Started container', {
        pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`,
        podUID: uid,
        container: name,
        containerID: containerId,
        attempt,
      });
      this.#linkLog(pod, name, containerId, `${sbConfig.logDirectory}/${config.logPath}`);
    } catch (e) {
      this.#observe.container?.(type, e);
      const message = (e as Error).message;
      waiting.set(name, { reason: containerId ? 'RunContainerError' : 'CreateContainerError', message });
      this.#events.event(podRef(pod, fieldPath), 'Warning', 'Failed', `Error: ${message}`);
      return 10_000;
    }
    const postStart = c.lifecycle?.postStart;
    if (postStart) {
      const failed = await runHook(
        this.#cri,
        { pod, container: c, containerId, podIP: status.sandboxes[0]?.ip },
        postStart,
        this.#grace(pod),
      );
      if (failed) {
        // As upstream: the container is killed and starts again after a back-off.
        this.#events.event(podRef(pod, fieldPath), 'Warning', 'FailedPostStartHook', failed);
        await this.#cri.stopContainer({ containerId, timeout: MIN_GRACE_SECONDS });
        waiting.set(name, { reason: 'PostStartHookError', message: failed });
        return 10_000;
      }
    }
    return undefined;
  }

  /**
   * A container whose config cannot be made (upstream's generateContainerConfig failing: a missing
   * ConfigMap or Secret, a volume mount, runAsNonRoot) waits in CreateContainerConfigError with a
   * Failed event, and is tried again in 10 s; upstream's SyncPod logs every such start failure.
   */
  #configError(pod: Pod, name: string, waiting: Map<string, Waiting>, message: string): number {
    waiting.set(name, { reason: 'CreateContainerConfigError', message });
    this.#events.event(podRef(pod, containerFieldPath(pod, name)), 'Warning', 'Failed', `Error: ${message}`);
    this.#log.info('Cannot configure container', {
      pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`,
      podUID: pod.metadata!.uid,
      container: name,
      reason: 'CreateContainerConfigError',
      err: message,
    });
    return 10_000;
  }

  /** makeEnvironment's inputs: objects from the apiserver, the pod's IPs from its sandbox, the node's IP. */
  async #environment(pod: Pod, c: Container, status: PodRuntimeStatus, sandboxId: string, reads: EnvReads) {
    const hostIPs = this.#node.nodeIP ? [this.#node.nodeIP] : [];
    const ip = status.sandboxes.find((s) => s.id === sandboxId)?.ip;
    // A host-network pod's IPs are the node's, as upstream's pod status shows them.
    const podIPs = ip ? [ip] : pod.spec?.hostNetwork ? hostIPs : [];
    return containerEnvironment(pod, c, { ...(await reads(pod, c)), podIPs, hostIPs });
  }

  /**
   * Stops every container and then the sandbox, as upstream: app containers together, then
   * sidecars in reverse order; each runs its preStop hook first, within the grace period.
   * Idempotent.
   */
  async killPod(pod: Pod, status: PodRuntimeStatus, graceSeconds: number, why: string): Promise<void> {
    try {
      await this.#stopContainers(pod, status, Date.now() + Math.max(MIN_GRACE_SECONDS, graceSeconds) * 1000);
      for (const sb of status.sandboxes.filter((s) => s.ready)) await this.#cri.stopPodSandbox({ podSandboxId: sb.id });
    } finally {
      this.#view.changed(status.uid);
    }
    this.#log.info('Killed pod', {
      pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`,
      podUID: pod.metadata!.uid,
      reason: why,
      gracePeriod: graceSeconds,
    });
  }

  /** App containers together, then sidecars in reverse order, all by the deadline. */
  /**
   * Upstream's killContainersWithSyncResult: every running container is stopped at once, its
   * preStop hook run at once; a sidecar's stop signal waits for its turn (termination-order.ts).
   */
  async #stopContainers(pod: Pod, status: PodRuntimeStatus, deadline: number): Promise<void> {
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
            .map((c) => this.#killContainer(pod, c, status.sandboxes[0]?.ip, deadline, undefined, turn(name))),
        );
      } finally {
        exited.get(name)!.resolve();
      }
    });
    await Promise.all(kills);
  }

  /**
   * preStop (bounded by what is left of the grace period), then the container's turn if it
   * must wait for others (bounded too), then StopContainer with the rest.
   */
  async #killContainer(
    pod: Pod,
    c: ContainerState,
    podIP: string | undefined,
    deadline: number,
    message?: string,
    turn?: () => Promise<unknown>,
  ): Promise<void> {
    const fieldPath = containerFieldPath(pod, c.name);
    this.#events.event(podRef(pod, fieldPath), 'Normal', 'Killing', message ?? `Stopping container ${c.name}`);
    const spec = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((x) => x.name === c.name);
    const preStop = spec?.lifecycle?.preStop;
    const left = () => Math.ceil((deadline - Date.now()) / 1000);
    if (spec && preStop && c.phase === 'running' && left() > 0) {
      // upstream's executePreStopHook: the hook runs until it ends or the container dies; the
      // kill waits for it at most the grace period, and a failure is reported whenever it comes.
      const hook = runHook(this.#cri, { pod, container: spec, containerId: c.id, podIP }, preStop).then((failed) => {
        if (failed) this.#events.event(podRef(pod, fieldPath), 'Warning', 'FailedPreStopHook', failed);
      });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([hook, new Promise((r) => (timer = setTimeout(r, deadline - Date.now())))]);
      clearTimeout(timer);
    }
    if (turn && left() > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([turn(), new Promise((r) => (timer = setTimeout(r, deadline - Date.now())))]);
      clearTimeout(timer);
    }
    await this.#cri.stopContainer({ containerId: c.id, timeout: Math.max(MIN_GRACE_SECONDS, left()) });
  }

  /** A terminated pod's volumes go at once, deleted or not, as upstream's SyncTerminatedPod. Idempotent. */
  async releaseVolumes(uid: string): Promise<void> {
    await this.#volumes?.tearDown(uid);
  }

  /** A terminated pod's user namespace IDs are free again, as upstream's SyncTerminatedPod releases them. */
  releaseUserNamespace(uid: string): void {
    this.#userns?.release(uid);
  }

  /** Removes what is left of a pod that is gone: sandboxes (and their containers), logs, cgroups. */
  async removePod(uid: string, pod: Pod | undefined): Promise<void> {
    const status = await this.#view.current(uid);
    try {
      for (const sb of status.sandboxes) {
        await this.#cri.stopPodSandbox({ podSandboxId: sb.id });
        await this.#cri.removePodSandbox({ podSandboxId: sb.id });
      }
    } finally {
      this.#view.changed(uid);
    }
    await this.#volumes?.tearDown(uid);
    this.#images.forget(`${uid}/`);
    this.#resizer.forget(uid);
    this.#crashBackoff.forget(`${uid}/`);
    if (pod) {
      for (const c of status.containers) this.#unlinkLog(pod, c.name, c.id);
      rmSync(podLogDir(pod, this.#node.podLogsDir), { recursive: true, force: true });
      this.#podCgroups.remove(podCgroup(pod, this.#node.cgroupRoot));
    }
  }

  /** The /var/log/containers symlink log shippers read (upstream's legacyLogSymlink); a failure only logs. */
  #linkLog(pod: Pod, name: string, containerId: string, logFile: string) {
    const link = legacyLogSymlink(pod.metadata!.name!, pod.metadata!.namespace!, name, containerId);
    try {
      createLogSymlink(logFile, link);
    } catch (e) {
      this.#log.error('Failed to create legacy symbolic link', {
        pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`,
        podUID: pod.metadata!.uid,
        container: name,
        path: link,
        err: e,
      });
    }
  }

  #unlinkLog(pod: Pod, name: string, containerId: string) {
    try {
      removeLogSymlink(legacyLogSymlink(pod.metadata!.name!, pod.metadata!.namespace!, name, containerId));
    } catch (e) {
      this.#log.error('Failed to remove container log symlink', {
        pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`,
        podUID: pod.metadata!.uid,
        container: name,
        containerID: containerId,
        err: e,
      });
    }
  }

  /**
   * Upstream's runtimeClassSupportsRecursiveReadOnlyMounts: the pod's handler as CRI Status last listed it.
   * Asked only for containers that request it; a failed lookup is unsupported, as upstream logs and goes on.
   */
  async #supportsRecursiveReadOnly(pod: Pod): Promise<boolean> {
    try {
      const handler = pod.spec?.runtimeClassName ? await this.#runtimeHandler(pod.spec.runtimeClassName) : '';
      return runtimeHandlerSupportsRecursiveReadOnlyMounts(handler, await this.#runtimeHandlers.list());
    } catch (e) {
      this.#log.warn('Cannot tell whether the runtime handler supports recursive read-only mounts', {
        pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`,
        podUID: pod.metadata!.uid,
        err: e,
      });
      return false;
    }
  }

  /** The runtime's reason when its pod network is not ready, else undefined. */
  async #networkNotReady(): Promise<string | undefined> {
    const { status } = await this.#cri.status({});
    const net = status?.conditions.find((c) => c.type === 'NetworkReady');
    return net?.status
      ? undefined
      : `container runtime network not ready: NetworkReady=false reason:${net?.reason ?? ''} message:${net?.message ?? ''}`;
  }

  #restartCountFromLogs(pod: Pod, name: string, sbConfig: PodSandboxConfig): number {
    const dir = `${sbConfig.logDirectory}/${name}`;
    try {
      return calcRestartCountByLogDir(dir);
    } catch (e) {
      this.#log.info('Cannot calculate restartCount from the log directory', {
        pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`,
        podUID: pod.metadata!.uid,
        logDir: dir,
        err: e,
      });
      return 0;
    }
  }

  #grace(pod: Pod) {
    return Math.max(MIN_GRACE_SECONDS, pod.spec?.terminationGracePeriodSeconds ?? 30);
  }

  /**
   * ms left of the container's crash back-off since it finished; when none, arms the next (doubled)
   * one, as upstream's doBackOff (IsInBackOffSince, else Next). Stale entries (an old image's key)
   * are dropped first, as upstream's HandlePodCleanups runs Backoff.GC, so the map stays bounded.
   */
  #crashBackoffRemaining(key: string, finishedNs?: string): number {
    this.#crashBackoff.gc();
    const finished = finishedNs ? Number(BigInt(finishedNs) / 1_000_000n) : Date.now();
    if (this.#crashBackoff.isInBackOffSince(key, finished)) return Math.max(1, finished + this.#crashBackoff.get(key) - Date.now());
    this.#crashBackoff.next(key, finished);
    return 0;
  }
}
