// What the container runtime says about one pod, as plain data (upstream's pkg/kubelet/container
// vocabulary: pod and container status): the bottom layer the runtime, the prober, images,
// devices, container logs, status and gc all read. Built from CRI ListPodSandbox/ListContainers/*Status.
import type { ResourceRequirements } from 'kubernetes-types/core/v1.js';
import type { LinuxResources } from '../resources/linux-resources.ts';
import type { PodCgroupLimits } from '../resources/cgroup-limits.ts';

export interface SandboxState {
  id: string;
  attempt: number;
  ready: boolean;
  /** The primary IP CRI reports (ips[0]). */
  ip?: string;
  /** Every IP CRI reports, the primary first (dual-stack: one of each family; src/network/ips.ts). */
  ips?: string[];
  createdAtNs: string;
}

export type ContainerPhase = 'created' | 'running' | 'exited' | 'unknown';

export interface ContainerState {
  id: string;
  sandboxId: string;
  name: string;
  /** CRI metadata.attempt: how many times this container restarted before this instance. */
  attempt: number;
  phase: ContainerPhase;
  /** The image this instance was created from, as the pod spec named it then. */
  image: string;
  imageRef: string;
  /** The spec hash the container was created from (annotation io.kubernetes.container.hash). */
  hash: string;
  createdAtNs: string;
  startedAtNs?: string;
  finishedAtNs?: string;
  exitCode?: number;
  reason?: string;
  message?: string;
  /** The cgroup settings the runtime reports (CRI ContainerStatus resources.linux), or the last update sent. */
  linux?: LinuxResources;
  /** The IDs the process runs with (CRI ContainerStatus user.linux), when the runtime reports them. */
  user?: { uid: number; gid: number; supplementalGroups: number[] };
  /** The images it mounts as image volumes (CRI ContainerStatus mounts[].image), which image GC keeps. */
  imageMounts?: string[];
  /** Its log file, as its status call gave it ('' when the runtime keeps none): log rotation's. */
  logPath?: string;
}

export interface PodRuntimeStatus {
  uid: string;
  /** Newest first. */
  sandboxes: SandboxState[];
  /** Every instance of every container, newest first. */
  containers: ContainerState[];
  /** In-place resize: what the kubelet allocated and applied (from the sync; absent elsewhere). */
  resize?: ResizeState;
}

/** What pod status shows of in-place resize (allocatedResources, resources, the resize conditions). */
export interface ResizeState {
  /** Allocated cpu and memory by container name. */
  allocated: Record<string, ResourceRequirements>;
  /** Allocated pod-level cpu and memory (spec.resources); absent when the pod sets none. */
  allocatedPod?: ResourceRequirements;
  /** The pod cgroup's limits as read back, for pod status resources; absent when not running or unreadable. */
  podCgroup?: PodCgroupLimits;
  /** The resources each running container runs with, by container ID. */
  actual: Record<string, ResourceRequirements>;
  pending?: { reason: string; message: string; generation?: number };
  inProgress?: { reason?: string; message?: string; generation?: number };
}

/** Why a container is not running, as its status shows it (ErrImagePull, CrashLoopBackOff, ...). */
export interface Waiting {
  reason: string;
  message?: string;
}

/** Labels upstream puts on CRI objects, so that all state can be recovered from the runtime. */
export const labels = {
  podName: 'io.kubernetes.pod.name',
  podNamespace: 'io.kubernetes.pod.namespace',
  podUID: 'io.kubernetes.pod.uid',
  containerName: 'io.kubernetes.container.name',
  containerHash: 'io.kubernetes.container.hash',
  restartCount: 'io.kubernetes.container.restartCount',
  terminationGracePeriod: 'io.kubernetes.pod.terminationGracePeriod',
  terminationMessagePath: 'io.kubernetes.container.terminationMessagePath',
  terminationMessagePolicy: 'io.kubernetes.container.terminationMessagePolicy',
  deletionGracePeriod: 'io.kubernetes.pod.deletionGracePeriod',
  preStopHandler: 'io.kubernetes.container.preStopHandler',
  ports: 'io.kubernetes.container.ports',
} as const;

/** Newest instance of a container by name. */
export const latest = (s: PodRuntimeStatus, name: string) => s.containers.find((c) => c.name === name);
