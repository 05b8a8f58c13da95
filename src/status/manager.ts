// Sends pod statuses to the apiserver: only when they changed, newest wins, one
// request in flight per pod, retried with back-off. The patch carries the pod's UID
// as a precondition so a status never lands on a recreated pod of the same name.
import type { Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import { type ApiClient, isNotFound, isConflict } from '../apiserver/client.ts';
import { backoff, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';

interface Entry { ns: string; name: string; uid: string; want: string; sent?: string; busy: boolean; status: PodStatus }

export class StatusManager {
  readonly #api: ApiClient;
  readonly #log: Logger;
  readonly #pods = new Map<string, Entry>();
  readonly #onPatch?: () => void;

  constructor(api: ApiClient, log: Logger, onPatch?: () => void) { this.#api = api; this.#log = log; this.#onPatch = onPatch; }

  /** Records the status the pod should show; sends it unless it is what was sent last. */
  set(pod: Pod, status: PodStatus): void {
    const uid = pod.metadata!.uid!;
    const want = JSON.stringify(status);
    let e = this.#pods.get(uid);
    if (!e) {
      e = { ns: pod.metadata!.namespace!, name: pod.metadata!.name!, uid, want, busy: false, status };
      this.#pods.set(uid, e);
    }
    e.want = want;
    e.status = status;
    if (e.sent !== want && !e.busy) void this.#send(e);
  }

  /** Resolves when the latest status of the pod has been sent (or the pod is gone). */
  async flushed(uid: string, timeoutMs = 10_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (let e = this.#pods.get(uid); e && (e.busy || e.sent !== e.want) && Date.now() < end; e = this.#pods.get(uid)) await sleep(50);
  }

  forget(uid: string): void { this.#pods.delete(uid); }

  async #send(e: Entry): Promise<void> {
    e.busy = true;
    const retry = backoff(200, 10_000);
    try {
      while (this.#pods.get(e.uid) === e && e.sent !== e.want) {
        const want = e.want;
        try {
          await this.#api.patch(`/api/v1/namespaces/${e.ns}/pods/${e.name}/status`, { metadata: { uid: e.uid }, status: e.status }, 'merge');
          e.sent = want;
          this.#onPatch?.();
          this.#log.v(3, 'Patched pod status', { pod: `${e.ns}/${e.name}`, podUID: e.uid, phase: e.status.phase });
        } catch (err) {
          // Gone, or replaced by a pod with another UID: nothing to update.
          if (isNotFound(err) || (isConflict(err) && /UID/i.test((err as Error).message))) { this.#pods.delete(e.uid); return; }
          const wait = retry.next();
          this.#log.warn('Failed to update pod status, will retry', { pod: `${e.ns}/${e.name}`, podUID: e.uid, err, retryInMs: wait });
          await sleep(wait);
        }
      }
    } finally {
      e.busy = false;
    }
  }
}
