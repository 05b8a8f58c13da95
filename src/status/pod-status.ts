// The status a pod shows, computed from its spec, what the runtime says and why
// containers wait. Pure; the status manager sends it only when it changed.
import type {
  Container,
  ContainerStatus,
  ContainerState as ApiContainerState,
  Pod,
  PodCondition,
  PodStatus,
} from 'kubernetes-types/core/v1.js';
import type { ContainerState, PodRuntimeStatus, Waiting } from '../container/types.ts';
import { qosClass } from '../resources/qos.ts';
import { podAllocatedResources, podStatusResources, resizeConditions, withAllocation } from '../resize/decide.ts';
import { cpuAndMemory, fromLinux, withOtherResources } from '../resources/linux-resources.ts';
import { rfc3339 } from '../apiserver/time.ts';
import { isSidecar } from '../podutil/podutil.ts';
import { volumeMountStatuses } from '../runtime/recursive-read-only.ts';
import {
  ALL_CONTAINERS_RESTARTING,
  RESTARTING_ALL_CONTAINERS,
  allContainersCouldRestart,
  allContainersRestartCleanedUp,
  containerShouldRestart,
  shouldAllContainersRestart,
} from '../runtime/restart-policy.ts';
import { allContainersRestartingCondition, withPreviousStatus } from './restarted-status.ts';
import { sortPodIPs } from '../network/ips.ts';

export interface StatusContext {
  /** The node's IPs, the primary first: the pod's hostIPs, and a host-network pod's podIPs. */
  nodeIPs: string[];
  now: Date;
  /** Why a container is not running, from the last sync (image pull errors, back-off). */
  waiting: Map<string, Waiting>;
  /** The pod was terminated by the kubelet (deleted, or finished): its phase is final. */
  terminated: boolean;
  /**
   * What the probes say of a running container instance (by container ID): ready once its
   * readiness probe succeeded, started once its startup probe did; undefined while a probe has
   * no result. Absent: the pod is not probed, and a running container is ready and started at once.
   */
  probes?: (containerId: string) => { ready?: boolean; started?: boolean };
  /** The pod's runtime handler mounts read-only volumes recursively (containerd 2; 1.6 cannot: unset). */
  recursiveReadOnlyMounts?: boolean;
  /** PodReadyToStartContainersCondition (on unless false): the kubelet writes and owns that condition. */
  readyToStartContainers?: boolean;
}

const nsToTime = (ns?: string) => (ns && ns !== '0' ? rfc3339(new Date(Number(BigInt(ns) / 1_000_000n))) : undefined);

// The time the runtime's 0 stands for: upstream's toKubeContainerStatus takes time.Unix(0, 0) as
// given, so a container that never started (a StartError) shows it as its startedAt.
const EPOCH = '1970-01-01T00:00:00Z';

function terminatedState(c: ContainerState): ApiContainerState {
  return {
    terminated: {
      exitCode: c.exitCode ?? 0,
      reason: c.reason || (c.exitCode === 0 ? 'Completed' : 'Error'),
      ...(c.message ? { message: c.message } : {}),
      startedAt: nsToTime(c.startedAtNs) ?? EPOCH,
      finishedAt: nsToTime(c.finishedAtNs) ?? EPOCH,
      containerID: `containerd://${c.id}`,
    },
  };
}

interface Shape {
  defaultWaiting: string;
  init: boolean;
  sidecar: boolean;
  /** The probe results of the running instance, for a container with that probe (upstream's prober manager.UpdatePodStatus). */
  readiness?: boolean;
  startup?: boolean;
  probes?: StatusContext['probes'];
}

/**
 * The instance before the current one as lastState: terminated, but one created and never started
 * (a kubelet killed between CreateContainer and StartContainer) is waiting, as upstream's
 * convertToAPIContainerStatuses shows a created container, not a run that completed.
 */
function previousState(prev: ContainerState | undefined): ApiContainerState {
  if (!prev) return {};
  return prev.phase === 'created' ? { waiting: {} } : terminatedState(prev);
}

