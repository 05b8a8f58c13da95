// An in-memory PullRecords for tests. Not named .test.ts, so the unit test glob does not run
// it as a test file; tsconfig.build.json leaves it out of dist.
import type { ImagePullIntent, ImagePulledRecord } from './records.ts';
import type { PullRecords } from './store.ts';

export class MemoryRecords implements PullRecords {
  readonly intents = new Map<string, ImagePullIntent>();
  readonly pulled = new Map<string, ImagePulledRecord>();
  writeIntent(image: string) {
    this.intents.set(image, { image });
  }
  intentExists(image: string) {
    return this.intents.has(image);
  }
  deleteIntent(image: string) {
    this.intents.delete(image);
  }
  listIntents() {
    return [...this.intents.values()];
  }
  getPulled(imageRef: string) {
    const r = this.pulled.get(imageRef);
    return r && structuredClone(r);
  }
  writePulled(r: ImagePulledRecord) {
    this.pulled.set(r.imageRef, structuredClone(r));
  }
  deletePulled(imageRef: string) {
    this.pulled.delete(imageRef);
  }
  listPulled() {
    return [...this.pulled.values()].map((r) => structuredClone(r));
  }
}
