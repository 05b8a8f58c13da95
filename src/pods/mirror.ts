// Mirror pods: the apiserver's read-only copy of each static pod, so that operators see
// it (kubectl get pods) and its status. Recreated when deleted or stale, deleted when
// its static pod goes; deleting the mirror never stops the static pod.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { type ApiClient, isAlreadyExists, isConflict, isNotFound } from '../apiserver/client.ts';
import type { Logger } from '../log/log.ts';
import { apiPath } from '../apiserver/paths.ts';
import { CONFIG_HASH, CONFIG_MIRROR, podKey } from '../podutil/podutil.ts';
import { jittered } from '../backoff/backoff.ts';

const key = podKey;

/** Pure: the mirror to create for a static pod, owned by the node (NodeRestriction requires it). */
export function mirrorPodFor(pod: Pod, node: { name: string; uid: string }): Pod {
  const { uid: _uid, resourceVersion: _rv, ...meta } = pod.metadata!;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...meta,
      annotations: { ...meta.annotations, [CONFIG_MIRROR]: meta.annotations?.[CONFIG_HASH] ?? pod.metadata!.uid! },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node.name, uid: node.uid, controller: true }],
    },
    spec: pod.spec,
  };
}

export type MirrorAction = 'create' | 'recreate' | 'delete' | 'keep';

/** Pure: what to do about one name, given its static pod and its mirror (either may be missing). */
export function mirrorAction(staticPod: Pod | undefined, mirror: Pod | undefined): MirrorAction {
  if (!staticPod) return mirror ? 'delete' : 'keep';
  if (!mirror) return 'create';
  const stale = mirror.metadata?.annotations?.[CONFIG_MIRROR] !== staticPod.metadata?.annotations?.[CONFIG_HASH];
  return stale || mirror.metadata?.deletionTimestamp ? 'recreate' : 'keep';
}

export class MirrorPods {
  readonly #api: ApiClient;
  readonly #log: Logger;
  readonly #node: () => { name: string; uid: string } | undefined;
  readonly #statics = new Map<string, Pod>();
  readonly #mirrors = new Map<string, Pod>();
  readonly #busy = new Set<string>();
  readonly #onMirror: (staticUID: string) => void;
  readonly #staticPodActive: (fullName: string, exceptUID?: string) => boolean;

  /**
   * onMirror: a static pod has a (new) mirror, which should be given its status.
   * staticPodActive: a static pod of that full name (other than exceptUID) still runs or stops.
   */
  constructor(
    api: ApiClient,
    node: () => { name: string; uid: string } | undefined,
    log: Logger,
    onMirror: (staticUID: string) => void,
    staticPodActive: (fullName: string, exceptUID?: string) => boolean = () => false,
  ) {
    this.#api = api;
    this.#node = node;
    this.#log = log;
    this.#onMirror = onMirror;
    this.#staticPodActive = staticPodActive;
  }