function containerStatus(
  name: string,
  image: string,
  instances: ContainerState[],
  waiting: Waiting | undefined,
  shape: Shape,
): ContainerStatus {
  const [cur, prev] = instances;
  // The image of the instance the status describes, not the spec's: an image edited while
  // an init container runs shows the new one only once it runs (upstream's cs.Image).
  const base = { name, image: cur?.image || image, imageID: cur?.imageRef ?? '', restartCount: cur?.attempt ?? 0 };
  if (!cur) {
    return { ...base, ready: false, started: false, state: { waiting: waiting ?? { reason: shape.defaultWaiting } }, lastState: {} };
  }
  const containerID = `containerd://${cur.id}`;
  if (cur.phase === 'running') {
    // Without probes an app container or a sidecar is ready (and started) while it runs; with
    // them, started waits for the startup probe and ready for started and the readiness probe.
    const p = shape.probes?.(cur.id);
    const started = !shape.probes || !shape.startup || p?.started === true;
    const ready = (!shape.init || shape.sidecar) && started && (!shape.probes || !shape.readiness || p?.ready === true);
    return {
      ...base,
      containerID,
      ready,
      started,
      state: { running: { startedAt: nsToTime(cur.startedAtNs) } },
      lastState: previousState(prev),
    };
  }
  if (cur.phase === 'exited' && waiting) {
    // Waiting to run again (CrashLoopBackOff), or its start failed: the count is the exited
    // instance's (upstream's cs.RestartCount); the next start is counted when it happens.
    return {
      ...base,
      containerID,
      ready: false,
      started: false,
      state: { waiting },
      lastState: terminatedState(cur),
    };
  }
  if (cur.phase === 'exited') {
    // A regular init container that succeeded stays ready: initialization is done.
    return {
      ...base,
      containerID,
      ready: shape.init && !shape.sidecar && cur.exitCode === 0,
      started: false,
      state: terminatedState(cur),
      lastState: previousState(prev),
    };
  }
  return {
    ...base,
    containerID,
    ready: false,
    started: false,
    state: { waiting: waiting ?? { reason: shape.defaultWaiting } },
    lastState: previousState(prev),
  };
}

const byName = (statuses: ContainerStatus[], name: string) => statuses.find((s) => s.name === name);
/** An app container that ran (upstream's HasAnyRegularContainerStarted): the pod was initialized. */
const anyAppStarted = (statuses: ContainerStatus[]) =>
  statuses.some((s) => s.state?.running || s.state?.terminated || s.lastState?.terminated);

/**
 * Upstream's getPhase: init containers (regular and sidecars), then app containers; whether a
 * stopped one restarts is its own restartPolicy and rules, else the pod's (ContainerRestartRules).
 */
export function podPhase(
  pod: Pod,
  statuses: ContainerStatus[],
  terminated: boolean,
  initStatuses: ContainerStatus[] = [],
): PodStatus['phase'] {
  let pendingInit = 0,
    failedInitNotRestartable = 0;
  let unknown = 0,
    running = 0,
    waiting = 0,
    stopped = 0,
    stoppedNotRestartable = 0,
    succeeded = 0;
  // A container removed to restart with all the others (RestartAllContainers) restarts too.
  const restarts = (c: Container | undefined, t: NonNullable<ApiContainerState['terminated']>) =>
    t.reason === RESTARTING_ALL_CONTAINERS || containerShouldRestart(c ?? { name: '' }, pod, t.exitCode);
  for (const c of pod.spec?.initContainers ?? []) {
    const s = byName(initStatuses, c.name);
    if (isSidecar(c)) {
      // A sidecar counts while it runs; once stopped it does not decide the phase.
      if (!s) {
        pendingInit++;
        unknown++;
      } else if (s.state?.running) {
        if (!s.started) pendingInit++;
        running++;
      } else if (s.state?.waiting && !s.lastState?.terminated) {
        pendingInit++;
        waiting++;
      }
      continue;
    }
    if (!s || s.state?.running) pendingInit++;
    else if (s.state?.terminated || s.lastState?.terminated) {
      const t = (s.state?.terminated ?? s.lastState?.terminated)!;
      if (t.exitCode !== 0 && !restarts(c, t)) failedInitNotRestartable++;
    } else pendingInit++;
  }
  for (const s of statuses) {
    const c = pod.spec?.containers?.find((x) => x.name === s.name);
    if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if (!restarts(c, s.state.terminated)) stoppedNotRestartable++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.lastState?.terminated) {
      stopped++;
      if (!restarts(c, s.lastState.terminated)) stoppedNotRestartable++;
    } else waiting++;
  }
  if (terminated) return running === 0 && stopped === succeeded && waiting === 0 && stopped > 0 ? 'Succeeded' : 'Failed';
  if (failedInitNotRestartable > 0) return 'Failed';
  if ((pendingInit > 0 && !anyAppStarted(statuses)) || waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    // Some will run again: the pod still runs.
    if (stopped !== stoppedNotRestartable) return 'Running';
    return stopped === succeeded ? 'Succeeded' : 'Failed';
  }
  return 'Pending';
}

