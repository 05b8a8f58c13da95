// Which runtime pods garbage collection may touch, and when a pod's content may go.
//
// Upstream assumes one kubelet per runtime, so every CRI object with a pod UID label is
// its own. Here several kubelets can share one containerd (test/e2e/kubeadm-join.test.ts runs
// extra ones with other node names and root dirs), and pod labels carry no node name.
// The mark of ownership is the pod's directory under this kubelet's root dir
// (ROOT/pods/UID, upstream's layout), made before the pod's first sandbox is created:
// a pod that is neither known to our pod workers nor has that directory is left alone,
// whatever it looks like. The directory is removed only once nothing of the pod is left
// in the runtime, so the mark lasts as long as there is something to collect. (Asking
// the apiserver would not do: a pod deleted while the kubelet was down is gone from it,
// and with it the node it ran on. The log directory would not do either: all kubelets
// on a host share /var/log/pods.)
import type { PodState } from '../pods/lifecycle.ts';

/** What the pod workers know of a pod: its lifecycle state, and whether its source deleted it. */
export interface KnownPod {
  state: PodState;
  deleted: boolean;
}

export interface Scope {
  /** The pods with a worker, by UID. */
  known: ReadonlyMap<string, KnownPod>;
  /** UIDs with a pod directory under this kubelet's root dir. */
  owned: ReadonlySet<string>;
  /** Every pod source has delivered its first complete set (upstream's sourcesReady). */
  sourcesReady: boolean;
}

/** Whether this kubelet may touch the pod's CRI objects at all. */
export const isOurs = (uid: string, s: Scope) => uid !== '' && (s.known.has(uid) || s.owned.has(uid));

/**
 * Whether everything of the pod may be removed (upstream's ShouldPodContentBeRemoved):
 * a known pod once deleted and terminated; an unknown one of ours once all sources have
 * been seen, since before that it may just not have been listed yet.
 */
export function contentRemovable(uid: string, s: Scope): boolean {
  const k = s.known.get(uid);
  if (k) return k.deleted && (k.state === 'terminated' || k.state === 'finished');
  return s.sourcesReady && s.owned.has(uid);
}
