// Kubernetes Events for the decisions an operator asks about ("why is my pod not
// starting?"). Sent in the background through a bounded queue: a slow apiserver
// delays events, never pod work, and a full queue drops (and counts) the newest.
import type { Event, ObjectReference } from 'kubernetes-types/core/v1.js';
import type { ApiClient } from '../apiserver/client.ts';
import { backoff, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import { apiPath } from '../apiserver/paths.ts';
import { rfc3339 } from '../apiserver/time.ts';

export type EventType = 'Normal' | 'Warning';
export interface Recorder {
  event(obj: ObjectReference, type: EventType, reason: string, message: string): void;
}

export function eventRecorder(
  api: ApiClient,
  opts: { host: string; log: Logger; maxQueued?: number; onDrop?: () => void },
): Recorder & { stop(): void } {
  const queue: Event[] = [];
  const max = opts.maxQueued ?? 1000;
  const retry = backoff(500, 10_000);
  let wake: (() => void) | undefined;
  let stopped = false;

  (async () => {
    while (!stopped) {
      const ev = queue[0];
      if (!ev) {
        await new Promise<void>((r) => (wake = r));
        continue;
      }
      try {
        await api.create(apiPath({ resource: 'events', namespace: ev.metadata!.namespace }), ev);
        queue.shift();
        retry.reset();
      } catch (e) {
        const status = (e as { status?: number }).status ?? 0;
        // 4xx other than throttling will not get better: drop it rather than block the queue.
        if (status >= 400 && status < 500 && status !== 429) {
          queue.shift();
          opts.log.warn('Event rejected', { reason: ev.reason, err: e });
          continue;
        }
        await sleep(retry.next());
      }
    }
  })();

  return {
    event(obj, type, reason, message) {
      if (queue.length >= max) {
        opts.onDrop?.();
        return;
      }
      const now = new Date();
      const t = rfc3339(now);
      const ns = obj.namespace || 'default';
      queue.push({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${obj.name}.${(BigInt(now.getTime()) * 1_000_000n + BigInt(queue.length)).toString(16)}`, namespace: ns },
        involvedObject: obj,
        reason,
        message,
        type,
        source: { component: 'kubelet', host: opts.host },
        firstTimestamp: t,
        lastTimestamp: t,
        count: 1,
        reportingComponent: 'kubelet',
        reportingInstance: opts.host,
      });
      wake?.();
      wake = undefined;
    },
    stop() {
      stopped = true;
      wake?.();
    },
  };
}

export const podRef = (
  pod: { metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string } },
  fieldPath?: string,
): ObjectReference => ({
  apiVersion: 'v1',
  kind: 'Pod',
  name: pod.metadata?.name,
  namespace: pod.metadata?.namespace,
  uid: pod.metadata?.uid,
  ...(fieldPath ? { fieldPath } : {}),
});
