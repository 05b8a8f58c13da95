// What the kubelet accepted for each pod (upstream's allocation manager): the cpu and memory of
// every container, by pod UID and container name, and of the pod as a whole (spec.resources).
// A pod's spec is its allocation when first seen; after that only an accepted resize changes
// it. Checkpointed as JSON under the root directory (upstream: allocated_pods_state) so a
// restarted kubelet does not take a pending resize for granted.
import { CheckpointWriter, readCheckpointFile } from '../checkpoint/file-store.ts';
import type { Pod, ResourceRequirements } from 'kubernetes-types/core/v1.js';
import { specAllocation, type Allocation } from './decide.ts';

/** The checkpoint's format: 2 holds pod-level allocations; 1 (no version) held containers only. */
const VERSION = 2;

export class AllocationManager {
  readonly #pods = new Map<string, Allocation>();
  /** Pods read from a version 1 checkpoint: their pod-level allocation is their spec's, taken when next seen. */
  readonly #legacy = new Set<string>();
  readonly #checkpoint?: CheckpointWriter;

  /** file: the checkpoint; none, memory only. onError: what could not be read or written. */
  constructor(o: { file?: string; onError?: (message: string, e: unknown) => void } = {}) {
    if (!o.file) return;
    this.#checkpoint = new CheckpointWriter(
      o.file,
      () => JSON.stringify({ version: VERSION, pods: Object.fromEntries(this.#pods) }),
      (e) => o.onError?.('Cannot write the pod resource allocation checkpoint', e),
    );
    try {
      const data = JSON.parse(readCheckpointFile(o.file) ?? '{}') as { version?: number; pods?: Record<string, unknown> };
      for (const [uid, a] of Object.entries(data.pods ?? {})) {
        if (data.version === VERSION) this.#pods.set(uid, a as Allocation);
        else {
          this.#pods.set(uid, { containers: a as Record<string, ResourceRequirements> });
          this.#legacy.add(uid);
        }
      }
    } catch (e) {
      // As upstream's allocation manager on a corrupt checkpoint: said, and started over from the specs.
      o.onError?.("Cannot read the pod resource allocation checkpoint, starting from the pods' specs", e);
    }
  }

  /** A pod's allocation; recorded from its spec when first seen (and for containers added since). */
  get(pod: Pod): Allocation {
    const uid = pod.metadata!.uid!;
    const known = this.#pods.get(uid);
    const spec = specAllocation(pod);
    if (known && this.#legacy.delete(uid) && spec.pod) this.set(uid, { ...known, pod: spec.pod });
    const now = this.#pods.get(uid);
    if (now && Object.keys(spec.containers).every((n) => now.containers[n])) return now;
    this.set(uid, now ? { ...now, containers: { ...spec.containers, ...now.containers } } : spec);
    return this.#pods.get(uid)!;
  }

  /** The allocation, if the pod was seen. */
  peek(uid: string): Allocation | undefined {
    return this.#pods.get(uid);
  }

  set(uid: string, a: Allocation): void {
    this.#pods.set(uid, a);
    this.#checkpoint?.changed();
  }

  remove(uid: string): void {
    this.#legacy.delete(uid);
    if (this.#pods.delete(uid)) this.#checkpoint?.changed();
  }

  /** Resolves once the changes made so far are checkpointed. */
  flushed(): Promise<void> {
    return this.#checkpoint?.flushed() ?? Promise.resolve();
  }
}
