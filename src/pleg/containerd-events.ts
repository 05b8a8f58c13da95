// Subscribes to containerd's task events (namespace k8s.io) and reports container
// starts and exits as they happen. The PLEG relist stays the source of truth; this
// only tells it when to look. The stream is re-established with backoff when it drops
// (containerd restarts do not replay events, so every reconnect asks for a relist).
import { fileURLToPath } from 'node:url';
import { credentials, Client, Metadata, type ClientReadableStream } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { grpcTarget } from '../cri/endpoint.ts';
import { backoff, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';

const PROTO_DIR = fileURLToPath(new URL('../../proto/containerd/', import.meta.url));

export type TaskEvent = { kind: 'start' | 'exit' | 'delete' | 'oom'; containerID: string };

interface Envelope {
  topic: string;
  namespace: string;
  event?: { type_url: string; value: Buffer };
}

const topics: Record<string, TaskEvent['kind']> = {
  'containerd.events.TaskStart': 'start',
  'containerd.events.TaskExit': 'exit',
  'containerd.events.TaskDelete': 'delete',
  'containerd.events.TaskOOM': 'oom',
};

/**
 * Pure: when to relist after a task event (ms from now), none for most. containerd's CRI
 * handles a TaskExit by deleting the task, then marking the container exited (its
 * handleContainerExit): a relist at once would still see it running (~110 ms), so an exit
 * asks for relists shortly after, and the TaskDelete of a container whose exit the relist has
 * not seen yet, for one right after it. Starts and other deletes are the kubelet's own doing,
 * and its sync reads the runtime after them: relisting on every start cost ~60% more kubelet
 * CPU during a burst of pod starts.
 */
export function relistsAfter(e: TaskEvent, awaitingExit: (containerID: string) => boolean): readonly number[] {
  if (e.kind === 'exit' || e.kind === 'oom') return EXIT_RELISTS_MS;
  if (e.kind === 'delete' && awaitingExit(e.containerID)) return DELETE_RELISTS_MS;
  return [];
}
/** After an exit: by then CRI usually shows it; later ones run only while it does not. */
export const EXIT_RELISTS_MS = [120, 250, 500];
/** After the exited container's task is deleted: CRI marks it exited next (a status file written). */
export const DELETE_RELISTS_MS = [15];

/** Pure: the event an envelope carries for us, or undefined (an exec's exit, other topics). */
export function taskEvent(
  env: Envelope,
  decode: (typeUrl: string, value: Buffer) => { container_id?: string; id?: string } | undefined,
): TaskEvent | undefined {
  const kind = env.event && topics[env.event.type_url];
  if (!kind) return undefined;
  const msg = decode(env.event!.type_url, env.event!.value);
  if (!msg?.container_id) return undefined;
  if (kind === 'exit' && msg.id && msg.id !== msg.container_id) return undefined; // an exec or probe process
  return { kind, containerID: msg.container_id };
}

export function containerdEvents(
  endpoint: string,
  o: {
    onEvent: (e: TaskEvent) => void;
    onReconnect: () => void;
    log: Logger;
    observe?: (ok: boolean) => void;
  },
): { stop(): void } {
  const def = loadSync(`${PROTO_DIR}events.proto`, { keepCase: true, longs: String, enums: String, defaults: true });
  const method = (
    def['containerd.services.events.v1.Events'] as Record<
      string,
      { path: string; requestSerialize: (v: unknown) => Buffer; responseDeserialize: (b: Buffer) => Envelope }
    >
  ).Subscribe!;
  const root = new protobuf.Root().loadSync(`${PROTO_DIR}task-events.proto`, { keepCase: true });
  const decode = (typeUrl: string, value: Buffer) => {
    try {
      return root.lookupType(typeUrl).decode(value) as { container_id?: string; id?: string };
    } catch {
      return undefined;
    }
  };
  // No keepalive pings: containerd answers frequent pings with GOAWAY too_many_pings.
  const client = new Client(grpcTarget(endpoint), credentials.createInsecure());
  let stopped = false,
    call: ClientReadableStream<Envelope> | undefined;
  const retry = backoff(200, 30_000);

  (async () => {
    while (!stopped) {
      const md = new Metadata({ waitForReady: true });
      await new Promise<void>((resolve) => {
        call = client.makeServerStreamRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          { filters: ['namespace==k8s.io,topic~="^/tasks/"'] },
          md,
        );
        let connected = false;
        call.on('metadata', () => {
          connected = true;
          retry.reset();
          o.observe?.(true);
          o.log.info('Subscribed to containerd task events');
          o.onReconnect();
        });
        call.on('data', (env: Envelope) => {
          const e = taskEvent(env, decode);
          if (e) o.onEvent(e);
        });
        call.on('error', (e) => {
          if (!stopped) {
            o.observe?.(false);
            o.log.warn('containerd event stream failed', { err: e.message, connected });
          }
          resolve();
        });
        call.on('end', () => resolve());
      });
      if (!stopped) await sleep(retry.next());
    }
  })();
  return {
    stop() {
      stopped = true;
      call?.cancel();
      client.close();
    },
  };
}
