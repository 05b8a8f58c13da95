// Backpressure between the client's connection and the runtime's in the stream translation.
import type { Duplex } from 'node:stream';

/** Writes bytes to `to`; while `to` waits for a drain, `from`'s reads wait too. */
export function relay(from: Duplex, to: Duplex, bytes: Buffer): void {
  if (to.destroyed) return;
  if (!to.write(bytes) && !from.isPaused()) {
    from.pause();
    to.once('drain', () => from.resume());
  }
}