function cond(
  type: string,
  ok: boolean,
  prev: PodCondition[] | undefined,
  now: string,
  generation: number | undefined,
  reason?: string,
  message?: string,
): PodCondition {
  const status = ok ? 'True' : 'False';
  const old = prev?.find((c) => c.type === type);
  return {
    type,
    status,
    // Which spec the kubelet looked at (PodObservedGenerationTracking, on since 1.34).
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    lastTransitionTime: old?.status === status && old.lastTransitionTime ? old.lastTransitionTime : now,
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
  };
}

/** Upstream's Initialized condition: every regular init container succeeded and every sidecar started. */
function initialized(
  pod: Pod,
  initStatuses: ContainerStatus[],
  statuses: ContainerStatus[],
  phase: string | undefined,
  prev?: PodCondition[],
): { ok: boolean; reason?: string; message?: string } {
  const incomplete = (pod.spec?.initContainers ?? [])
    .filter((c) => {
      const s = byName(initStatuses, c.name);
      return isSidecar(c) ? !s?.started : !s?.ready;
    })
    .map((c) => c.name);
  if (phase === 'Succeeded') return { ok: true, reason: 'PodCompleted' };
  if (!incomplete.length || anyAppStarted(statuses)) return { ok: true };
  // Once initialized, always: init containers restarted in place (RestartAllContainers) wait again, as upstream.
  if (prev?.some((c) => c.type === 'Initialized' && c.status === 'True')) return { ok: true };
  return { ok: false, reason: 'ContainersNotInitialized', message: `containers with incomplete status: [${incomplete.join(' ')}]` };
}

/**
 * The pod conditions the kubelet owns (upstream's PodConditionsByKubelet plus the resize ones);
 * others (readiness gates, DisruptionTarget, ...) are the apiserver's copy. PodScheduled is the
 * kubelet's too: a pod bound by spec.nodeName never met the scheduler.
 */
export const KUBELET_CONDITIONS = [
  'PodScheduled',
  'PodReadyToStartContainers',
  'Initialized',
  'Ready',
  'ContainersReady',
  'PodResizePending',
  'PodResizeInProgress',
  ALL_CONTAINERS_RESTARTING,
];

/**
 * Upstream's PodConditionByKubelet: KUBELET_CONDITIONS, but PodReadyToStartContainers with
 * PodReadyToStartContainersCondition off (the condition is then the apiserver's copy, as anyone's).
 */
export function kubeletConditions(readyToStartContainers = true): readonly string[] {
  return readyToStartContainers ? KUBELET_CONDITIONS : KUBELET_CONDITIONS.filter((c) => c !== 'PodReadyToStartContainers');
}

/** Pure: the kubelet's own conditions from its last status, everyone else's from the apiserver's object. */
export function mergeConditions(
  ours: PodCondition[] | undefined,
  apiserver: PodCondition[] | undefined,
  readyToStartContainers?: boolean,
): PodCondition[] {
  const owned = kubeletConditions(readyToStartContainers);
  return [...(ours ?? []).filter((c) => owned.includes(c.type)), ...(apiserver ?? []).filter((c) => !owned.includes(c.type))];
}

/** Upstream's readiness gates: each named condition must be True for Ready. */
function readinessGates(pod: Pod, conditions: PodCondition[] | undefined): { ok: boolean; reason?: string; message?: string } {
  const problems = (pod.spec?.readinessGates ?? [])
    .map((g) => {
      const c = conditions?.find((x) => x.type === g.conditionType);
      if (!c) return `corresponding condition of pod readiness gate "${g.conditionType}" does not exist.`;
      return c.status === 'True' ? undefined : `the status of pod readiness gate "${g.conditionType}" is not "True", but ${c.status}`;
    })
    .filter(Boolean);
  return problems.length ? { ok: false, reason: 'ReadinessGatesNotReady', message: problems.join(', ') } : { ok: true };
}

