// How each lifecycle step is carried out: the runtime sync, the status it leads to,
// and the apiserver calls that end a pod's life.
import type { Node, Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import { podRef, type Recorder } from '../events/recorder.ts';
import { admitPod, type Admission } from './admission.ts';
import { PREEMPTED } from './preemption.ts';
import { type ApiClient, isNotFound, isConflict } from '../apiserver/client.ts';
import type { RuntimeView } from '../runtime/cri-runtime.ts';
import type { PodSyncer } from './sync-pod.ts';
import { generatePodStatus, mergeConditions } from '../status/pod-status.ts';
import { type Reason, rememberReasons } from '../status/reason-cache.ts';
import type { StatusManager } from '../status/status-manager.ts';
import type { PodSteps } from './workers.ts';
import type { PodPlanInput } from '../devices/allocation.ts';
import { activeDeadlineLeft, type KillPodOptions } from './lifecycle.ts';
import type { HealthOf } from '../runtime/actions.ts';
import { REQUEUE_PAST_DEADLINE_MS } from '../runtime/requeue.ts';
import type { PodRuntimeStatus } from '../container/types.ts';
import { apiPath } from '../apiserver/paths.ts';
import { rfc3339 } from '../apiserver/time.ts';

/** The prober (src/prober) as a pod's steps use it: results read by actions and status; told what runs. */
export interface PodProbes {
  health: HealthOf;
  status(containerId: string): { ready?: boolean; started?: boolean };
  update(pod: Pod, runtime: PodRuntimeStatus, podIP: string | undefined): void;
  removePod(uid: string): void;
}

export function podSteps(d: {
  api: ApiClient;
  view: RuntimeView;
  syncer: PodSyncer;
  status: StatusManager;
  events: Recorder;
  nodeIPs: string[];
  /** PodReadyToStartContainersCondition (on unless false): the kubelet writes and owns that condition. */
  readyToStartContainers?: boolean;
  node: () => Node | undefined;
  /** Reads the Node from the apiserver past the watch: admission asks again with it (src/pods/workers.ts). */
  refreshNode?: () => Promise<void>;
  probes?: PodProbes;
  /** KubeletConfiguration allowedUnsafeSysctls, for admission. */
  allowedUnsafeSysctls?: string[];
  /** Why the host cannot enforce AppArmor, for admission; undefined: it can. */
  appArmorHostError?: string;
  /** The eviction manager's admission under node pressure, asked first as upstream's handler chain does. */
  admitUnderPressure?: (pod: Pod) => Admission;
  /** The node shutdown manager's admission (src/nodeshutdown): last in upstream's handler chain. */
  admitShutdown?: (pod: Pod) => Admission;
  /** The device manager (src/devices): what admission checks device requests against, and where an admitted pod's devices are reserved. */
  devices?: { admissionInput(pod: Pod): PodPlanInput; reserve(pod: Pod): string | undefined };
  /** The CPU manager (src/cpumanager): a pod's exclusive CPUs taken at admission, or its refusal. */
  cpus?: { admit(pod: Pod): Admission };
  /** The DRA manager (src/dra): a stopped pod's ResourceClaims unprepared. */
  claims?: { unprepareResources(pod: Pod): Promise<void> };
  /** The health of the containers' devices in their status (ResourceHealthStatus; src/status/allocated-resources.ts). */
  resourcesStatus?: (pod: Pod, status: PodStatus) => PodStatus;
}): PodSteps {
  // Each pod's waiting reasons as upstream's ReasonCache keeps them (src/status/reason-cache.ts).
  const reasons = new Map<string, Map<string, Reason>>();
  return {
    refreshNode: d.refreshNode,

    admit(pod, active) {
      const pressure = d.admitUnderPressure?.(pod);
      if (pressure && !pressure.admit) return pressure;
      const node = d.node();
      if (!node) return d.admitShutdown?.(pod) ?? { admit: true };
      const result = admitPod(pod, active, node, {
        allowedUnsafeSysctls: d.allowedUnsafeSysctls,
        appArmorHostError: d.appArmorHostError,
        devices: d.devices?.admissionInput(pod),
        cpus: d.cpus && ((p) => d.cpus!.admit(p)),
      });
      // A node going down takes no pod, critical ones included, and preempts none for them.
      const shutdown = result.admit ? d.admitShutdown?.(pod) : undefined;
      if (shutdown && !shutdown.admit) return shutdown;
      // As upstream's Allocate at admission: the devices are the pod's from now on.
      if (result.admit) d.devices?.reserve(pod);
      return result;
    },

    preempted(pod) {
      d.events.event(podRef(pod), 'Warning', PREEMPTED.reason, PREEMPTED.message);
    },

    reject(pod, r) {
      d.events.event(podRef(pod), 'Warning', r.reason, r.message);
      d.status.set(pod, {
        ...pod.status,
        phase: 'Failed',
        reason: r.reason,
        message: r.message,
        startTime: pod.status?.startTime ?? rfc3339(),
      });
    },

    async sync(pod, signal) {
      // Transition times and startTime carry on from the last status generated (a static pod has no other).
      // Conditions others own (readiness gates, ...) come from the apiserver's newer copy.
      const last = d.status.last(pod.metadata!.uid!);
      const prev = last
        ? { ...last, conditions: mergeConditions(last.conditions, pod.status?.conditions, d.readyToStartContainers) }
        : pod.status;
      const left = activeDeadlineLeft(pod, prev?.startTime, new Date());
      if (left !== undefined && left <= 0) {
        const message = 'Pod was active on the node longer than the specified deadline';
        d.events.event(podRef(pod), 'Normal', 'DeadlineExceeded', message);
        d.status.set(pod, { ...prev, phase: 'Failed', reason: 'DeadlineExceeded', message });
        return { phase: 'Failed' };
      }
      // The last status tells the sync whether all containers are being restarted in place.
      const r = await d.syncer.syncPod(pod, signal, d.probes?.health, prev);
      // upstream's rejectPod from syncPod (VolumeAttachmentLimitExceeded): Failed, nothing started.
      if (r.rejected) {
        d.events.event(podRef(pod), 'Warning', r.rejected.reason, r.rejected.message);
        d.status.set(pod, {
          ...prev,
          phase: 'Failed',
          reason: r.rejected.reason,
          message: r.rejected.message,
          startTime: prev?.startTime ?? rfc3339(),
        });
        return { phase: 'Failed' };
      }
      const uid = pod.metadata!.uid!;
      const { waiting, kept } = rememberReasons(pod, r.runtime, r.waiting, reasons.get(uid));
      if (kept.size) reasons.set(uid, kept);
      else reasons.delete(uid);
      const generated = generatePodStatus({ ...pod, status: prev }, r.runtime, {
        nodeIPs: d.nodeIPs,
        now: new Date(),
        waiting,
        terminated: false,
        probes: d.probes?.status,
        recursiveReadOnlyMounts: r.recursiveReadOnlyMounts,
        readyToStartContainers: d.readyToStartContainers,
      });
      const status = d.resourcesStatus?.(pod, generated) ?? generated;
      d.status.set(pod, status);
      // Probe what runs now; a changed result wakes this pod's worker again.
      d.probes?.update(pod, r.runtime, status.podIP);
      const deadline = activeDeadlineLeft(pod, status.startTime, new Date());
      return {
        phase: status.phase,
        requeueAfterMs:
          deadline === undefined ? r.requeueAfterMs : Math.min(r.requeueAfterMs ?? Infinity, deadline + REQUEUE_PAST_DEADLINE_MS),
      };
    },

    async terminate(uid, pod, gracePeriodSeconds, reason, kill, lastPod, signal) {
      // A pod being stopped is not probed any more (its liveness must not kill it meanwhile).
      d.probes?.removePod(uid);
      // A pod the kubelet stops itself shows why at once (upstream's killPodFunc status).
      if (kill && pod) d.status.set(pod, killedStatus(d.status.last(uid) ?? pod.status, kill));
      const before = await d.view.current(uid);
      // A pod its source dropped is stopped as last seen (its preStop hooks, its containers' names).
      const subject = pod ?? lastPod ?? ({ metadata: { uid, name: '', namespace: '' }, spec: { containers: [] } } as Pod);
      await d.syncer.killPod(subject, before, gracePeriodSeconds, reason, signal);
      // Upstream's SyncTerminatingPod: the claims unprepared once the containers are stopped (a failure retries the step).
      await d.claims?.unprepareResources(subject);
      await d.syncer.releaseVolumes(uid);
      await d.syncer.releasePodCgroup(subject);
      d.syncer.releaseUserNamespace(uid);
      if (!pod) return;
      // The final status: every container terminated, the phase final.
      const after = await d.view.pod(uid);
      const last = kill ? killedStatus(d.status.last(uid) ?? pod.status, kill) : (d.status.last(uid) ?? pod.status);
      const final = generatePodStatus({ ...pod, status: last }, after, {
        nodeIPs: d.nodeIPs,
        now: new Date(),
        waiting: new Map(),
        terminated: true,
        readyToStartContainers: d.readyToStartContainers,
      });
      // Why the pod failed (DeadlineExceeded, ...) stays on it.
      // Set, not awaited: the step ends, and the pod stops counting against the node (admission), before
      // the apiserver shows it terminal, as upstream's SyncTerminatingPod hands the status manager its
      // status and completeTerminating follows at once. Awaited, a scheduler that saw the Failed phase
      // bound a preemptor here, and admission still counted the pod it had preempted (OutOfcpu).
      d.status.set(pod, last?.reason ? { ...final, phase: last.phase, reason: last.reason, message: last.message } : final);
    },

    async finish(uid, pod, deleteFromApiserver) {
      // The final status reaches the apiserver before the pod is forgotten and deleted there.
      if (pod) await d.status.flushed(uid);
      await d.syncer.removePod(uid, pod);
      d.probes?.removePod(uid);
      d.status.forget(uid);
      reasons.delete(uid);
      if (!deleteFromApiserver || !pod) return;
      try {
        await d.api.delete(apiPath({ resource: 'pods', namespace: pod.metadata!.namespace, name: pod.metadata!.name }), {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          gracePeriodSeconds: 0,
          preconditions: { uid },
        });
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e; // already gone, or a new pod of that name
      }
    },
  };
}

/** The status of a pod the kubelet stopped itself: Failed, its reason and message, and its condition (DisruptionTarget). */
function killedStatus(last: PodStatus | undefined, kill: KillPodOptions): PodStatus {
  const conditions = (last?.conditions ?? []).filter((c) => c.type !== kill.condition?.type);
  return {
    ...last,
    phase: 'Failed',
    reason: kill.reason,
    message: kill.message,
    conditions: kill.condition ? [...conditions, kill.condition] : conditions,
  };
}
