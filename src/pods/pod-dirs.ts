// The pod's directory under the root dir, made before anything else of its first sync: upstream's
// makePodDataDirs in Kubelet.SyncPod. It is also the mark housekeeping goes by (src/gc/ownership.ts).
import { mkdirSync } from 'node:fs';
import { isSafeUID, podDir } from '../gc/disk.ts';
import type { PodSteps } from './workers.ts';

/** PodSteps whose sync first makes ROOT/pods/UID, before any sandbox exists. */
export function withPodDirs(steps: PodSteps, rootDir: string): PodSteps {
  return {
    ...steps,
    sync(...args: Parameters<PodSteps['sync']>) {
      const uid = args[0].metadata!.uid!;
      if (isSafeUID(uid)) mkdirSync(podDir(rootDir, uid), { recursive: true, mode: 0o750 });
      return steps.sync(...args);
    },
  };
}
