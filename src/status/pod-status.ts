// The status a pod shows, computed from its spec, what the runtime says and why
// containers wait. Pure; the status manager sends it only when it changed.
import type { ContainerStatus, ContainerState as ApiContainerState, Pod, PodCondition, PodStatus } from 'kubernetes-types/core/v1.js';
import type { ContainerState, PodRuntimeStatus, Waiting } from '../runtime/types.ts';
import { qosClass } from '../resources/qos.ts';

export interface StatusContext {
  nodeIP: string;
  now: Date;
  /** Why a container is not running, from the last sync (image pull errors, back-off). */
  waiting: Map<string, Waiting>;
  /** The pod was terminated by the kubelet (deleted, or finished): its phase is final. */
  terminated: boolean;
}

const rfc3339 = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z');
const nsToTime = (ns?: string) => (ns && ns !== '0' ? rfc3339(new Date(Number(BigInt(ns) / 1_000_000n))) : undefined);

function terminatedState(c: ContainerState): ApiContainerState {
  return {
    terminated: {
      exitCode: c.exitCode ?? 0,
      reason: c.reason || (c.exitCode === 0 ? 'Completed' : 'Error'),
      ...(c.message ? { message: c.message } : {}),
      startedAt: nsToTime(c.startedAtNs),
      finishedAt: nsToTime(c.finishedAtNs),
      containerID: `containerd://${c.id}`,
    },
  };
}

function containerStatus(name: string, image: string, instances: ContainerState[], waiting: Waiting | undefined): ContainerStatus {
  const [cur, prev] = instances;
  const base = { name, image, imageID: cur?.imageRef ?? '', restartCount: cur?.attempt ?? 0 };
  if (!cur) {
    return { ...base, ready: false, started: false, state: { waiting: waiting ?? { reason: 'ContainerCreating' } }, lastState: {} };
  }
  if (cur.phase === 'running') {
    return { ...base, containerID: `containerd://${cur.id}`, ready: true, started: true,
      state: { running: { startedAt: nsToTime(cur.startedAtNs) } }, lastState: prev ? terminatedState(prev) : {} };
  }
  if (cur.phase === 'exited' && waiting) {
    // Waiting to run again (CrashLoopBackOff): the last run counts as a restart.
    return { ...base, restartCount: cur.attempt + 1, containerID: `containerd://${cur.id}`, ready: false, started: false,
      state: { waiting }, lastState: terminatedState(cur) };
  }
  if (cur.phase === 'exited') {
    return { ...base, containerID: `containerd://${cur.id}`, ready: false, started: false,
      state: terminatedState(cur), lastState: prev ? terminatedState(prev) : {} };
  }
  return { ...base, containerID: `containerd://${cur.id}`, ready: false, started: false,
    state: { waiting: waiting ?? { reason: 'ContainerCreating' } }, lastState: prev ? terminatedState(prev) : {} };
}

/** Upstream's getPhase, for pods without init containers. */
export function podPhase(pod: Pod, statuses: ContainerStatus[], terminated: boolean): PodStatus['phase'] {
  let waiting = 0, running = 0, stopped = 0, succeeded = 0;
  for (const s of statuses) {
    if (s.state?.running) running++;
    else if (s.state?.terminated) { stopped++; if (s.state.terminated.exitCode === 0) succeeded++; }
    else if (s.lastState?.terminated) stopped++;
    else waiting++;
  }
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (terminated) return running === 0 && stopped === succeeded && waiting === 0 && statuses.length > 0 ? 'Succeeded' : 'Failed';
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

function cond(type: string, ok: boolean, prev: PodCondition[] | undefined, now: string, reason?: string, message?: string): PodCondition {
  const status = ok ? 'True' : 'False';
  const old = prev?.find((c) => c.type === type);
  return {
    type, status,
    lastTransitionTime: old?.status === status && old.lastTransitionTime ? old.lastTransitionTime : now,
    ...(reason ? { reason } : {}), ...(message ? { message } : {}),
  };
}

export function generatePodStatus(pod: Pod, rt: PodRuntimeStatus, ctx: StatusContext): PodStatus {
  const now = rfc3339(ctx.now);
  const prev = pod.status;
  const statuses = (pod.spec?.containers ?? []).map((c) =>
    containerStatus(c.name, c.image ?? '', rt.containers.filter((s) => s.name === c.name), ctx.waiting.get(c.name)));
  const phase = podPhase(pod, statuses, ctx.terminated);
  const sandbox = rt.sandboxes[0];
  const podIP = pod.spec?.hostNetwork ? ctx.nodeIP : sandbox?.ready ? sandbox.ip : undefined;
  const terminal = phase === 'Succeeded' || phase === 'Failed';
  const unready = statuses.filter((s) => !s.ready).map((s) => s.name);
  const notReadyReason = terminal ? 'PodCompleted' : 'ContainersNotReady';
  const notReadyMsg = terminal ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  const ours = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady'];
  return {
    phase,
    conditions: [
      cond('PodReadyToStartContainers', !!sandbox?.ready, prev?.conditions, now),
      cond('Initialized', true, prev?.conditions, now),
      cond('Ready', unready.length === 0, prev?.conditions, now, unready.length ? notReadyReason : undefined, unready.length ? notReadyMsg : undefined),
      cond('ContainersReady', unready.length === 0, prev?.conditions, now, unready.length ? notReadyReason : undefined, unready.length ? notReadyMsg : undefined),
      ...(prev?.conditions ?? []).filter((c) => !ours.includes(c.type)),
    ],
    hostIP: ctx.nodeIP,
    hostIPs: [{ ip: ctx.nodeIP }],
    ...(podIP ? { podIP, podIPs: [{ ip: podIP }] } : {}),
    startTime: prev?.startTime ?? now,
    containerStatuses: statuses,
    qosClass: qosClass(pod),
  };
}
