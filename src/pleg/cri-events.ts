// CRI's container events (RuntimeService.GetContainerEvents, containerd 1.7 and on), the stream
// upstream's Evented PLEG reads: the runtime says when it shows a container stopped, after it
// updated the container's status, so the relist it wakes sees the exit at once instead of at
// a guessed moment after containerd's TaskExit. Only the event's container, type and pod UID are
// read (the PLEG relists that pod alone): each event also carries the statuses of every container
// of its pod, which that relist reads anyway. A runtime that answers UNIMPLEMENTED (containerd 1.6)
// gets containerd's task events instead (containerd-events.ts). The stream is re-established with
// backoff when it drops.
import { Client, credentials, Metadata, status } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { grpcTarget } from '../cri/endpoint.ts';
import { criServices } from '../cri/proto.ts';
import { containerdEvents } from './containerd-events.ts';
import { channelReady, keepStream } from './event-stream.ts';
import type { RuntimeEvent, RuntimeEventsOptions } from './runtime-events.ts';

/** runtime.v1.ContainerEventType */
const CONTAINER_STOPPED_EVENT = 2;

/** The string at a path of field numbers through nested messages between r.pos and end, or ''. */
function stringAt(r: protobuf.Reader, end: number, path: readonly number[]): string {
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag >>> 3 !== path[0] || (tag & 7) !== 2) r.skipType(tag & 7);
    else if (path.length === 1) return r.string();
    else return stringAt(r, r.uint32() + r.pos, path.slice(1));
  }
  return '';
}

/** PodSandboxStatus.metadata (2) .uid (2). */
const SANDBOX_UID = [2, 2];

interface EventHead {
  containerID: string;
  type: number;
  /** The pod's UID, from the event's sandbox status; '' when the runtime sent none. */
  podUID: string;
}

/**
 * Pure: a ContainerEventResponse's container_id (field 1), container_event_type (field 2) and
 * pod_sandbox_status.metadata.uid (field 4), every other field skipped undecoded.
 */
export function decodeEventHead(buf: Uint8Array): EventHead {
  const r = protobuf.Reader.create(buf);
  let containerID = '',
    type = 0,
    podUID = '';
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag >>> 3 === 1) containerID = r.string();
    else if (tag >>> 3 === 2) type = r.int32();
    else if (tag >>> 3 === 4 && (tag & 7) === 2) {
      const end = r.uint32() + r.pos;
      podUID = stringAt(r, end, SANDBOX_UID);
      r.pos = end;
    } else r.skipType(tag & 7);
  }
  return { containerID, type, podUID };
}

/** Pure: the event the PLEG acts on (a container or sandbox stopped), or undefined. */
export function criEvent(head: EventHead): RuntimeEvent | undefined {
  if (head.type !== CONTAINER_STOPPED_EVENT || !head.containerID) return undefined;
  return { kind: 'stopped', containerID: head.containerID, ...(head.podUID ? { podUID: head.podUID } : {}) };
}

/** CRI's container events, or containerd's task events where the runtime does not serve them. */
export function runtimeEvents(endpoint: string, o: RuntimeEventsOptions): { stop(): void } {
  const method = criServices().runtime.GetContainerEvents;
  // No keepalive pings: containerd answers frequent pings with GOAWAY too_many_pings.
  const client = new Client(grpcTarget(endpoint), credentials.createInsecure());
  let fallback: { stop(): void } | undefined;
  const stream = keepStream(
    {
      name: 'CRI container events',
      open: () =>
        client.makeServerStreamRequest(method.path, () => Buffer.alloc(0), decodeEventHead, {}, new Metadata({ waitForReady: true })),
      event: criEvent,
      ready: () => channelReady(client),
      final: (e) => e.code === status.UNIMPLEMENTED,
      ended: () => {
        o.log.info("The runtime does not serve CRI container events (GetContainerEvents); watching containerd's task events");
        client.close();
        fallback = containerdEvents(endpoint, o);
      },
    },
    o,
  );
  return {
    stop() {
      stream.stop();
      client.close();
      fallback?.stop();
    },
  };
}

/**
 * Whether the runtime's events wake the relist. Upstream's EventedPLEG gate is off by default and
 * its PLEG then relists every second; kubelet-ts listens to the events unless the gate is set
 * false, which leaves the 1 s relist alone, as the upstream kubelet runs.
 */
export const runtimeEventsWanted = (featureGates: Record<string, boolean>): boolean => featureGates.EventedPLEG !== false;
