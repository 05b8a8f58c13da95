// Kubernetes Events for the decisions an operator asks about ("why is my pod not
// starting?"). Sent in the background through a bounded queue: a slow apiserver
// delays events, never pod work, and a full queue drops (and counts) the newest.
// Repeats are correlated as upstream's recorder does (correlator.ts), and the sends are
// limited to eventRecordQPS with eventBurst at once (the kubelet's event client).
import type { Event, ObjectReference } from 'kubernetes-types/core/v1.js';
import type { ApiClient } from '../apiserver/client.ts';
import { backoff, sleep } from '../backoff/backoff.ts';
import { TokenBucket } from '../backoff/token-bucket.ts';
import { EventCorrelator } from './correlator.ts';
import type { Logger } from '../log/log.ts';
import { apiPath } from '../apiserver/paths.ts';
import { rfc3339 } from '../apiserver/time.ts';

export type EventType = 'Normal' | 'Warning';
export interface Recorder {
  event(obj: ObjectReference, type: EventType, reason: string, message: string): void;
}

export function eventRecorder(
  api: ApiClient,
  opts: {
    host: string;
    log: Logger;
    maxQueued?: number;
    onDrop?: () => void;
    /** eventRecordQPS and eventBurst (0 qps: no limit); upstream's defaults 50 and 100. */
    qps?: number;
    /** Each send's wait for its token, by verb (upstream's events client is rate-limited by client-go). */
    throttled?: (verb: string, seconds: number) => void;
    burst?: number;
    now?: () => number;
  },
): Recorder & { stop(): void } {
  const queue: Event[] = [];
  const max = opts.maxQueued ?? 1000;
  const retry = backoff(500, 10_000);
  const correlator = new EventCorrelator(opts.now);
  const limit = new TokenBucket(opts.qps ?? 50, opts.burst ?? 100, opts.now);
  let wake: (() => void) | undefined;
  let stopped = false;
  let seq = 0;

  (async () => {
    while (!stopped) {
      const ev = queue.shift();
      if (!ev) {
        await new Promise<void>((r) => (wake = r));
        continue;
      }
      // Correlated once, however often it is retried: a retry is not a repeat.
      const c = correlator.correlate(ev);
      while (!c.skip && !stopped) {
        try {
          const waitMs = limit.reserve();
          // qps 0: no limiter, as upstream's events client then has none (nothing waits, nothing observed).
          if (opts.qps !== 0) opts.throttled?.(c.patch ? 'PATCH' : 'POST', Math.max(0, waitMs) / 1000);
          if (waitMs > 0) await sleep(waitMs);
          await send(c.event, c.patch);
          retry.reset();
          break;
        } catch (e) {
          const status = (e as { status?: number }).status ?? 0;
          // 4xx other than throttling will not get better: drop it rather than block the queue.
          if (status >= 400 && status < 500 && status !== 429) {
            opts.log.warn('Event rejected', { reason: ev.reason, err: e });
            break;
          }
          await sleep(retry.next());
        }
      }
    }
  })();

  /** upstream's recordEvent: a repeat patches the event sent before, or is created anew when that one is gone. */
  async function send(ev: Event, patch: object | undefined) {
    const namespace = ev.metadata!.namespace;
    if (patch) {
      try {
        await api.patch(apiPath({ resource: 'events', namespace, name: ev.metadata!.name }), patch, 'strategic');
        return;
      } catch (e) {
        if ((e as { status?: number }).status !== 404) throw e;
      }
    }
    await api.create(apiPath({ resource: 'events', namespace }), ev);
  }

  return {
    event(obj, type, reason, message) {
      if (queue.length >= max) {
        opts.onDrop?.();
        return;
      }
      const now = new Date(opts.now?.() ?? Date.now());
      const t = rfc3339(now);
      const ns = obj.namespace || 'default';
      queue.push({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${obj.name}.${(BigInt(now.getTime()) * 1_000_000n + BigInt(seq++ % 1_000_000)).toString(16)}`, namespace: ns },
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

/** The kubelet's reference to its Node in events (upstream's nodeRef: the node's name as its UID too). */
export const nodeRef = (name: string): ObjectReference => ({ kind: 'Node', name, uid: name });

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
