// What the runtime's event streams tell the PLEG, and when it relists for each. The relist stays
// the source of truth: events only say when to look. Pure; the streams are cri-events.ts (CRI's
// container events) and containerd-events.ts (containerd's task events, for containerd 1.6).
import type { Logger } from '../log/log.ts';

/**
 * start, exit, delete, oom: containerd's task events (TaskStart, TaskExit, TaskDelete, TaskOOM).
 * stopped: CRI's CONTAINER_STOPPED_EVENT, sent once the runtime shows the container exited.
 */
export type RuntimeEvent = {
  kind: 'start' | 'exit' | 'delete' | 'oom' | 'stopped';
  containerID: string;
  /** The container's pod, where the event says (CRI's events do): its relist can be of that pod alone. */
  podUID?: string;
};

export interface RuntimeEventsOptions {
  onEvent: (e: RuntimeEvent) => void;
  /** The stream is (back) up: events may have been missed meanwhile. */
  onReconnect: () => void;
  /** The stream is down: no events until onReconnect. */
  onDisconnect?: () => void;
  log: Logger;
  /** A subscription made (true) or failed (false), for kubelet_evented_pleg_connection_*. */
  observe?: (ok: boolean) => void;
}

/** After a task's exit: by then CRI usually shows it; later ones run only while it does not. */
export const EXIT_RELISTS_MS = [120, 250, 500];
/** After the exited container's task is deleted: CRI marks it exited next (a status file written). */
export const DELETE_RELISTS_MS = [15];
/** CRI says it shows the container stopped: at once. */
export const STOPPED_RELISTS_MS = [0];

/**
 * When to relist after an event (ms from now), none for most. CRI's stopped event comes after
 * the runtime updated the container's status (containerd's handleContainerExit sends it last),
 * so the relist sees the exit at once. containerd's task events come before: containerd's CRI
 * handles a TaskExit by deleting the task, then marking the container exited, so a relist at
 * once would still see it running (~110 ms); an exit asks for relists shortly after, and the
 * TaskDelete of a container whose exit the relist has not seen yet, for one right after it.
 * Starts and other deletes are the kubelet's own doing, and its sync reads the runtime after
 * them: relisting on every start cost ~60% more kubelet CPU during a burst of pod starts.
 */
export function relistsAfter(e: RuntimeEvent, awaitingExit: (containerID: string) => boolean): readonly number[] {
  if (e.kind === 'stopped') return STOPPED_RELISTS_MS;
  if (e.kind === 'exit' || e.kind === 'oom') return EXIT_RELISTS_MS;
  if (e.kind === 'delete' && awaitingExit(e.containerID)) return DELETE_RELISTS_MS;
  return [];
}