/** Upstream's ContainersReady (and so Ready): app containers and sidecars ready. */
function containersReady(
  pod: Pod,
  initStatuses: ContainerStatus[],
  statuses: ContainerStatus[],
  phase: string | undefined,
): { ok: boolean; reason?: string; message?: string } {
  if (phase === 'Succeeded') return { ok: false, reason: 'PodCompleted' };
  if (phase === 'Failed') return { ok: false, reason: 'PodFailed' };
  const sidecars = (pod.spec?.initContainers ?? []).filter(isSidecar).map((c) => byName(initStatuses, c.name));
  const unready = [...sidecars, ...statuses].filter((s) => s && !s.ready).map((s) => s!.name);
  return unready.length
    ? { ok: false, reason: 'ContainersNotReady', message: `containers with unready status: [${unready.join(' ')}]` }
    : { ok: true };
}

/**
 * Pure: a status written by someone else leaves the pod's Ready condition other than its readiness
 * gates and container statuses make it, and a sync must write it again (upstream's
 * NeedToReconcilePodReadiness; only pods with readiness gates, whose conditions others set).
 */
export function needsReadinessReconcile(pod: Pod): boolean {
  if (!pod.spec?.readinessGates?.length) return false;
  const s = pod.status ?? {};
  const current = s.conditions?.find((c) => c.type === 'Ready');
  if (!current) return false;
  const ready = containersReady(pod, s.initContainerStatuses ?? [], s.containerStatuses ?? [], s.phase);
  const want = ready.ok ? readinessGates(pod, s.conditions) : ready;
  return current.status !== (want.ok ? 'True' : 'False') || (current.message ?? '') !== (want.message ?? '');
}

