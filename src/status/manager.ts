// Sends pod statuses to the apiserver: only when they changed, newest wins, one
// request in flight per pod, retried with back-off. The patch carries the pod's UID
// as a precondition so a status never lands on a recreated pod of the same name.
import type { Pod, PodCondition, PodStatus } from 'kubernetes-types/core/v1.js';
import { type ApiClient, isNotFound, isConflict } from '../apiserver/client.ts';
import { backoff, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';

// sentTo: the object the status went to; a re-created mirror pod needs it again.
interface Entry { pod: Pod; uid: string; want: string; sent?: string; sentTo?: string; busy: boolean; status: PodStatus }

/** The UID of the apiserver object that shows a pod's status: its own, or a static pod's mirror (undefined: not there yet). */
export type StatusTarget = (pod: Pod) => string | undefined;

export class StatusManager {
  readonly #api: ApiClient;
  readonly #log: Logger;
  readonly #pods = new Map<string, Entry>();
  readonly #onPatch?: () => void;
  readonly #target: StatusTarget;

  constructor(api: ApiClient, log: Logger, o: { onPatch?: () => void; target?: StatusTarget } = {}) {
    this.#api = api; this.#log = log; this.#onPatch = o.onPatch; this.#target = o.target ?? ((p) => p.metadata!.uid);
  }

  /** Records the status the pod should show; sends it unless it is what was sent last. */
  set(pod: Pod, status: PodStatus): void {
    const uid = pod.metadata!.uid!;
    const want = JSON.stringify(status);
    let e = this.#pods.get(uid);
    if (!e) {
      e = { pod, uid, want, busy: false, status };
      this.#pods.set(uid, e);
    }
    e.pod = pod;
    e.want = want;
    e.status = status;
    if (this.#stale(e) && !e.busy) void this.#send(e);
  }

  /** Resolves when the latest status of the pod has been sent (or the pod is gone). */
  async flushed(uid: string, timeoutMs = 10_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (let e = this.#pods.get(uid); e && (e.busy || this.#stale(e)) && Date.now() < end; e = this.#pods.get(uid)) await sleep(50);
  }

  forget(uid: string): void { this.#pods.delete(uid); }

  /** The status last generated for a pod: the base for transition times and startTime. */
  last(uid: string): PodStatus | undefined { return this.#pods.get(uid)?.status; }

  #stale(e: Entry): boolean { return e.sent !== e.want || e.sentTo !== this.#target(e.pod); }

  async #send(e: Entry): Promise<void> {
    e.busy = true;
    const retry = backoff(200, 10_000);
    try {
      while (this.#pods.get(e.uid) === e && this.#stale(e)) {
        const want = e.want;
        const { namespace: ns, name } = e.pod.metadata!;
        const target = this.#target(e.pod);
        try {
          if (!target) throw new Error('its mirror pod does not exist yet');
          // Strategic merge, as upstream: conditions merge by type, so those others set stay.
          await this.#api.patch(`/api/v1/namespaces/${ns}/pods/${name}/status`, { metadata: { uid: target }, status: withRemovals(e.status) }, 'strategic');
          e.sent = want;
          e.sentTo = target;
          this.#onPatch?.();
          this.#log.v(3, 'Patched pod status', { pod: `${ns}/${name}`, podUID: e.uid, phase: e.status.phase });
        } catch (err) {
          // Gone, or replaced by a pod with another UID: nothing to update (a static pod's mirror comes back).
          if (target === e.uid && (isNotFound(err) || (isConflict(err) && /UID/i.test((err as Error).message)))) { this.#pods.delete(e.uid); return; }
          const wait = retry.next();
          if (target) this.#log.warn('Failed to update pod status, will retry', { pod: `${ns}/${name}`, podUID: e.uid, err, retryInMs: wait });
          await sleep(wait);
        }
      }
    } finally {
      e.busy = false;
    }
  }
}

// Conditions the kubelet sets only while they hold: a strategic merge keeps what the patch does
// not name, so their absence is sent as a deletion.
const TRANSIENT_CONDITIONS = ['PodResizePending', 'PodResizeInProgress'];

/** Pure: the status as a strategic merge patch, with "$patch: delete" for transient conditions it does not carry. */
export function withRemovals(status: PodStatus): PodStatus {
  if (!status.conditions) return status;
  const gone = TRANSIENT_CONDITIONS.filter((t) => !status.conditions!.some((c) => c.type === t));
  if (!gone.length) return status;
  return { ...status, conditions: [...status.conditions, ...gone.map((type) => ({ type, $patch: 'delete' }) as unknown as PodCondition)] };
}
