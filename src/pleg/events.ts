// generateEvents: the lifecycle events between two relists of one container, as
// upstream's pleg/generic.go. Pure, so the table test pins every transition.
import type { ContainerPhase, PodRuntimeStatus } from '../container/types.ts';

export type LifecycleEventType = 'ContainerStarted' | 'ContainerDied' | 'ContainerRemoved' | 'ContainerChanged';
export interface LifecycleEvent {
  uid: string;
  type: LifecycleEventType;
  containerID: string;
}

type Seen = ContainerPhase | 'non-existent';

export function generateEvents(uid: string, id: string, before: Seen, after: Seen): LifecycleEvent[] {
  if (before === after) return [];
  const ev = (type: LifecycleEventType) => ({ uid, type, containerID: id });
  switch (after) {
    case 'running':
      return [ev('ContainerStarted')];
    case 'exited':
      return [ev('ContainerDied')];
    case 'unknown':
      return [ev('ContainerChanged')];
    case 'created':
      return []; // not interesting until it runs
    case 'non-existent':
      return before === 'exited' ? [ev('ContainerRemoved')] : [ev('ContainerDied'), ev('ContainerRemoved')];
  }
}

/** Every event between two relists, over all pods; sandboxes count as containers, as upstream. */
export function diffRelist(before: Map<string, PodRuntimeStatus>, after: Map<string, PodRuntimeStatus>): LifecycleEvent[] {
  const phases = (m: Map<string, PodRuntimeStatus>) => {
    const out = new Map<string, { uid: string; phase: ContainerPhase }>();
    for (const p of m.values()) {
      for (const s of p.sandboxes) out.set(s.id, { uid: p.uid, phase: s.ready ? 'running' : 'exited' });
      for (const c of p.containers) out.set(c.id, { uid: p.uid, phase: c.phase });
    }
    return out;
  };
  const a = phases(before),
    b = phases(after);
  const events: LifecycleEvent[] = [];
  for (const [id, { uid, phase }] of b) events.push(...generateEvents(uid, id, a.get(id)?.phase ?? 'non-existent', phase));
  for (const [id, { uid, phase }] of a) if (!b.has(id)) events.push(...generateEvents(uid, id, phase, 'non-existent'));
  return events;
}
