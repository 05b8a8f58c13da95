// What the CRI executor (RuntimeSyncer, sync.ts) needs from the container runtime, and no more:
// the CRI calls a pod's sync makes (with its lifecycle hooks) and the runtime's view of one pod.
// RuntimeClient and RuntimeView are the real ones; src/runtime/testing.ts is the one tests run against.
import type { RuntimeClient } from '../cri/runtime-client.ts';
import type { RuntimeView } from './cri-runtime.ts';

/** The CRI calls of a pod's sync: a Pick of the real client, so that a fake takes and returns what the wire does. */
export type PodRuntime = Pick<
  RuntimeClient,
  | 'status'
  | 'runPodSandbox'
  | 'stopPodSandbox'
  | 'removePodSandbox'
  | 'createContainer'
  | 'startContainer'
  | 'stopContainer'
  | 'removeContainer'
  | 'execSync'
>;

/**
 * The runtime's state of one pod (RuntimeView); a pod the runtime does not know has no sandboxes
 * and no containers. pod: from a list begun after the call; current: from the last list when it
 * began after changed(uid) was last called; sandboxStatus: one sandbox just created.
 */
export type PodView = Pick<RuntimeView, 'pod' | 'current' | 'changed' | 'stopping' | 'sandboxStatus'>;
