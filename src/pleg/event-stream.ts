// A runtime event stream kept open for as long as the kubelet runs: re-subscribed with jittered
// backoff when it drops, and the PLEG told to relist whenever it is (back) up, since events sent
// meanwhile are lost. Both of the runtime's event streams (cri-events.ts, containerd-events.ts)
// are one of these.
import type { ClientReadableStream, ServiceError } from '@grpc/grpc-js';
import { backoff, sleep } from '../backoff/backoff.ts';
import type { RuntimeEvent, RuntimeEventsOptions } from './runtime-events.ts';

export interface StreamSpec<T> {
  /** What it is, for the log: "CRI container events". */
  name: string;
  open: () => ClientReadableStream<T>;
  /** The event a message carries for the PLEG, if any. */
  event: (message: T) => RuntimeEvent | undefined;
  /** An error that ends the stream for good (the runtime does not serve it); then `ended` runs. */
  final?: (e: ServiceError) => boolean;
  ended?: () => void;
}

export function keepStream<T>(spec: StreamSpec<T>, o: RuntimeEventsOptions): { stop(): void } {
  let stopped = false,
    up = false,
    call: ClientReadableStream<T> | undefined;
  const retry = backoff(200, 30_000);
  (async () => {
    while (!stopped) {
      const final = await new Promise<boolean>((resolve) => {
        call = spec.open();
        let connected = false;
        call.on('metadata', () => {
          connected = up = true;
          retry.reset();
          o.observe?.(true);
          o.log.info(`Subscribed to ${spec.name}`);
          o.onReconnect();
        });
        call.on('data', (m: T) => {
          const e = spec.event(m);
          if (e) o.onEvent(e);
        });
        call.on('error', (e: ServiceError) => {
          if (stopped) return resolve(false);
          if (spec.final?.(e)) return resolve(true);
          o.observe?.(false);
          o.log.warn(`${spec.name} stream failed`, { err: e.message, connected });
          resolve(false);
        });
        call.on('end', () => resolve(false));
      });
      if (up && !stopped) {
        up = false;
        o.onDisconnect?.();
      }
      if (final) return spec.ended?.();
      if (!stopped) await sleep(retry.next());
    }
  })();
  return {
    stop() {
      stopped = true;
      call?.cancel();
    },
  };
}
