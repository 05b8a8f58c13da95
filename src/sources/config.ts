// Upstream's PodConfig (pkg/kubelet/config/config.go): the pod sources (the apiserver,
// staticPodPath, staticPodURL) report what they have; PodConfig turns each report into one
// operation (ADD, UPDATE, DELETE, REMOVE, RECONCILE, or none) and routes the pod to what runs
// it. A reader follows a pod from here: apiserver and static pods go to the pod workers;
// static pods also get a mirror; mirror pods go to the mirror manager only, never to a worker.
import { isDeepStrictEqual } from 'node:util';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import { rfc3339NanoLocal } from '../apiserver/time.ts';
import { CONFIG_SEEN, CONFIG_SOURCE, isMirrorPod, podKey } from '../podutil/podutil.ts';
import { needsReadinessReconcile } from '../status/pod-status.ts';
import type { PodSink } from './apiserver.ts';

export type PodOperation = 'ADD' | 'UPDATE' | 'DELETE' | 'REMOVE' | 'RECONCILE';
/** Upstream's source names: kubetypes.ApiserverSource, FileSource, HTTPSource. */
export type SourceName = 'api' | 'file' | 'http';

/**
 * Pure: upstream's checkAndUpdatePod (and REMOVE for a pod its source no longer has). Spec,
 * labels, annotations and deletion fields make an UPDATE (a DELETE once deletionTimestamp is
 * set); a change of status alone is a RECONCILE; anything else (resourceVersion,
 * managedFields, finalizers) is no operation.
 */
export function podOperation(prev: Pod | undefined, next: Pod | undefined): PodOperation | undefined {
  if (!next) return prev ? 'REMOVE' : undefined;
  if (!prev) return 'ADD';
  if (!podsDifferSemantically(prev, next)) return isDeepStrictEqual(prev.status ?? {}, next.status ?? {}) ? undefined : 'RECONCILE';
  return next.metadata?.deletionTimestamp ? 'DELETE' : 'UPDATE';
}

/** Upstream's podsDifferSemantically. */
function podsDifferSemantically(a: Pod, b: Pod): boolean {
  const same = (f: (p: Pod) => unknown) => isDeepStrictEqual(f(a) ?? {}, f(b) ?? {});
  return !(
    same((p) => p.spec) &&
    same((p) => p.metadata?.labels) &&
    same((p) => p.metadata?.annotations) &&
    same((p) => p.metadata?.deletionTimestamp) &&
    same((p) => p.metadata?.deletionGracePeriodSeconds)
  );
}

/**
 * Pure: upstream's merge annotates each pod from a source with the source's name and the time
 * the kubelet first saw it (kubernetes.io/config.source and config.seen), kept from the version
 * before (updateAnnotations' local annotations). The downward API, the sandbox's annotations and
 * a static pod's mirror show them.
 */
export function withLocalAnnotations(pod: Pod, source: SourceName, prev: Pod | undefined, now: () => string): Pod {
  const seenAt = prev?.metadata?.annotations?.[CONFIG_SEEN] ?? now();
  return {
    ...pod,
    metadata: { ...pod.metadata, annotations: { ...pod.metadata?.annotations, [CONFIG_SOURCE]: source, [CONFIG_SEEN]: seenAt } },
  };
}

export type Route = 'mirror' | 'static' | 'pod';

/** Pure: who handles a pod from a source. Only the apiserver has mirror pods; file and URL pods are static. */
export function route(source: SourceName, pod: Pod): Route {
  if (source !== 'api') return 'static';
  return isMirrorPod(pod) ? 'mirror' : 'pod';
}

/** The pod workers as PodConfig feeds them: the newest version of a pod, undefined once its source dropped it. */
export interface PodUpdates {
  update(uid: string, pod: Pod | undefined): void;
  /** A change of the pod's status alone: kept for the next sync, which runs now only when resync is set. */
  reconcile(uid: string, pod: Pod, resync: boolean): void;
}

