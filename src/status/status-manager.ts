// Sends pod statuses to the apiserver: only when they changed, newest wins, one
// request in flight per pod, retried with back-off. The patch carries the pod's UID
// as a precondition so a status never lands on a recreated pod of the same name.
// Every 10 s it compares what it sent with the apiserver's copy and sends it again where
// someone else changed it (the node lifecycle controller's Ready=False, a user's patch).
import { isDeepStrictEqual } from 'node:util';
import type { Pod, PodCondition, PodIP, PodStatus } from 'kubernetes-types/core/v1.js';
import { type ApiClient, isNotFound, isConflict } from '../apiserver/client.ts';
import { backoff, jittered, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import type { ContainerType } from '../runtime/pod-config.ts';
import { apiPath } from '../apiserver/paths.ts';
import { KUBELET_CONDITIONS } from './pod-status.ts';
import { isStaticPod } from '../podutil/podutil.ts';

// sentTo: the object the status went to; a re-created mirror pod needs it again. changedAt: when
// the status first differed from what was sent (performance.now()).
// sentStatus: the status last patched, whose transient conditions a newer one may have to delete;
// sentAt: when (performance.now()), so a watch that has not caught up yet is not taken for a change.
interface Entry {
  pod: Pod;
  uid: string;
  want: string;
  sent?: string;
  sentTo?: string;
  sentStatus?: PodStatus;
  sentAt?: number;
  busy: boolean;
  status: PodStatus;
  changedAt?: number;
}

/** What the status manager reports, for upstream's status sync and container termination metrics. */
export interface StatusObserver {
  /** A status reached the apiserver this long after it first changed (several changes may have gone into it). */
  patched?(seconds: number): void;
  /** A container's status went to terminated. */
  terminated?(t: Termination): void;
}
export interface Termination {
  type: ContainerType;
  exitCode: number;
  reason: string;
}

/** The apiserver object that shows a pod's status, as last seen: the pod, or a static pod's mirror (undefined: not there yet). */
export type StatusTarget = (pod: Pod) => Pod | undefined;

/**
 * Where a pod's status goes (upstream's podManager.TranslatePodUID in the status manager's
 * syncPod): a static pod's to its mirror pod, any other's to the pod as the apiserver last showed it.
 */
export function statusTargetOf(d: {
  mirrorOf: (staticPod: Pod) => Pod | undefined;
  latest: (uid: string) => Pod | undefined;
}): StatusTarget {
  return (pod) => (isStaticPod(pod) ? d.mirrorOf(pod) : (d.latest(pod.metadata!.uid!) ?? pod));
}

export class StatusManager {
  readonly #api: ApiClient;
  readonly #log: Logger;
  readonly #pods = new Map<string, Entry>();
  readonly #observe: StatusObserver;
  readonly #target: StatusTarget;

  constructor(api: ApiClient, log: Logger, o: { observe?: StatusObserver; target?: StatusTarget } = {}) {
    this.#api = api;
    this.#log = log;
    this.#observe = o.observe ?? {};
    this.#target = o.target ?? ((p) => p);
  }

  /** Records the status the pod should show; sends it unless it is what was sent last. */
  set(pod: Pod, given: PodStatus): void {
    const uid = pod.metadata!.uid!;
    const status = withObservedGeneration(pod, given);
    const want = JSON.stringify(status);
    let e = this.#pods.get(uid);
    // Before the first status of this kubelet's, the apiserver's says what had already terminated.
    for (const t of newlyTerminated(e?.status ?? pod.status, status)) this.#observe.terminated?.(t);
    if (!e) {
      e = { pod, uid, want, busy: false, status };
      this.#pods.set(uid, e);
    }
    e.pod = pod;
    e.want = want;
    e.status = status;
    if (!this.#stale(e)) return;
    e.changedAt ??= performance.now();
    if (!e.busy) void this.#send(e);
  }

  /** Resolves when the latest status of the pod has been sent (or the pod is gone). */
  async flushed(uid: string, timeoutMs = 10_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (let e = this.#pods.get(uid); e && (e.busy || this.#stale(e)) && Date.now() < end; e = this.#pods.get(uid)) await sleep(50);
  }

  forget(uid: string): void {
    this.#pods.delete(uid);
  }

  /** The status last generated for a pod: the base for transition times and startTime. */
  last(uid: string): PodStatus | undefined {
    return this.#pods.get(uid)?.status;
  }

  /** The statuses of every pod it keeps (upstream's resize gauges count their conditions). */
  statuses(): PodStatus[] {
    return [...this.#pods.values()].map((e) => e.status);
  }

  /**
   * Every periodMs (jittered), sends again each status the apiserver holds differently from what
   * was last sent: upstream's syncBatch(all) with needsReconcile.
   */
  start(periodMs = 10_000): { stop(): void } {
    const beat = setInterval(() => this.#reconcile(periodMs / 5), jittered(periodMs, 0.2));
    return { stop: () => clearInterval(beat) };
  }

  #reconcile(settleMs: number): void {
    for (const e of this.#pods.values()) {
      if (e.busy || this.#stale(e) || !e.sentStatus || performance.now() - (e.sentAt ?? 0) < settleMs) continue;
      const observed = this.#target(e.pod);
      const differs = observed ? statusDiffers(observed.status, e.sentStatus) : [];
      if (!differs.length) continue;
      this.#log.info('Pod status differs from the one sent, sending it again', {
        pod: `${e.pod.metadata!.namespace}/${e.pod.metadata!.name}`,
        podUID: e.uid,
        fields: differs.join(','),
      });
      e.sent = undefined;
      e.changedAt ??= performance.now();
      void this.#send(e);
    }
  }

  #stale(e: Entry): boolean {
    return e.sent !== e.want || e.sentTo !== this.#target(e.pod)?.metadata?.uid;
  }

  async #send(e: Entry): Promise<void> {
    e.busy = true;
    const retry = backoff(200, 10_000);
    try {
      while (this.#pods.get(e.uid) === e && this.#stale(e)) {
        const want = e.want;
        const status = e.status;
        const { namespace: ns, name } = e.pod.metadata!;
        const target = this.#target(e.pod)?.metadata?.uid;
        try {
          if (!target) throw new Error('its mirror pod does not exist yet');
          // Strategic merge, as upstream: conditions merge by type, so those others set stay.
          const patch = withRemovals(status, [e.pod.status, e.sentStatus]);
          await this.#api.patch(
            apiPath({ resource: 'pods', namespace: ns, name, subresource: 'status' }),
            { metadata: { uid: target }, status: patch },
            'strategic',
          );
          e.sent = want;
          e.sentTo = target;
          e.sentStatus = status;
          e.sentAt = performance.now();
          if (!this.#stale(e) && e.changedAt !== undefined) {
            this.#observe.patched?.((performance.now() - e.changedAt) / 1000);
            e.changedAt = undefined;
          }
          this.#log.v(3, 'Patched pod status', { pod: `${ns}/${name}`, podUID: e.uid, phase: e.status.phase });
        } catch (err) {
          // Gone, or replaced by a pod with another UID: nothing to update (a static pod's mirror comes back).
          if (target === e.uid && (isNotFound(err) || (isConflict(err) && /UID/i.test((err as Error).message)))) {
            this.#pods.delete(e.uid);
            return;
          }
          const wait = retry.next();
          if (target)
            this.#log.warn('Failed to update pod status, will retry', { pod: `${ns}/${name}`, podUID: e.uid, err, retryInMs: wait });
          await sleep(wait);
        }
      }
    } finally {
      e.busy = false;
    }
  }
}

