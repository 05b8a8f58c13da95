// A runtime event stream kept open for as long as the kubelet runs: re-subscribed with jittered
// backoff when it drops, and the PLEG told to relist whenever it is (back) up, since events sent
// meanwhile are lost. Both of the runtime's event streams (cri-events.ts, containerd-events.ts)
// are one of these.
import { type Client, type ClientReadableStream, connectivityState, type ServiceError } from '@grpc/grpc-js';
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
  /**
   * Whether the stream's channel is connected (grpc-js: READY). containerd sends a server stream's
   * headers with its first event, so on an idle node the stream never says it is up: without this,
   * the PLEG kept its short period (a relist a second) until the first container event.
   */
  ready?: () => boolean;
  /** How often `ready` is polled until the stream is up (1 s). */
  readyPollMs?: number;
}

/**
 * Polls of `ready` in a row, a poll apart, before an open stream counts as up without headers: the
 * request went out when the channel became ready, so a poll later the runtime has subscribed it,
 * and the relist that `onReconnect` asks for sees whatever came before.
 */
export const READY_POLLS = 2;

/** A grpc-js client's channel is connected (READY; not asked to connect: the stream's own call does). */
export const channelReady = (client: Client): boolean => client.getChannel().getConnectivityState(false) === connectivityState.READY;

export function keepStream<T>(spec: StreamSpec<T>, o: RuntimeEventsOptions): { stop(): void } {
  let stopped = false,
    up = false,
    call: ClientReadableStream<T> | undefined;
  const retry = backoff(200, 30_000);
  (async () => {
    while (!stopped) {
      const final = await new Promise<boolean>((resolve) => {
        call = spec.open();
        let connected = false,
          polls = 0;
        const subscribed = () => {
          if (connected) return;
          clearInterval(poll);
          connected = up = true;
          retry.reset();
          o.observe?.(true);
          o.log.info(`Subscribed to ${spec.name}`);
          o.onReconnect();
        };
        const poll = setInterval(() => {
          polls = spec.ready?.() ? polls + 1 : 0;
          if (polls >= READY_POLLS) subscribed();
        }, spec.readyPollMs ?? 1000);
        const done = (final: boolean) => {
          clearInterval(poll);
          resolve(final);
        };
        call.on('metadata', subscribed);
        call.on('data', (m: T) => {
          const e = spec.event(m);
          if (e) o.onEvent(e);
        });
        call.on('error', (e: ServiceError) => {
          if (stopped) return done(false);
          if (spec.final?.(e)) return done(true);
          o.observe?.(false);
          o.log.warn(`${spec.name} stream failed`, { err: e.message, connected });
          done(false);
        });
        call.on('end', () => done(false));
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