/** The mirror pod manager (src/pods/mirror.ts). */
export interface MirrorUpdates {
  /** A mirror pod as the apiserver has it. */
  observe(mirror: Pod): void;
  forget(uid: string): void;
  setStatic(pod: Pod): void;
  removeStatic(uid: string): void;
}

/**
 * What upstream's HandlePodAdditions, HandlePodUpdates (a pod's spec or metadata changed, with
 * the version before) and HandlePodRemoves do beside the pod workers.
 */
export interface PodChanges {
  added?: (pod: Pod) => void;
  updated?: (before: Pod, now: Pod) => void;
  removed?: (pod: Pod) => void;
}

/** Upstream's pod start-up SLI tracker, which sees the apiserver's versions of pods. */
export interface WatchObserver {
  observedOnWatch(pod: Pod): void;
  forget(uid: string): void;
}

export class PodConfig {
  readonly #seen = new Map<SourceName, Map<string, Pod>>();
  readonly #pods: PodUpdates;
  readonly #mirrors: MirrorUpdates;
  readonly #watch?: WatchObserver;
  readonly #log: Logger;
  readonly #changed?: PodChanges;

  /** changed: told of each pod added, updated or removed, once the pod workers have it. */
  constructor(d: {
    pods: PodUpdates;
    mirrors: MirrorUpdates;
    watch?: WatchObserver;
    log: Logger;
    changed?: PodChanges;
  }) {
    this.#changed = d.changed;
    this.#pods = d.pods;
    this.#mirrors = d.mirrors;
    this.#watch = d.watch;
    this.#log = d.log;
  }

  /** What one source reports to. */
  source(name: SourceName): PodSink {
    const seen = new Map<string, Pod>();
    this.#seen.set(name, seen);
    return {
      update: (from) => {
        const uid = from.metadata!.uid!;
        const prev = seen.get(uid);
        const pod = withLocalAnnotations(from, name, prev, rfc3339NanoLocal);
        const op = podOperation(prev, pod);
        seen.set(uid, pod);
        if (op) this.#dispatch(name, op, pod);
        if (route(name, pod) === 'mirror') return;
        if (op === 'ADD') this.#changed?.added?.(pod);
        if (op === 'UPDATE' && prev) this.#changed?.updated?.(prev, pod);
      },
      remove: (uid) => {
        const prev = seen.get(uid);
        if (!prev) return;
        seen.delete(uid);
        this.#dispatch(name, 'REMOVE', prev);
        if (route(name, prev) !== 'mirror') this.#changed?.removed?.(prev);
      },
    };
  }

  #dispatch(source: SourceName, op: PodOperation, pod: Pod): void {
    const uid = pod.metadata!.uid!;
    const to = route(source, pod);
    // Upstream's syncLoopIteration logs each operation with its source at V(2).
    this.#log.v(2, `SyncLoop ${op}`, { source, pod: podKey(pod), podUID: uid });
    const removed = op === 'REMOVE';
    if (to === 'mirror') {
      if (removed) this.#mirrors.forget(uid);
      else this.#mirrors.observe(pod);
      return;
    }
    if (to === 'pod') {
      if (removed) this.#watch?.forget(uid);
      else this.#watch?.observedOnWatch(pod);
    }
    // Upstream's HandlePodReconcile: a status written (mostly by this kubelet) starts no sync,
    // unless the Ready condition no longer matches the readiness gates. Syncing on each would
    // undo a failed start's back-off whenever the status it wrote changed.
    if (op === 'RECONCILE') this.#pods.reconcile(uid, pod, needsReadinessReconcile(pod));
    else this.#pods.update(uid, removed ? undefined : pod);
    if (to === 'static') {
      if (removed) this.#mirrors.removeStatic(uid);
      else this.#mirrors.setStatic(pod);
    }
  }
}