/** Pods with a resize pending, by the condition's reason lowercased, and with one in progress. */
export interface ResizeCounts {
  pending: Record<string, number>;
  inProgress: number;
}

/** Pure: upstream's recordPendingResizeCount and recordInProgressResizeCount over the pods' resize conditions. */
export function resizeCounts(statuses: PodStatus[]): ResizeCounts {
  const out: ResizeCounts = { pending: {}, inProgress: 0 };
  for (const s of statuses) {
    for (const c of s.conditions ?? []) {
      if (c.type === 'PodResizePending') {
        const reason = (c.reason ?? '').toLowerCase();
        out.pending[reason] = (out.pending[reason] ?? 0) + 1;
      } else if (c.type === 'PodResizeInProgress') out.inProgress++;
    }
  }
  return out;
}

// Conditions the kubelet sets only while they hold: a strategic merge keeps what the patch does
// not name, so their absence is sent as a deletion.
const TRANSIENT_CONDITIONS = ['PodResizePending', 'PodResizeInProgress'];

// A condition's fields that come and go: a Ready condition True again has neither.
const CONDITION_NOTES = ['reason', 'message'] as const;

/**
 * Pure: the status as a strategic merge patch, with "$patch: delete" for what an earlier status
 * (the apiserver's, or the last sent) had and this one does not: the transient conditions, and
 * pod IPs of a sandbox that was replaced (podIPs merge by ip, and the apiserver refuses two); and
 * a condition's reason or message it no longer has as null, as upstream's two-way merge patch
 * sends it (a failed pod's ContainersReady kept the message of its Pending days otherwise).
 */
