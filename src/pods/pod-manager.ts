// The pods the kubelet is responsible for and where each is in its life: upstream's pod
// manager (pkg/kubelet/pod/pod_manager.go) together with the read side of its pod workers'
// sync statuses (IsPodTerminationRequested, GetActivePods, ...). Built first, as CurrentNode
// is, so that every part reads pods from here and none needs the pod workers: they alone
// write a record (through `add` and the record's fields), everyone else only asks.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { PodState } from './lifecycle.ts';
import { isStaticPod, podKey } from '../podutil/podutil.ts';

/** One pod as the kubelet knows it. Its fields are written by the pod workers alone. */
export interface PodRecord {
  readonly uid: string;
  /** The pod as its source last sent it; undefined once the source dropped it. */
  pod: Pod | undefined;
  /** The last pod object seen, kept after the source forgets it (for names in logs and cleanup). */
  lastPod: Pod;
  state: PodState;
  /**
   * Its source dropped it (a static pod's file went): it is terminated even if it comes back
   * (upstream's restartRequested).
   */
  removed: boolean;
  /** Creation order: of two static pods with one full name, the older runs first. */
  readonly seq: number;
}

/** One pod as the pod gauges see it: desired, its source still has it. */
export interface PodSnapshot {
  pod: Pod;
  state: PodState;
  desired: boolean;
}

const alive = (r: PodRecord) => r.state === 'syncing' || r.state === 'terminating';

export class PodManager {
  readonly #records = new Map<string, PodRecord>();
  #seq = 0;
  #sourcesReady: () => boolean = () => false;

  /** A new record for a pod first seen (the pod workers call it); later records sort after earlier ones. */
  add(uid: string, pod: Pod, state: PodState): PodRecord {
    const r: PodRecord = { uid, pod, lastPod: pod, state, removed: false, seq: this.#seq++ };
    this.#records.set(uid, r);
    return r;
  }

  get(uid: string): PodRecord | undefined {
    return this.#records.get(uid);
  }

  /** The pod is forgotten: finished, or to be started afresh under a new record. */
  delete(uid: string): void {
    this.#records.delete(uid);
  }

  /** The apiserver source has listed its pods once: until then a pod missing here may still come (upstream's sourcesReady). */
  sourcesReadyWhen(ready: () => boolean): void {
    this.#sourcesReady = ready;
  }

  sourcesReady(): boolean {
    return this.#sourcesReady();
  }

  /**
   * The pods admitted and not yet terminated (syncing or terminating) that their source still
   * has: what admission, resize and the device and DRA managers count against the node.
   * Upstream's GetActivePods reads the pod manager, which drops a pod on REMOVE while its worker
   * may still be killing it. Counting those too refused a garbage collector test's pods
   * OutOfpods ("used: 110") while a hundred pods of the test before were still being stopped.
   */
  active(): Pod[] {
    return [...this.#records.values()].filter((r) => !r.removed && alive(r)).map((r) => r.lastPod);
  }

  /** The UIDs of active(): what the device and DRA managers keep allocations for. */
  activeUIDs(): string[] {
    return this.active().map((p) => p.metadata!.uid!);
  }

  /** The pods admitted and not yet terminated: what the eviction and shutdown managers may stop. */
  running(): Pod[] {
    return [...this.#records.values()].filter((r) => r.state === 'syncing').map((r) => r.lastPod);
  }

  /** The last object seen of a pod: the apiserver's copy, whose status the status manager checks. */
  latest(uid: string): Pod | undefined {
    return this.#records.get(uid)?.lastPod;
  }

  /** The pods the kubelet is responsible for (the last object seen of each). */
  pods(): Pod[] {
    return [...this.#records.values()].map((r) => r.lastPod);
  }

  /** Each pod's lifecycle state and whether its source deleted it: read by housekeeping and GC. */
  states(): Map<string, { state: PodState; deleted: boolean }> {
    return new Map(
      [...this.#records.values()].map((r) => [r.uid, { state: r.state, deleted: !r.pod || !!r.pod.metadata?.deletionTimestamp }]),
    );
  }

  snapshot(): PodSnapshot[] {
    return [...this.#records.values()].map((r) => ({ pod: r.lastPod, state: r.state, desired: !!r.pod }));
  }

  /** The other records of static pods with this full name (namespace/name). */
  staticPodsNamed(fullName: string, exceptUID?: string): PodRecord[] {
    return [...this.#records.values()].filter((r) => r.uid !== exceptUID && isStaticPod(r.lastPod) && podKey(r.lastPod) === fullName);
  }

  /**
   * A static pod of this full name (other than exceptUID) is still running or stopping: its
   * mirror pod is left alone until then (upstream's IsPodForMirrorPodTerminatingByFullName).
   */
  staticPodActive(fullName: string, exceptUID?: string): boolean {
    return this.staticPodsNamed(fullName, exceptUID).some(alive);
  }
}
