// Container garbage collection, as upstream's kuberuntime_gc.go evictContainers: dead
// containers are grouped by (pod UID, container name); a pod whose content may go loses
// all of them, any other keeps the newest maxPerPodContainer of each group, and
// maxContainers caps the node's total. Pure: returns what to remove, and why.
import type { ContainerState, PodRuntimeStatus } from '../container/types.ts';
import { contentRemovable, isOurs, type Scope } from './ownership.ts';

/** Upstream's ContainerGCPolicy. */
export interface ContainerGCPolicy {
  /** A container created less than this long ago is never collected. */
  minAgeMs: number;
  /** Dead instances kept per (pod, container name); < 0: no limit. */
  maxPerPodContainer: number;
  /** Dead containers kept on the node; < 0: no limit. */
  maxContainers: number;
}

/** The kubelet's defaults (--minimum-container-ttl-duration 0, --maximum-dead-containers-per-container 1, --maximum-dead-containers -1). */
export const DEFAULT_CONTAINER_GC_POLICY: ContainerGCPolicy = { minAgeMs: 0, maxPerPodContainer: 1, maxContainers: -1 };

export type ContainerGCReason = 'pod deleted' | 'maxPerPodContainer' | 'maxContainers';

export interface ContainerRemoval {
  id: string;
  uid: string;
  name: string;
  attempt: number;
  reason: ContainerGCReason;
  /** Its state is unknown: it may still run, so stop it first (as upstream). */
  stopFirst: boolean;
}

/** Newest first: by creation time, then attempt (a container created in the same ns is rare but possible). */
const newestFirst = (a: ContainerState, b: ContainerState) => {
  const d = BigInt(b.createdAtNs || '0') - BigInt(a.createdAtNs || '0');
  return d > 0n ? 1 : d < 0n ? -1 : b.attempt - a.attempt;
};

export function planContainerGC(pods: Iterable<PodRuntimeStatus>, scope: Scope, policy: ContainerGCPolicy, now: Date): ContainerRemoval[] {
  const newestGC = BigInt(now.getTime() - policy.minAgeMs) * 1_000_000n;
  const out: ContainerRemoval[] = [];
  const remove = (uid: string, cs: ContainerState[], reason: ContainerGCReason) => {
    for (const c of cs) out.push({ id: c.id, uid, name: c.name, attempt: c.attempt, reason, stopFirst: c.phase === 'unknown' });
  };
  const units = new Map<string, { uid: string; dead: ContainerState[] }>();
  for (const pod of pods) {
    if (!isOurs(pod.uid, scope)) continue;
    const gone = contentRemovable(pod.uid, scope);
    const dead = pod.containers.filter(
      (c) =>
        c.phase !== 'running' &&
        // A live pod's created container is about to start; the dead one before it is its lastState.
        (c.phase !== 'created' || gone) &&
        BigInt(c.createdAtNs || '0') <= newestGC,
    );
    if (gone) {
      remove(pod.uid, dead, 'pod deleted');
      continue;
    }
    for (const c of dead) {
      const key = `${pod.uid}/${c.name}`;
      let u = units.get(key);
      if (!u) units.set(key, (u = { uid: pod.uid, dead: [] }));
      u.dead.push(c);
    }
  }
  for (const u of units.values()) u.dead.sort(newestFirst);

  // Oldest first, as upstream's removeOldestN: a pass cut short leaves the newest.
  const keepPerUnit = (n: number, reason: ContainerGCReason) => {
    for (const u of units.values()) if (u.dead.length > n) remove(u.uid, u.dead.splice(n).reverse(), reason);
  };
  if (policy.maxPerPodContainer >= 0) keepPerUnit(policy.maxPerPodContainer, 'maxPerPodContainer');

  const total = () => [...units.values()].reduce((n, u) => n + u.dead.length, 0);
  if (policy.maxContainers >= 0 && total() > policy.maxContainers) {
    // An equal share per unit first (at least one each), then the oldest overall.
    keepPerUnit(Math.max(1, Math.floor(policy.maxContainers / units.size)), 'maxContainers');
    const excess = total() - policy.maxContainers;
    if (excess > 0) {
      const all = [...units.values()].flatMap((u) => u.dead.map((c) => ({ uid: u.uid, c }))).sort((a, b) => newestFirst(a.c, b.c));
      for (const { uid, c } of all.slice(all.length - excess).reverse()) remove(uid, [c], 'maxContainers');
    }
  }
  return out;
}
