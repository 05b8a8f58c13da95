// Sandbox garbage collection, as upstream's kuberuntime_gc.go evictSandboxes: a sandbox
// that is ready or still holds containers is active and stays; a pod that exists keeps
// its newest sandbox whatever its state (the next sync may reuse its attempt number);
// a pod whose content may go loses every inactive one. Pure.
//
// Two departures, both to finish a dead pod in one pass rather than over several
// minutes: containers removed in the same pass do not count as held, and a gone pod's
// ready sandbox is stopped and removed once none of its containers is left to run.
// (Upstream leaves that one to housekeeping's orphan kill.)
import type { PodRuntimeStatus, SandboxState } from '../container/types.ts';
import { contentRemovable, isOurs, type Scope } from './ownership.ts';

export interface SandboxRemoval {
  id: string;
  uid: string;
  reason: 'pod deleted' | 'superseded';
  /** It is still ready: StopPodSandbox (network teardown) before removing it. */
  ready: boolean;
}

const newestFirst = (a: SandboxState, b: SandboxState) => {
  if (a.attempt !== b.attempt) return b.attempt - a.attempt;
  const d = BigInt(b.createdAtNs || '0') - BigInt(a.createdAtNs || '0');
  return d > 0n ? 1 : d < 0n ? -1 : 0;
};

/** removedContainers: the containers this pass removes first (planContainerGC). */
export function planSandboxGC(pods: Iterable<PodRuntimeStatus>, scope: Scope, removedContainers: ReadonlySet<string>): SandboxRemoval[] {
  const out: SandboxRemoval[] = [];
  for (const pod of pods) {
    if (!isOurs(pod.uid, scope) || pod.sandboxes.length === 0) continue;
    const left = pod.containers.filter((c) => !removedContainers.has(c.id));
    const held = new Set(left.map((c) => c.sandboxId));
    const gone = contentRemovable(pod.uid, scope);
    const sorted = [...pod.sandboxes].sort(newestFirst);
    const candidates = gone ? sorted : sorted.slice(1);
    for (const sb of candidates) {
      if (held.has(sb.id)) continue;
      if (sb.ready && !(gone && left.length === 0)) continue;
      out.push({ id: sb.id, uid: pod.uid, reason: gone ? 'pod deleted' : 'superseded', ready: sb.ready });
    }
  }
  return out;
}
