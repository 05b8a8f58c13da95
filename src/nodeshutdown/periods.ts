// Which pods go down when during a graceful node shutdown, as upstream's podManager
// (pkg/kubelet/nodeshutdown/nodeshutdown_manager.go): the configured periods become
// priority groups, lowest priority first; each pod gets its group's grace period, or its
// own when shorter. Pure.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { SYSTEM_CRITICAL_PRIORITY } from '../podutil/podutil.ts';
import { goDuration } from '../apiserver/duration.ts';
import { featureEnabled } from '../features/gates.ts';

/** KubeletConfiguration shutdownGracePeriodByPodPriority entry. */
export interface ShutdownGracePeriodByPodPriority {
  priority: number;
  shutdownGracePeriodSeconds: number;
}

export interface ShutdownConfig {
  shutdownGracePeriodMs: number;
  shutdownGracePeriodCriticalPodsMs: number;
  shutdownGracePeriodByPodPriority: ShutdownGracePeriodByPodPriority[];
  featureGates: Record<string, boolean>;
}

/** scheduling.DefaultPriorityWhenNoDefaultClassExists */
const DEFAULT_PRIORITY = 0;

// Both gates are beta and on by default in v1.36.
const gracefulShutdown = (c: ShutdownConfig) => featureEnabled(c.featureGates, 'GracefulNodeShutdown');
export const byPodPriorityEnabled = (c: ShutdownConfig) =>
  gracefulShutdown(c) && featureEnabled(c.featureGates, 'GracefulNodeShutdownBasedOnPodPriority');

/**
 * upstream's migrateConfig: shutdownGracePeriod and shutdownGracePeriodCriticalPods as two
 * groups, the pods below system-critical priority and the critical ones. Whole seconds, as
 * upstream divides the durations.
 */
export function migrateConfig(periodMs: number, criticalMs: number): ShutdownGracePeriodByPodPriority[] {
  if (periodMs === 0) return [];
  const defaultMs = periodMs - criticalMs;
  if (defaultMs < 0) return [];
  return [
    { priority: DEFAULT_PRIORITY, shutdownGracePeriodSeconds: Math.trunc(defaultMs / 1000) },
    { priority: SYSTEM_CRITICAL_PRIORITY, shutdownGracePeriodSeconds: Math.trunc((periodMs - defaultMs) / 1000) },
  ];
}

/**
 * upstream's newPodManager: shutdownGracePeriodByPodPriority as given (when its gate is on and
 * it is set), else the migrated pair; sorted by priority, lowest first. Empty: the manager is off.
 */
export function shutdownPeriods(c: ShutdownConfig): ShutdownGracePeriodByPodPriority[] {
  if (!gracefulShutdown(c)) return [];
  const periods =
    byPodPriorityEnabled(c) && c.shutdownGracePeriodByPodPriority.length
      ? c.shutdownGracePeriodByPodPriority.map((p) => ({ ...p }))
      : migrateConfig(c.shutdownGracePeriodMs, c.shutdownGracePeriodCriticalPodsMs);
  return periods.sort((a, b) => a.priority - b.priority);
}

/** upstream's periodRequested: what logind's InhibitDelayMaxSec must allow, in seconds. */
export const totalGracePeriodSeconds = (periods: ShutdownGracePeriodByPodPriority[]) =>
  periods.reduce((sum, p) => sum + p.shutdownGracePeriodSeconds, 0);

export interface ShutdownGroup extends ShutdownGracePeriodByPodPriority {
  pods: Pod[];
}

/**
 * upstream's groupByPriority: a pod joins the group of the highest priority not above its
 * own; below the lowest it joins the lowest, above the highest the highest. Groups stay in
 * order, lowest priority first: that is the order they are terminated in.
 */
export function groupByPriority(periods: ShutdownGracePeriodByPodPriority[], pods: Pod[]): ShutdownGroup[] {
  const groups: ShutdownGroup[] = periods.map((p) => ({ ...p, pods: [] }));
  if (!groups.length) return groups;
  for (const pod of pods) {
    const priority = pod.spec?.priority ?? 0;
    let index = groups.findIndex((g) => g.priority >= priority);
    if (index === -1) index = groups.length - 1;
    else if (index > 0 && groups[index]!.priority > priority) index--;
    groups[index]!.pods.push(pod);
  }
  return groups;
}

/** The grace period a pod gets: its group's, or its own terminationGracePeriodSeconds when not longer. */
export function podShutdownGracePeriodSeconds(pod: Pod, groupSeconds: number): number {
  const own = pod.spec?.terminationGracePeriodSeconds;
  return own !== undefined && own !== null && own <= groupSeconds ? own : groupSeconds;
}

/** Pure: upstream's ValidateKubeletConfiguration on graceful node shutdown, in its words; undefined: valid. */
export function shutdownConfigError(c: ShutdownConfig): string | undefined {
  const period = c.shutdownGracePeriodMs,
    critical = c.shutdownGracePeriodCriticalPodsMs;
  const subSecond = (ms: number) => ms < 0 || (ms > 0 && ms < 1000);
  if (gracefulShutdown(c)) {
    if (critical > period)
      return `invalid configuration: shutdownGracePeriodCriticalPods ${goDuration(critical)} must be <= shutdownGracePeriod ${goDuration(period)}`;
    if (subSecond(period))
      return `invalid configuration: shutdownGracePeriod ${goDuration(period)} must be either zero or otherwise >= 1 sec`;
    if (subSecond(critical))
      return `invalid configuration: shutdownGracePeriodCriticalPods ${goDuration(critical)} must be either zero or otherwise >= 1 sec`;
  } else if (period > 0 || critical > 0) {
    return 'invalid configuration: specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires feature gate GracefulNodeShutdown';
  }
  const byPriority = c.shutdownGracePeriodByPodPriority.length > 0;
  if (featureEnabled(c.featureGates, 'GracefulNodeShutdownBasedOnPodPriority')) {
    if (byPriority && (period > 0 || critical > 0))
      return 'invalid configuration: Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time';
  } else if (byPriority) {
    return 'invalid configuration: Specifying shutdownGracePeriodByPodPriority requires feature gate GracefulNodeShutdownBasedOnPodPriority';
  }
  return undefined;
}