export function generatePodStatus(pod: Pod, rt: PodRuntimeStatus, ctx: StatusContext): PodStatus {
  const now = rfc3339(ctx.now);
  const prev = pod.status;
  const inits = pod.spec?.initContainers ?? [];
  const defaultWaiting = inits.length ? 'PodInitializing' : 'ContainerCreating';
  // RestartAllContainers: the old instances are removed, so the last status says what they were.
  const restarting = shouldAllContainersRestart(pod, rt, prev);
  // In-place resize (upstream's convertToAPIContainerStatuses): of a container the runtime has,
  // what the kubelet allocated to it, and what it runs with: a running one's from the runtime, a
  // stopped one's as allocated. A container not yet created has neither.
  const withResources = (st: ContainerStatus, c: Container, instances: ContainerState[]): ContainerStatus => {
    if (!instances.length) return st;
    const alloc = withOtherResources(rt.resize?.allocated[c.name] ?? cpuAndMemory(c.resources), c.resources);
    const cur = st.state?.running ? instances[0] : undefined;
    const running = cur && (rt.resize?.actual[cur.id] ?? (cur.linux ? fromLinux(cur.linux, alloc) : alloc));
    const resources = running ? withOtherResources(running, c.resources) : alloc;
    return { ...st, ...(alloc.requests ? { allocatedResources: alloc.requests } : {}), resources };
  };
  // Ephemeral containers (resources false) have no resources of their own.
  const toStatus = (c: Container, init: boolean, olds: ContainerStatus[] | undefined, resources = true): ContainerStatus => {
    const instances = rt.containers.filter((s) => s.name === c.name);
    const fresh = containerStatus(c.name, c.image ?? '', instances, ctx.waiting.get(c.name), {
      defaultWaiting,
      init,
      sidecar: init && isSidecar(c),
      readiness: !!c.readinessProbe,
      startup: !!c.startupProbe,
      probes: ctx.probes,
    });
    const old = olds?.find((o) => o.name === c.name);
    const st = withPreviousStatus(fresh, old, {
      present: instances.length > 0,
      previousInstance: instances.length > 1,
      attempt: instances[0]?.attempt ?? 0,
      restarting,
      waiting: ctx.waiting.get(c.name),
    });
    // Upstream's convertToAPIContainerStatuses lists the spec's mounts in every container's status;
    // once the runtime has the container they are kept as first written ("immutable": the final
    // status of a stopped pod resolves no RRO mode again). And the identity the runtime says its
    // process runs with (containerd 2 reports it; 1.6 does not).
    const mounts = (instances.length ? old?.volumeMounts : undefined) ?? volumeMountStatuses(c, ctx.recursiveReadOnlyMounts ?? false);
    const user = instances[0]?.user;
    const out = { ...st, ...(mounts.length ? { volumeMounts: mounts } : {}), ...(user ? { user: { linux: user } } : {}) };
    return resources ? withResources(out, c, instances) : out;
  };
  // Pod-level (upstream's generateAPIPodStatus with InPlacePodLevelResourcesVerticalScaling): the
  // pod's requests as allocated, and the resources its pod cgroup enforces.
  const allocatedPod = rt.resize ? withAllocation(pod, { containers: rt.resize.allocated, pod: rt.resize.allocatedPod }) : pod;
  const podLevel = {
    resources: podStatusResources(allocatedPod, prev?.phase === 'Running', rt.resize?.podCgroup),
    allocatedResources: podAllocatedResources(allocatedPod),
  };
  // Sorted by name, as upstream's SortedContainerStatuses (init containers keep the spec's order).
  const byContainerName = (a: ContainerStatus, b: ContainerStatus) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const statuses = (pod.spec?.containers ?? []).map((c) => toStatus(c, false, prev?.containerStatuses)).sort(byContainerName);
  const initStatuses = inits.map((c) => toStatus(c, true, prev?.initContainerStatuses));
  // Ephemeral containers show their state but never count for phase or readiness.
  const ephemeral = (pod.spec?.ephemeralContainers ?? [])
    .map((c) => toStatus(c as Container, false, prev?.ephemeralContainerStatuses, false))
    .sort(byContainerName);
  const phase = podPhase(pod, statuses, ctx.terminated, initStatuses);
  const sandbox = rt.sandboxes[0];
  // Upstream's sortPodIPs: one IP of each family, the node's primary family first.
  const podIPs = pod.spec?.hostNetwork ? ctx.nodeIPs : sandbox?.ready ? sortPodIPs(sandbox.ips ?? [], ctx.nodeIPs) : [];
  const init = initialized(pod, initStatuses, statuses, phase, prev?.conditions);
  const ready = containersReady(pod, initStatuses, statuses, phase);
  const ours = kubeletConditions(ctx.readyToStartContainers);
  const podReady = ready.ok ? readinessGates(pod, prev?.conditions) : ready;
  // Upstream's GenerateAllContainersRestartingCondition, for a pod with a RestartAllContainers rule.
  const allContainersRestarting = (phase: PodStatus['phase']): PodCondition => {
    const r = allContainersRestartingCondition(phase, restarting, allContainersRestartCleanedUp(pod, rt));
    // Without observedGeneration, as upstream's.
    return cond(ALL_CONTAINERS_RESTARTING, r.status === 'True', prev?.conditions, now, undefined, r.reason, r.message);
  };
  const generation = pod.metadata?.generation;
  return {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    phase,
    conditions: [
      ...(ours.includes('PodReadyToStartContainers')
        ? [cond('PodReadyToStartContainers', !!sandbox?.ready, prev?.conditions, now, generation)]
        : []),
      cond('Initialized', init.ok, prev?.conditions, now, generation, init.reason, init.message),
      cond('Ready', podReady.ok, prev?.conditions, now, generation, podReady.reason, podReady.message),
      cond('ContainersReady', ready.ok, prev?.conditions, now, generation, ready.reason, ready.message),
      // The pod runs here, so it was scheduled (generateAPIPodStatus appends PodScheduled=True).
      cond('PodScheduled', true, prev?.conditions, now, generation),
      ...(allContainersCouldRestart(pod) ? [allContainersRestarting(phase)] : []),
      ...resizeConditions(rt.resize ?? {}, prev?.conditions, now),
      ...(prev?.conditions ?? []).filter((c) => !ours.includes(c.type)),
    ],
    hostIP: ctx.nodeIPs[0],
    hostIPs: ctx.nodeIPs.map((ip) => ({ ip })),
    ...(podIPs.length ? { podIP: podIPs[0], podIPs: podIPs.map((ip) => ({ ip })) } : {}),
    startTime: prev?.startTime ?? now,
    ...(inits.length ? { initContainerStatuses: initStatuses } : {}),
    containerStatuses: statuses,
    ...(ephemeral.length ? { ephemeralContainerStatuses: ephemeral } : {}),
    qosClass: qosClass(pod),
    resources: podLevel.resources,
    ...(Object.keys(podLevel.allocatedResources).length ? { allocatedResources: podLevel.allocatedResources } : {}),
  } as PodStatus;
}
