// Whether a container that stopped runs again: the pod's restartPolicy, overridden by the
// container's own restartPolicy and restartPolicyRules (ContainerRestartRules), and the rule
// action that restarts every container of the pod in place (RestartAllContainersOnContainerExits);
// both beta and on in 1.36. Pure. Mirrors upstream's podutil (pkg/api/v1/pod/util.go:
// ContainerShouldRestart, FindMatchingContainerRestartRule, AllContainersCouldRestart) and
// kubecontainer (pkg/kubelet/container/helpers.go: ShouldContainerBeRestarted,
// ShouldAllContainersRestart, AllContainersRestartCleanedUp).
import type { Container, ContainerStatus, Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import { type PodRuntimeStatus, latest } from '../container/types.ts';
import { initAndAppContainers } from '../podutil/podutil.ts';

/** A container's restartPolicyRules entry (not in kubernetes-types 1.30). */
export interface ContainerRestartRule {
  /** 'Restart' or 'RestartAllContainers'. */
  action: string;
  exitCodes?: { operator: string; values?: number[] };
}
type WithRules = Container & { restartPolicyRules?: ContainerRestartRule[] };
const rulesOf = (c: Container) => (c as WithRules).restartPolicyRules ?? [];

/** The pod condition the kubelet sets while it restarts all containers in place (v1.AllContainersRestarting). */
export const ALL_CONTAINERS_RESTARTING = 'AllContainersRestarting';
/** Its reason while True (upstream's status.RestartAllContainersStarted). */
export const RESTART_ALL_CONTAINERS_STARTED = 'RestartAllContainersStarted';
/** The reason on a container status removed by such a restart (upstream's kubelet RestartingAllContainers). */
export const RESTARTING_ALL_CONTAINERS = 'RestartingAllContainers';

/** Upstream's FindMatchingContainerRestartRule: the first rule whose exit codes match (In or NotIn). */
export function findMatchingRestartRule(c: Container, exitCode: number): ContainerRestartRule | undefined {
  return rulesOf(c).find((r) => {
    if (!r.exitCodes) return false;
    const listed = (r.exitCodes.values ?? []).includes(exitCode);
    if (r.exitCodes.operator === 'In') return listed;
    if (r.exitCodes.operator === 'NotIn') return !listed;
    return false;
  });
}

/**
 * Upstream's ContainerShouldRestart: a matching rule first (both actions restart), then the
 * container's restartPolicy, then the pod's (Always when unset).
 */
export function containerShouldRestart(c: Container, pod: Pod, exitCode: number): boolean {
  if (c.restartPolicy) {
    const rule = findMatchingRestartRule(c, exitCode);
    if (rule?.action === 'Restart' || rule?.action === 'RestartAllContainers') return true;
    if (c.restartPolicy === 'Always') return true;
    if (c.restartPolicy === 'OnFailure') return exitCode !== 0;
    if (c.restartPolicy === 'Never') return false;
  }
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (policy === 'OnFailure') return exitCode !== 0;
  return policy !== 'Never';
}

/** Upstream's AllContainersCouldRestart: some init or app container has a RestartAllContainers rule. */
export function allContainersCouldRestart(pod: Pod): boolean {
  return initAndAppContainers(pod).some((c) => rulesOf(c).some((r) => r.action === 'RestartAllContainers'));
}

/**
 * Upstream's ShouldContainerBeRestarted: never for a pod being deleted; a container never
 * started (or only created, or in an unknown state) starts; one that exited by its policy.
 */
export function shouldContainerBeRestarted(c: Container, pod: Pod, rt: PodRuntimeStatus): boolean {
  if (pod.metadata?.deletionTimestamp) return false;
  const s = latest(rt, c.name);
  if (!s) return true;
  if (s.phase === 'running') return false;
  if (s.phase === 'unknown' || s.phase === 'created') return true;
  return containerShouldRestart(c, pod, s.exitCode ?? 0);
}

const triggers = (c: Container, exitCode: number) => findMatchingRestartRule(c, exitCode)?.action === 'RestartAllContainers';

/**
 * Upstream's ShouldAllContainersRestart: the last status says all containers are restarting, or
 * a container (its newest instance in the runtime, or its last status) exited with a code whose
 * rule is RestartAllContainers.
 */
export function shouldAllContainersRestart(pod: Pod, rt: PodRuntimeStatus | undefined, last: PodStatus | undefined): boolean {
  if (last?.conditions?.some((c) => c.type === ALL_CONTAINERS_RESTARTING && c.status === 'True')) return true;
  const statuses = [...(last?.initContainerStatuses ?? []), ...(last?.containerStatuses ?? [])];
  return initAndAppContainers(pod).some((c) => {
    const s = rt && latest(rt, c.name);
    if (s?.phase === 'exited' && triggers(c, s.exitCode ?? 0)) return true;
    const api: ContainerStatus | undefined = statuses.find((x) => x.name === c.name);
    const t = api?.state?.terminated;
    return !!t && triggers(c, t.exitCode);
  });
}

/** Upstream's AllContainersRestartCleanedUp: the runtime holds no init or app container of the pod any more. */
export function allContainersRestartCleanedUp(pod: Pod, rt: PodRuntimeStatus): boolean {
  return !initAndAppContainers(pod).some((c) => latest(rt, c.name));
}

/**
 * Whether the pod is in the middle of restarting all its containers, the old ones not all
 * removed yet: upstream's AllContainersRestarting condition is True (GenerateAllContainersRestartingCondition,
 * before a terminal phase), which makes computePodActions reset every container.
 */
export function allContainersRestarting(pod: Pod, rt: PodRuntimeStatus, last: PodStatus | undefined): boolean {
  return allContainersCouldRestart(pod) && shouldAllContainersRestart(pod, rt, last) && !allContainersRestartCleanedUp(pod, rt);
}
