// Builders for the gc table tests. Not named .test.ts, so the unit test glob does not run it as
// a test file; tsconfig.build.json leaves it out of dist.
import type { ContainerPhase, ContainerState, PodRuntimeStatus, SandboxState } from '../container/types.ts';
import type { KnownPod, Scope } from './ownership.ts';

export const ctr = (
  id: string,
  name: string,
  phase: ContainerPhase,
  createdAtNs: string,
  attempt = 0,
  sandboxId = 's1',
): ContainerState => ({ id, sandboxId, name, attempt, phase, image: 'busybox', imageRef: 'sha256:x', hash: 'h', createdAtNs });

export const sb = (id: string, attempt: number, ready: boolean, createdAtNs = String(attempt + 1)): SandboxState => ({
  id,
  attempt,
  ready,
  createdAtNs,
});

export const rt = (uid: string, containers: ContainerState[], sandboxes: SandboxState[] = []): PodRuntimeStatus => ({
  uid,
  containers,
  sandboxes,
});

export const scope = (o: { known?: Record<string, KnownPod>; owned?: string[]; sourcesReady?: boolean } = {}): Scope => ({
  known: new Map(Object.entries(o.known ?? {})),
  owned: new Set(o.owned ?? []),
  sourcesReady: o.sourcesReady ?? true,
});

export const live: KnownPod = { state: 'syncing', deleted: false };
export const deletedTerminated: KnownPod = { state: 'terminated', deleted: true };
export const terminatedKept: KnownPod = { state: 'terminated', deleted: false };
export const deletedTerminating: KnownPod = { state: 'terminating', deleted: true };
