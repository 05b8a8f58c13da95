// What PodSyncer needs from the container runtime, and no more: the CRI calls a pod's sync
// makes (with its lifecycle hooks) and the runtime's view of one pod. RuntimeClient and
// RuntimeView are the real ones; src/runtime/fake-runtime.test.ts is the one tests run against.
import type { RuntimeClient } from '../cri/runtime-client.ts';
import type { PodRuntimeStatus } from './types.ts';

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

/** The runtime's state of one pod (RuntimeView.pod); a pod the runtime does not know has no sandboxes and no containers. */
export interface PodView {
  pod(uid: string): Promise<PodRuntimeStatus>;
}