export function withRemovals(status: PodStatus, earlier: (PodStatus | undefined)[]): PodStatus {
  let out = status;
  if (status.conditions) {
    const before = (type: string) => earlier.flatMap((s) => s?.conditions?.filter((c) => c.type === type) ?? []);
    const conditions = status.conditions.map((c) => {
      const cleared = CONDITION_NOTES.filter((k) => c[k] === undefined && before(c.type).some((o) => o[k] !== undefined));
      return cleared.length ? ({ ...c, ...Object.fromEntries(cleared.map((k) => [k, null])) } as PodCondition) : c;
    });
    const gone = TRANSIENT_CONDITIONS.filter((t) => before(t).length && !status.conditions!.some((c) => c.type === t));
    out = { ...out, conditions: [...conditions, ...gone.map((type) => ({ type, $patch: 'delete' }) as unknown as PodCondition)] };
  }
  if (status.podIPs?.length) {
    const now = new Set(status.podIPs.map((p) => p.ip));
    const gone = [...new Set(earlier.flatMap((s) => (s?.podIPs ?? []).map((p) => p.ip)))].filter((ip) => ip && !now.has(ip));
    if (gone.length) out = { ...out, podIPs: [...status.podIPs, ...gone.map((ip) => ({ ip, $patch: 'delete' }) as PodIP)] };
  }
  return out;
}

/**
 * Pure: what the apiserver's copy of a status lost of what the kubelet sent (empty: nothing):
 * another phase or pod IP, a kubelet condition of another value, a container of another state,
 * readiness or restart count. Upstream's !isPodStatusByKubeletEqual, narrowed to what someone
 * else changes, so that formatting (timestamps, defaults) never makes it send forever.
 */
export function statusDiffers(observed: PodStatus | undefined, sent: PodStatus): string[] {
  const gist = (s: PodStatus | undefined): Record<string, unknown> => {
    const out: Record<string, unknown> = { phase: s?.phase, podIP: s?.podIP };
    for (const c of s?.conditions ?? []) if (KUBELET_CONDITIONS.includes(c.type)) out[`conditions[${c.type}]`] = c.status;
    for (const [list] of STATUS_LISTS)
      for (const c of s?.[list] ?? []) out[`${list}[${c.name}]`] = [c.ready, c.started, c.restartCount, Object.keys(c.state ?? {})[0]];
    return out;
  };
  // Only what was sent: a strategic merge leaves what the patch does not name (the pod IP of a
  // pod whose sandbox stopped stays on the apiserver's copy, as upstream's does).
  const [a, b] = [gist(observed), gist(sent)];
  return Object.keys(b).filter((k) => b[k] !== undefined && !isDeepStrictEqual(a[k], b[k]));
}

const STATUS_LISTS = [
  ['containerStatuses', 'container'],
  ['initContainerStatuses', 'init_container'],
  ['ephemeralContainerStatuses', 'ephemeral_container'],
] as const;

/**
 * Pure: every status the kubelet sets observed the pod's generation, a rejection's or an
 * eviction's too (upstream's SetPodStatus with CalculatePodStatusObservedGeneration;
 * PodObservedGenerationTracking is GA).
 */
export function withObservedGeneration(pod: Pod, status: PodStatus): PodStatus {
  const generation = pod.metadata?.generation;
  return generation === undefined ? status : ({ ...status, observedGeneration: generation } as PodStatus);
}

/** Pure: the containers terminated in next that were not in prev, as upstream counts them (once each). */
export function newlyTerminated(prev: PodStatus | undefined, next: PodStatus): Termination[] {
  const out: Termination[] = [];
  for (const [list, type] of STATUS_LISTS) {
    for (const s of next[list] ?? []) {
      const t = s.state?.terminated;
      if (t && !prev?.[list]?.find((o) => o.name === s.name)?.state?.terminated)
        out.push({ type, exitCode: t.exitCode, reason: t.reason ?? '' });
    }
  }
  return out;
}
