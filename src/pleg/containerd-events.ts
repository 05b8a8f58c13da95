// Subscribes to containerd's task events (namespace k8s.io) and reports container
// starts and exits as they happen, for runtimes without CRI's container events (containerd
// 1.6; cri-events.ts chooses). The PLEG relist stays the source of truth; this only tells it
// when to look. The stream is re-established with backoff when it drops (containerd restarts
// do not replay events, so every reconnect asks for a relist).
import { fileURLToPath } from 'node:url';
import { credentials, Client, Metadata } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { grpcTarget } from '../cri/endpoint.ts';
import { channelReady, keepStream } from './event-stream.ts';
import type { RuntimeEvent, RuntimeEventsOptions } from './runtime-events.ts';

const PROTO_DIR = fileURLToPath(new URL('../../proto/containerd/', import.meta.url));

interface Envelope {
  topic: string;
  namespace: string;
  event?: { type_url: string; value: Buffer };
}

const topics: Record<string, RuntimeEvent['kind']> = {
  'containerd.events.TaskStart': 'start',
  'containerd.events.TaskExit': 'exit',
  'containerd.events.TaskDelete': 'delete',
  'containerd.events.TaskOOM': 'oom',
};

/** Pure: the event an envelope carries for us, or undefined (an exec's exit, other topics). */
export function taskEvent(
  env: Envelope,
  decode: (typeUrl: string, value: Buffer) => { container_id?: string; id?: string } | undefined,
): RuntimeEvent | undefined {
  const kind = env.event && topics[env.event.type_url];
  if (!kind) return undefined;
  const msg = decode(env.event!.type_url, env.event!.value);
  if (!msg?.container_id) return undefined;
  if (kind === 'exit' && msg.id && msg.id !== msg.container_id) return undefined; // an exec or probe process
  return { kind, containerID: msg.container_id };
}

export function containerdEvents(endpoint: string, o: RuntimeEventsOptions): { stop(): void } {
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
  const stream = keepStream(
    {
      name: 'containerd task events',
      open: () =>
        client.makeServerStreamRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          { filters: ['namespace==k8s.io,topic~="^/tasks/"'] },
          new Metadata({ waitForReady: true }),
        ),
      event: (env) => taskEvent(env, decode),
      ready: () => channelReady(client),
    },
    o,
  );
  return {
    stop() {
      stream.stop();
      client.close();
    },
  };
}
