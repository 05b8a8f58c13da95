// What computePodActions (actions.ts) decides, as plain data: the sync (sync.ts) carries it out.
// Apart from the decision so that its helpers (init-actions.ts, container-checks.ts) share the
// vocabulary without importing the decision itself (upstream's podActions struct).
import type { ResourceRequirements } from 'kubernetes-types/core/v1.js';
import type { ContainerState } from '../container/types.ts';

export interface PodActions {
  /** Stop what runs: everything before a new sandbox, or (without one) the sidecars of a pod that is done. */
  killPod: boolean;
  createSandbox: boolean;
  /** The sandbox to use, when kept. */
  sandboxId?: string;
  /** CRI attempt of the sandbox to create. */
  sandboxAttempt: number;
  /** Init containers to start, in spec order (a regular one only when all before it are done). */
  initContainersToStart: Start[];
  /** App containers to start, once the pod is initialized. */
  containersToStart: Start[];
  /** Ephemeral containers (kubectl debug) added since: each runs once, never restarted. */
  ephemeralContainersToStart: Start[];
  containersToKill: ContainerToKill[];
  /** In-place resize: running containers whose cgroup gets their allocated resources (CRI UpdateContainerResources). */
  containersToUpdate: Update[];
  /**
   * RestartAllContainers: every instance of every init and app container, killed if it runs and
   * removed, in this order; the containers whose exit triggered it last. Only then, nothing else.
   */
  containersToReset?: ContainerToReset[];
}
export interface ContainerToReset {
  id: string;
  name: string;
  /** It runs (or may): stop it first, without a grace period. */
  kill: boolean;
}
export interface Update {
  id: string;
  name: string;
  /** The allocated cpu and memory to apply (effective: pod-level limits for those the container does not set). */
  resources: ResourceRequirements;
  changed: ('cpu' | 'memory')[];
}
export interface Start {
  name: string;
  reason: string;
}
export interface ContainerToKill {
  id: string;
  name: string;
  reason: string;
  /** The Killing event's message, when it must say why (a failed probe); else "Stopping container X". */
  message?: string;
  /** The probe's terminationGracePeriodSeconds, which replaces the pod's for this kill. */
  gracePeriodSeconds?: number;
  /** The container restarts to get its new resources (resizePolicy RestartContainer). */
  resize?: boolean;
}

/**
 * What a running container instance runs with (cpu and memory, as API resources); undefined:
 * unknown, and nothing is resized. Absent: the pod's resources are never compared.
 */
export type ActualOf = (s: ContainerState) => ResourceRequirements | undefined;

/** What the prober knows of a running container instance (results of its liveness and startup probes). */
export interface ProbeHealth {
  liveness?: 'Success' | 'Failure' | 'Unknown';
  startup?: 'Success' | 'Failure' | 'Unknown';
}
/** Looks up an instance's probe states by container ID; absent: the pod is not probed. */
export type HealthOf = (containerId: string) => ProbeHealth | undefined;
