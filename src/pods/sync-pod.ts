// A pod's sync at the kubelet's level, as upstream's Kubelet.SyncPod, SyncTerminatingPod and
// SyncTerminatedPod (kubelet.go) wrap the container runtime's SyncPod: the resources the
// kubelet allocated (a resize of the spec accepted first, or left pending), the pod's volumes
// mounted, its cgroup (with the QoS cgroups) made before its sandbox; the CRI executor
// (src/runtime/sync.ts) does the rest. The pod's directory comes first (pod-dirs.ts).
import type { Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import type { PodRuntimeStatus } from '../container/types.ts';
import type { Recorder } from '../events/recorder.ts';
import { podRef } from '../events/recorder.ts';
import type { ImagePuller } from '../images/puller.ts';
import type { Logger } from '../log/log.ts';
import { withAllocation } from '../resize/decide.ts';
import type { PodResizer } from '../resize/pod-resizer.ts';
import { cgroupfsManager, type CgroupManager } from '../resources/cgroup-manager.ts';
import { podCgroupLimits } from '../resources/pod-cgroup.ts';
import type { HealthOf } from '../runtime/actions.ts';
import type { EnvSource } from '../runtime/env-sources.ts';
import { podCgroup, type NodeContext } from '../runtime/pod-config.ts';
import type { PodRuntime, PodView } from '../runtime/pod-runtime.ts';
import { REQUEUE_RESIZE_MS } from '../runtime/requeue.ts';
import type { RuntimeState } from '../runtime/runtime-state.ts';
import { logRef } from '../podutil/podutil.ts';
import { RuntimeSyncer, type ContainerDevices, type SyncObserver, type SyncResult } from '../runtime/sync.ts';
import type { UserNamespaces } from '../userns/manager.ts';
import type { VolumeManager } from '../volumes/volume-manager.ts';

/** The pod's own cgroup (src/resources/cgroup-manager.ts); tests pass one that leaves /sys/fs/cgroup alone. */
export interface PodCgroups extends Pick<CgroupManager, 'ensure' | 'remove'> {
  /** The QoS cgroups up to date with the active pods (src/resources/qos-cgroups.ts), before a pod cgroup is made. */
  updateQos?(): Promise<void>;
}
const hostPodCgroups: PodCgroups = cgroupfsManager();

export class PodSyncer {
  readonly #runtime: RuntimeSyncer;
  readonly #volumes?: Pick<VolumeManager, 'setUp' | 'tearDown'>;
  readonly #resizer: PodResizer;
  readonly #podCgroups: PodCgroups;
  readonly #userns?: Pick<UserNamespaces, 'release'>;
  readonly #events: Recorder;
  readonly #node: NodeContext;
  readonly #log: Logger;

  /**
   * The executor's parts (runtime and view: the CRI calls and the runtime's state of a pod, RuntimeClient
   * and RuntimeView or a fake; runtimeHandler: the handler of a RuntimeClass, its error failing the
   * sandbox; runtimeState: what the runtime's probes last said, its handlers and network) and the kubelet's: volumes, resizer (in-place
   * resize, built by the caller over the same runtime), podCgroups, userns. One object for the kubelet
   * to wire; it builds its executor.
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
    runtimeState?: RuntimeState;
    observe?: SyncObserver;
    podCgroups?: PodCgroups;
    devices?: ContainerDevices;
    claims?: { prepareResources(pod: Pod): Promise<void> };
    userns?: Pick<UserNamespaces, 'forPod' | 'release'>;
    /** The crash-loop back-off's initial delay and cap (src/runtime/crash-backoff.ts crashLoopBackOffPeriods). */
    crashLoopBackOff?: { initialMs: number; maxMs: number };
  }) {
    this.#volumes = d.volumes;
    this.#resizer = d.resizer;
    this.#podCgroups = d.podCgroups ?? hostPodCgroups;
    this.#userns = d.userns;
    this.#events = d.events;
    this.#node = d.node;
    this.#log = d.log;
    const { runtime, volumes, podCgroups: _, ...rest } = d;
    this.#runtime = new RuntimeSyncer({
      ...rest,
      cri: runtime,
      mounts: volumes,
      podLevel: { mountVolumes: (pod) => this.#mountVolumes(pod), ensurePodCgroup: (pod) => this.#ensurePodCgroup(pod) },
    });
  }

  /**
   * Upstream's Kubelet.SyncPod around the runtime's: the pod runs with what the kubelet allocated
   * (a resize of its spec accepted first, or left pending), and its resize state is what the sync did.
   * signal: the pod is being terminated. health: the prober's liveness and startup states.
   * last: the status the pod showed last (whether it restarts all its containers in place).
   */
  async syncPod(pod: Pod, signal?: AbortSignal, health?: HealthOf, last?: PodStatus): Promise<SyncResult> {
    const { allocated, pending } = this.#resizer.allocate(pod);
    const errors: string[] = [];
    const result = await this.#runtime.syncPod(withAllocation(pod, allocated), { errors, signal, health, last });
    const resize = this.#resizer.state(pod, allocated, result.runtime, pending, errors);
    // A resize under way is checked again soon; a deferred one waits for a retry (src/resize/retry.ts).
    if (resize.inProgress) result.requeueAfterMs = Math.min(result.requeueAfterMs ?? REQUEUE_RESIZE_MS, REQUEUE_RESIZE_MS);
    const rro = await this.#runtime.recursiveReadOnlyMounts(pod);
    return { ...result, runtime: { ...result.runtime, resize }, ...(rro ? { recursiveReadOnlyMounts: true } : {}) };
  }

  /** SyncTerminatingPod's kill: every container, then the sandbox (src/runtime/kill.ts). Idempotent. */
  killPod(pod: Pod, status: PodRuntimeStatus, graceSeconds: number, why: string, signal?: AbortSignal): Promise<void> {
    return this.#runtime.killPod(pod, status, graceSeconds, why, signal);
  }

  /** A terminated pod's volumes go at once, deleted or not, as upstream's SyncTerminatedPod. Idempotent. */
  async releaseVolumes(uid: string): Promise<void> {
    await this.#volumes?.tearDown(uid);
  }

  /**
   * A terminated pod's cgroup goes (its slice, with the systemd driver), as upstream's
   * SyncTerminatedPod destroys it: an evicted or failed pod stays in the apiserver, and its
   * cgroup must not wait for its deletion. What is still busy is left to housekeeping.
   */
  async releasePodCgroup(pod: Pod): Promise<void> {
    // Without cgroupsPerQOS the pod has none: upstream's SyncTerminatedPod destroys it only with cgroupsPerQOS.
    const path = podCgroup(pod, this.#node.cgroups);
    if (!path) return;
    try {
      await this.#podCgroups.remove(path);
    } catch (e) {
      this.#log.warn('Failed to remove the pod cgroup', { ...logRef(pod), err: e });
    }
  }

  /** A terminated pod's user namespace IDs are free again, as upstream's SyncTerminatedPod releases them. */
  releaseUserNamespace(uid: string): void {
    this.#userns?.release(uid);
  }

  /** Removes what is left of a pod that is gone: sandboxes (and their containers), volumes, logs, allocation, cgroup. */
  async removePod(uid: string, pod: Pod | undefined): Promise<void> {
    const status = await this.#runtime.removeSandboxes(uid);
    await this.#volumes?.tearDown(uid);
    this.#runtime.forgetPod(uid, pod, status);
    this.#resizer.forget(uid);
    const path = pod && podCgroup(pod, this.#node.cgroups);
    if (path) await this.#podCgroups.remove(path);
  }

  /**
   * Upstream's WaitForAttachAndMount: a volume that fails shows as a FailedMount event; not ready,
   * the pod waits. A failed online expansion of a mounted claim shows as VolumeResizeFailed.
   */
  async #mountVolumes(pod: Pod): Promise<{ ready: boolean; retryAfterMs?: number; rejection?: { reason: string; message: string } }> {
    if (!this.#volumes) return { ready: true };
    const v = await this.#volumes.setUp(pod);
    for (const f of v.failed) this.#events.event(podRef(pod), 'Warning', f.reason ?? 'FailedMount', f.message);
    return v;
  }

  /**
   * The pod's own cgroup with its limits, before its sandbox, as upstream's SyncPod: the QoS cgroups
   * updated (UpdateQOSCgroups; a failure only logs), then the pod container manager's EnsureExists.
   */
  async #ensurePodCgroup(pod: Pod): Promise<void> {
    // Without cgroupsPerQOS: no QoS or pod cgroups (podContainerManagerNoop.Exists is always true, so upstream's SyncPod makes none).
    const path = podCgroup(pod, this.#node.cgroups);
    if (!path) return;
    try {
      await this.#podCgroups.updateQos?.();
    } catch (e) {
      this.#log.v(2, 'Failed to update QoS cgroups while syncing pod', { ...logRef(pod), err: e });
    }
    try {
      await this.#podCgroups.ensure(path, podCgroupLimits(pod, this.#node.podPidsLimit, this.#node.cfs));
    } catch (e) {
      this.#log.warn('Cannot set up the pod cgroup; its containers keep their own limits', { ...logRef(pod), err: e });
    }
  }
}
