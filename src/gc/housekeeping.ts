// Housekeeping, as upstream's HandlePodCleanups (kubelet_pods.go) and
// cleanupOrphanedPodDirs (kubelet_volumes.go), every 2 s: pods the runtime still has
// but no source knows (deleted while the kubelet was down, say) are killed and removed,
// and the directories of pods that are neither known nor in the runtime are removed.
// Nothing happens before all sources have been seen: a pod not listed yet is not an
// orphan. Pure: returns what to do.
import type { PodRuntimeStatus } from '../container/types.ts';
import type { Scope } from './ownership.ts';

export interface OrphanKill {
  uid: string;
  /** Running (or unknown) containers: stopped with a short grace period, each after its preStop hook. */
  stopContainers: string[];
  /** The pod's IP (its newest sandbox's), for an httpGet preStop hook that names no host. */
  podIP?: string;
  /** Ready sandboxes: stopped (network torn down) after the containers. */
  stopSandboxes: string[];
  /** Then everything is removed. */
  removeContainers: string[];
  removeSandboxes: string[];
}

export interface DirCleanup {
  uid: string;
  /** Names under podLogsDir (NAMESPACE_NAME_UID) of this pod; removed before the pod dir. */
  logDirs: string[];
}

export interface HousekeepingPlan {
  orphans: OrphanKill[];
  /** Pod dirs (with their log dirs) to remove. */
  dirs: DirCleanup[];
  /** Pod dirs left because something is still mounted below them (a volume not torn down). */
  mounted: string[];
}

export interface HousekeepingInput {
  runtime: ReadonlyMap<string, PodRuntimeStatus>;
  scope: Scope;
  /** Names of the directories under podLogsDir. */
  logDirs: readonly string[];
  /**
   * UIDs whose pod dir has a mount point below it. Asked only of pod dirs no pod holds, so the
   * collector can leave /proc/self/mountinfo (500+ lines with 100 pods) unread every 2 s.
   */
  mountedPods: Pick<ReadonlySet<string>, 'has'>;
}

/** The pod UID of a log directory name NAMESPACE_NAME_UID (upstream's parsePodUIDFromLogsDirectory). */
export const logDirUID = (name: string) => name.slice(name.lastIndexOf('_') + 1);

export function planHousekeeping(i: HousekeepingInput): HousekeepingPlan {
  const plan: HousekeepingPlan = { orphans: [], dirs: [], mounted: [] };
  const { scope } = i;
  if (!scope.sourcesReady) return plan;
  for (const pod of i.runtime.values()) {
    // Only pods this kubelet ran (see ownership.ts); a known pod is its worker's business.
    if (!scope.owned.has(pod.uid) || scope.known.has(pod.uid)) continue;
    if (pod.containers.length === 0 && pod.sandboxes.length === 0) continue;
    plan.orphans.push({
      uid: pod.uid,
      stopContainers: pod.containers.filter((c) => c.phase === 'running' || c.phase === 'unknown').map((c) => c.id),
      ...(pod.sandboxes[0]?.ip ? { podIP: pod.sandboxes[0].ip } : {}),
      stopSandboxes: pod.sandboxes.filter((s) => s.ready).map((s) => s.id),
      removeContainers: pod.containers.map((c) => c.id),
      removeSandboxes: pod.sandboxes.map((s) => s.id),
    });
  }
  const inRuntime = (uid: string) => {
    const p = i.runtime.get(uid);
    return !!p && (p.containers.length > 0 || p.sandboxes.length > 0);
  };
  for (const uid of scope.owned) {
    // The pod dir is the ownership mark: it goes last, once nothing is left to collect.
    if (scope.known.has(uid) || inRuntime(uid)) continue;
    if (i.mountedPods.has(uid)) {
      plan.mounted.push(uid);
      continue;
    }
    plan.dirs.push({ uid, logDirs: i.logDirs.filter((n) => logDirUID(n) === uid) });
  }
  return plan;
}
