// Which pod holds which slot of the kubelet's ID range: upstream's UsernsManager bookkeeping
// (allocateOne, record, releaseWithLock in pkg/kubelet/userns/userns_manager.go) over its
// allocation bitmap, whose AllocateNext starts at a random slot and takes the next free one.
// In memory only, rebuilt at start from the pods' userns files (manager.ts); errors carry
// upstream's words.
import type { Slots } from './id-range.ts';

export class UsernsAllocator {
  readonly #slots: Slots;
  readonly #random: () => number;
  /** Slot indices in use (upstream's bitmap). */
  readonly #used = new Set<number>();
  /** The first host ID of each pod's range, by pod UID (upstream's usedBy). */
  readonly #byPod = new Map<string, number>();

  /** random: where the scan for a free slot starts (upstream's randomScanStrategy); tests fix it. */
  constructor(slots: Slots, random: () => number = Math.random) {
    this.#slots = slots;
    this.#random = random;
  }

  /** The first host ID of the pod's range, if it has one. */
  get(uid: string): number | undefined {
    return this.#byPod.get(uid);
  }

  /** allocateOne: a free slot for the pod; its first host ID. */
  allocate(uid: string): number {
    const { offset, count, size } = this.#slots;
    if (this.#used.size < count) {
      const start = Math.floor(this.#random() * count);
      for (let i = 0; i < count; i++) {
        const at = (start + i) % count;
        if (this.#used.has(at)) continue;
        this.#used.add(at);
        const firstID = (at + offset) * size;
        this.#byPod.set(uid, firstID);
        return firstID;
      }
    }
    throw new Error('could not find an empty slot to allocate a user namespace');
  }

  /** record: the range [from, from + length) a pod already holds (read back from its file). */
  record(uid: string, from: number, length: number): void {
    const { size } = this.#slots;
    if (length !== size) throw new Error(`wrong user namespace length ${length}`);
    if (from % size !== 0) throw new Error(`wrong user namespace offset specified ${from}`);
    const prev = this.#byPod.get(uid);
    if (prev !== undefined && prev !== from) throw new Error(`different user namespace range already used by pod "${uid}"`);
    const index = from / size - this.#slots.offset;
    if (index < 0 || index >= this.#slots.count) throw new Error(`id ${from} is out of range`);
    if (prev === undefined && this.#used.has(index)) throw new Error(`range picked for pod "${uid}" already taken`);
    this.#used.add(index);
    this.#byPod.set(uid, from);
  }

  /** releaseWithLock's bookkeeping: the pod's slot is free again; whether it had one. */
  release(uid: string): boolean {
    const from = this.#byPod.get(uid);
    if (from === undefined) return false;
    this.#byPod.delete(uid);
    this.#used.delete(from / this.#slots.size - this.#slots.offset);
    return true;
  }
}
