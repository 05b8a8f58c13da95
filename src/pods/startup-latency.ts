// Upstream's pod start-up SLI (pkg/kubelet/util/pod_startup_latency_tracker.go): the time from
// a pod's creation to the first time the apiserver's watch shows all its containers running,
// in total and without the time spent pulling its images and running its init containers.
// Only pods first seen before they started count, so a restarted kubelet does not report old
// pods; nor do pods that waited for scheduling (PodScheduled False). "Stateful" pods (with a
// volume other than Secret, ConfigMap, downward API, emptyDir or projected) count only in total.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { isSidecar } from '../podutil/podutil.ts';

interface PodState {
  pulls: [number, number][];
  pulling: number[];
  recorded: boolean;
}

export interface StartupObservation {
  pod: Pod;
  totalSeconds: number;
  /** Undefined for a stateful pod. */
  sliSeconds?: number;
  /** The first pod with a network of its own since the kubelet started. */
  firstNetworkPod: boolean;
  pullSeconds: number;
  initSeconds: number;
}

export class StartupLatencyTracker {
  readonly #pods = new Map<string, PodState>();
  readonly #excluded = new Set<string>();
  readonly #observe: (o: StartupObservation) => void;
  readonly #now: () => number;
  #firstNetworkPodSeen = false;

  constructor(observe: (o: StartupObservation) => void, now: () => number = Date.now) {
    this.#observe = observe;
    this.#now = now;
  }

  /** A version of the pod from the apiserver's watch. */
  observedOnWatch(pod: Pod): void {
    const uid = pod.metadata!.uid!;
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') {
      this.#pods.delete(uid);
      return;
    }
    if (this.#excluded.has(uid)) return;
    if (unschedulable(pod)) {
      this.#pods.delete(uid);
      this.#excluded.add(uid);
      return;
    }
    const state = this.#pods.get(uid);
    if (!state) {
      if (!pod.status?.startTime) this.#pods.set(uid, { pulls: [], pulling: [], recorded: false });
      return;
    }
    if (state.recorded || !allContainersRunning(pod)) return;
    state.recorded = true;
    const totalMs = this.#now() - Date.parse(pod.metadata!.creationTimestamp ?? '');
    const pullMs = pullingTime(state.pulls);
    const initMs = initContainersTime(pod);
    const stateful = isStateful(pod);
    const firstNetworkPod = !stateful && !pod.spec?.hostNetwork && !this.#firstNetworkPodSeen;
    if (firstNetworkPod) this.#firstNetworkPodSeen = true;
    this.#observe({
      pod,
      totalSeconds: totalMs / 1000,
      sliSeconds: stateful ? undefined : (totalMs - pullMs - initMs) / 1000,
      firstNetworkPod,
      pullSeconds: pullMs / 1000,
      initSeconds: initMs / 1000,
    });
  }

  /** The kubelet began pulling an image for the pod. */
  pullStarted(uid: string): void {
    this.#pods.get(uid)?.pulling.push(this.#now());
  }

  /** A pull for the pod ended (the oldest one begun, as upstream pairs them). */
  pullFinished(uid: string): void {
    const state = this.#pods.get(uid);
    const start = state?.pulling.shift();
    if (state && start !== undefined) state.pulls.push([start, this.#now()]);
  }

  forget(uid: string): void {
    this.#pods.delete(uid);
    this.#excluded.delete(uid);
  }
}

const unschedulable = (pod: Pod) => !!pod.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False');

function allContainersRunning(pod: Pod): boolean {
  const statuses = pod.status?.containerStatuses ?? [];
  return (
    statuses.length >= (pod.spec?.containers.length ?? 0) && statuses.length > 0 && statuses.every((s) => !!s.state?.running?.startedAt)
  );
}

const STATELESS_SOURCES = ['secret', 'configMap', 'downwardAPI', 'emptyDir', 'projected'] as const;
const isStateful = (pod: Pod) => (pod.spec?.volumes ?? []).some((v) => !STATELESS_SOURCES.some((k) => v[k]));

/** Pure: milliseconds covered by the pull intervals (overlaps counted once, as upstream). */
export function pullingTime(pulls: [number, number][]): number {
  let total = 0,
    end = -Infinity;
  for (const [s, e] of [...pulls].sort((a, b) => a[0] - b[0])) {
    if (s > end) {
      total += e - s;
      end = e;
    } else if (e > end) {
      total += e - end;
      end = e;
    }
  }
  return total;
}

/** Pure: milliseconds the pod's run-to-completion init containers ran (sidecars, restartPolicy Always, do not count). */
export function initContainersTime(pod: Pod): number {
  const sidecars = new Set((pod.spec?.initContainers ?? []).filter(isSidecar).map((c) => c.name));
  let total = 0;
  for (const s of pod.status?.initContainerStatuses ?? []) {
    const t = s.state?.terminated;
    if (sidecars.has(s.name) || !t?.startedAt || !t.finishedAt) continue;
    total += Math.max(0, Date.parse(t.finishedAt) - Date.parse(t.startedAt));
  }
  return total;
}