  setStatic(pod: Pod) {
    this.#statics.set(key(pod), pod);
    void this.reconcile(key(pod));
  }
  removeStatic(uid: string) {
    for (const [k, p] of this.#statics)
      if (p.metadata!.uid === uid) {
        this.#statics.delete(k);
        void this.reconcile(k);
      }
  }
  /** A mirror pod as the apiserver watch reports it. */
  observe(mirror: Pod) {
    const k = key(mirror);
    const isNew = this.#mirrors.get(k)?.metadata?.uid !== mirror.metadata?.uid;
    this.#mirrors.set(k, mirror);
    const st = this.#statics.get(k);
    if (isNew && st) this.#onMirror(st.metadata!.uid!);
    void this.reconcile(k);
  }
  /** A mirror pod is gone from the apiserver. */
  forget(uid: string): void {
    for (const [k, p] of this.#mirrors)
      if (p.metadata!.uid === uid) {
        this.#mirrors.delete(k);
        void this.reconcile(k);
        return;
      }
  }
  /** The mirror of a static pod, where its status goes. */
  mirror(staticPod: Pod): Pod | undefined {
    const m = this.#mirrors.get(key(staticPod));
    return m && m.metadata?.annotations?.[CONFIG_MIRROR] === staticPod.metadata?.annotations?.[CONFIG_HASH] ? m : undefined;
  }
  reconcileAll() {
    for (const k of new Set([...this.#statics.keys(), ...this.#mirrors.keys()])) void this.reconcile(k);
  }

  /** Mirrors lost to a failed call or a deletion are recreated on this beat (every 10 s, jittered). */
  start(periodMs = 10_000): { stop(): void } {
    const beat = setInterval(() => this.reconcileAll(), jittered(periodMs, 0.2));
    return { stop: () => clearInterval(beat) };
  }

  async reconcile(k: string): Promise<void> {
    const node = this.#node();
    if (!node || this.#busy.has(k)) return;
    const st = this.#statics.get(k),
      mirror = this.#mirrors.get(k);
    const action = mirrorAction(st, mirror);
    if (action === 'keep') return;
    // The mirror shows a static pod until it has stopped: an orphan is deleted, and a stale one
    // replaced, once no other static pod of that name runs or stops (upstream deletes orphaned
    // mirrors only when IsPodForMirrorPodTerminatingByFullName is false, and recreates them from
    // SyncPod, which a static pod reaches after the older one of its name terminated).
    if (this.#staticPodActive(k, st?.metadata?.uid)) return;
    this.#busy.add(k);
    try {
      if ((action === 'delete' || action === 'recreate') && mirror) {
        this.#log.info('Deleting mirror pod', { pod: k, reason: action === 'delete' ? 'static pod removed' : 'stale or deleted mirror' });
        const deleted = await this.#api
          .delete(apiPath({ resource: 'pods', namespace: mirror.metadata!.namespace, name: mirror.metadata!.name }), {
            apiVersion: 'v1',
            kind: 'DeleteOptions',
            gracePeriodSeconds: 0,
            preconditions: { uid: mirror.metadata!.uid },
          })
          .then(
            () => true,
            (e) => {
              if (!isNotFound(e) && !isConflict(e)) throw e;
              return false;
            },
          );
        // Not found (or another pod by that name) is the apiserver's word of the moment: one
        // restarting has answered 404 for a mirror it had. The watch says when the mirror is
        // gone (forget); until then it stays known, so the next beat deletes it again, as
        // upstream's housekeeping finds an orphaned mirror in its pod manager each time.
        if (deleted) this.#mirrors.delete(k);
      }
      if (action === 'create' || action === 'recreate') {
        const namespace = st!.metadata!.namespace;
        const created = await this.#api.create<Pod>(apiPath({ resource: 'pods', namespace }), mirrorPodFor(st!, node)).catch((e) => {
          if (isAlreadyExists(e)) return undefined;
          throw e;
        });
        if (created) {
          this.#mirrors.set(k, created);
          this.#log.info('Created mirror pod', { pod: k, uid: created.metadata!.uid });
          this.#onMirror(st!.metadata!.uid!);
        } else {
          // A pod of that name is there (a delete that did not take, during an apiserver
          // restart, say): as upstream's CreateMirrorPod, it is fine only if it is this static
          // pod's mirror. Else it is kept as the mirror seen, so that the next beat deletes it.
          const existing = await this.#api.get<Pod>(apiPath({ resource: 'pods', namespace, name: st!.metadata!.name }));
          this.#mirrors.set(k, existing);
          if (mirrorAction(st, existing) !== 'keep')
            throw new Error(`a stale pod of that name is in the way (uid ${existing.metadata?.uid})`);
          this.#onMirror(st!.metadata!.uid!);
        }
      }
    } catch (e) {
      this.#log.warn('Failed to reconcile mirror pod, will retry', { pod: k, err: e });
    } finally {
      this.#busy.delete(k);
    }
  }
}
