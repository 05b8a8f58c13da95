// What the CRI executor's files (sync, sandbox, start-container, kill, resize) share: the
// runtime, the node, the pod-level steps the kubelet lends it, and what a sync reports.
// Upstream's kubeGenericRuntimeManager holds these as fields; here one object, passed down.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { DeviceRunOptions } from '../devices/allocation.ts';
import type { Recorder } from '../events/recorder.ts';
import type { ImagePuller } from '../images/puller.ts';
import type { Logger } from '../log/log.ts';
import type { PodResizer } from '../resize/pod-resizer.ts';
import type { UserNamespaces } from '../userns/manager.ts';
import type { VolumeManager } from '../volumes/volume-manager.ts';
import type { PodRuntimeStatus, Waiting } from '../container/types.ts';
import type { CrashBackoff } from './crash-backoff.ts';
import type { EnvSource } from './env-sources.ts';
import type { ContainerType, NodeContext } from './pod-config.ts';
import type { PodRuntime, PodView } from './pod-runtime.ts';
import type { HookObserver } from './hooks.ts';
import type { RuntimeState } from './runtime-state.ts';

export interface SyncResult {
  runtime: PodRuntimeStatus;
  waiting: Map<string, Waiting>;
  /** Sync again after this long, when something waits on a back-off (requeue.ts). */
  requeueAfterMs?: number;
  /** The pod's runtime handler makes recursive read-only mounts (asked only when a container wants one), for the status's volumeMounts. */
  recursiveReadOnlyMounts?: boolean;
  /**
   * The pod is rejected (upstream's rejectPod from syncPod): its volumes cannot be attached on this
   * node (VolumeAttachmentLimitExceeded); it ends Failed with this reason and message.
   */
  rejected?: { reason: string; message: string };
}

/** What the syncer reports for upstream's started-pods and started-containers metrics. */
export interface SyncObserver extends HookObserver {
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
  /** An in-place resize was carried out in ms; success: without an error (kubelet_pod_resize_duration_milliseconds). */
  podResized?(ms: number, success: boolean): void;
}

/** What a container gets from the device plugins (src/devices/manager.ts); throws when its devices cannot be had. */
export interface ContainerDevices {
  containerOptions(pod: Pod, c: Container): Promise<DeviceRunOptions | undefined>;
}

/**
 * The kubelet-level steps the executor calls at their moment in a sync, as upstream's
 * kuberuntime calls back into the kubelet through kubecontainer.RuntimeHelper. Implemented by
 * src/pods/sync-pod.ts (upstream's Kubelet.SyncPod owns them).
 */
export interface PodLevelSteps {
  /**
   * Upstream's WaitForAttachAndMount (and its FailedMount events): not ready, the sync ends and
   * looks again after retryAfterMs. Called after this sync's kills, so that a pod stuck on a
   * volume still has its unwanted containers stopped.
   */
  mountVolumes(pod: Pod): Promise<{ ready: boolean; retryAfterMs?: number; rejection?: { reason: string; message: string } }>;
  /** Upstream's UpdateQOSCgroups and the pod container manager's EnsureExists, before a new sandbox. */
  ensurePodCgroup(pod: Pod): Promise<void>;
}

/** The container's volume mounts and block devices (src/volumes), as upstream's makeMounts. */
export type ContainerMounts = Pick<VolumeManager, 'containerMounts' | 'containerDevices'>;

export interface SyncContext {
  readonly cri: PodRuntime;
  readonly view: PodView;
  readonly images: Pick<ImagePuller, 'ensure' | 'forget'>;
  readonly events: Recorder;
  readonly node: NodeContext;
  readonly log: Logger;
  readonly crashBackoff: CrashBackoff;
  readonly env: EnvSource;
  readonly mounts?: ContainerMounts;
  /** In-place resize actuation: what each container runs with, the pod cgroup's changes (src/resize). */
  readonly resizer: PodResizer;
  /** The handler of a RuntimeClass; its error fails the sandbox, as upstream's lookup. */
  readonly runtimeHandler: (runtimeClassName: string) => Promise<string>;
  readonly runtimeState: RuntimeState;
  readonly observe: SyncObserver;
  readonly devices?: ContainerDevices;
  /** The DRA manager (src/dra): the pod's ResourceClaims prepared before its sandbox. */
  readonly claims?: { prepareResources(pod: Pod): Promise<void> };
  /** Pods' user namespaces (src/userns): a hostUsers: false pod's IDs, on the sandbox and its containers. */
  readonly userns?: Pick<UserNamespaces, 'forPod'>;
  readonly podLevel: PodLevelSteps;
}
