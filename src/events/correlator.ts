// Repeated events as upstream's recorder sends them (client-go tools/record events_cache.go,
// EventCorrelator with its defaults, which the kubelet keeps): the same event again becomes a
// PATCH of the first one's count, lastTimestamp and message ("x5 over 2m" in kubectl describe)
// instead of a new object; more than 10 messages of one reason for one object within 10 minutes
// are combined into one event ("(combined from similar events): ..."); and each object gets at
// most 25 events at once, then one per 5 minutes (the spam filter). A crash-looping container or
// a failing probe thus costs the apiserver a few requests, not one per back-off or probe period.
// Pure but for its caches: the clock is passed in.
import type { Event } from 'kubernetes-types/core/v1.js';
import { rfc3339 } from '../apiserver/time.ts';
import { TokenBucket } from '../backoff/token-bucket.ts';

const LRU_ENTRIES = 4096;
const SPAM_BURST = 25;
const SPAM_QPS = 1 / 300;
const AGGREGATE_MAX_EVENTS = 10;
const AGGREGATE_INTERVAL_MS = 600_000;

/** What to send for an event: nothing (spam), a new Event, or a patch of the one sent before. */
export type Correlated = { skip: true } | { skip: false; event: Event; patch?: { count: number; lastTimestamp: string; message: string } };

/** A map that forgets its least recently used entry past its size (client-go's lru.Cache). */
class Lru<V> {
  readonly #m = new Map<string, V>();
  readonly size: number;
  constructor(size: number) {
    this.size = size;
  }
  get(k: string): V | undefined {
    const v = this.#m.get(k);
    if (v !== undefined) {
      this.#m.delete(k);
      this.#m.set(k, v);
    }
    return v;
  }
  set(k: string, v: V): void {
    this.#m.delete(k);
    this.#m.set(k, v);
    if (this.#m.size > this.size) this.#m.delete(this.#m.keys().next().value!);
  }
}

const src = (e: Event) => [e.source?.component, e.source?.host];
const obj = (e: Event) => {
  const o = e.involvedObject;
  return [o.kind, o.namespace, o.name, o.uid, o.apiVersion];
};
const key = (parts: (string | undefined)[]) => parts.map((p) => p ?? '').join('\u0000');
/** getEventKey: everything that makes two events the same, message included. */
const eventKey = (e: Event) => {
  const o = e.involvedObject;
  return key([...src(e), o.kind, o.namespace, o.name, o.fieldPath, o.uid, o.apiVersion, e.type, e.reason, e.message]);
};
/** EventAggregatorByReasonFunc: the same but for the message (the local key). */
const aggregateKey = (e: Event) => key([...src(e), ...obj(e), e.type, e.reason, e.reportingComponent, e.reportingInstance]);
/** getSpamKey: the source and the object. */
const spamKey = (e: Event) => key([...src(e), ...obj(e), e.type]);

export class EventCorrelator {
  readonly #now: () => number;
  readonly #aggregates = new Lru<{ messages: Set<string>; lastMs: number }>(LRU_ENTRIES);
  readonly #seen = new Lru<{ count: number; firstTimestamp?: string; name: string }>(LRU_ENTRIES);
  readonly #buckets = new Lru<TokenBucket>(LRU_ENTRIES);

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** upstream's EventCorrelate: aggregate, then observe (count), then the spam filter. */
  correlate(incoming: Event): Correlated {
    const [event, observedKey] = this.#aggregate(incoming);
    const last = this.#seen.get(observedKey);
    let out: Event = event;
    let patch: { count: number; lastTimestamp: string; message: string } | undefined;
    if (last) {
      const count = last.count + 1;
      out = { ...event, metadata: { ...event.metadata, name: last.name }, firstTimestamp: last.firstTimestamp, count };
      patch = { count, lastTimestamp: event.lastTimestamp!, message: event.message ?? '' };
    }
    this.#seen.set(observedKey, { count: out.count ?? 1, firstTimestamp: out.firstTimestamp, name: out.metadata!.name! });
    if (!this.#accept(spamKey(out))) return { skip: true };
    return patch ? { skip: false, event: out, patch } : { skip: false, event: out };
  }

  /** EventAggregate: past 10 messages of one reason for one object within 10 minutes, one combined event. */
  #aggregate(e: Event): [Event, string] {
    const now = this.#now();
    const k = aggregateKey(e);
    let rec = this.#aggregates.get(k);
    if (!rec || now - rec.lastMs > AGGREGATE_INTERVAL_MS) rec = { messages: new Set(), lastMs: now };
    rec.messages.add(e.message ?? '');
    rec.lastMs = now;
    this.#aggregates.set(k, rec);
    if (rec.messages.size < AGGREGATE_MAX_EVENTS) return [e, eventKey(e)];
    // PopAny: one message makes room, so the set stays at the limit.
    rec.messages.delete(rec.messages.values().next().value!);
    const t = rfc3339(new Date(now));
    const combined: Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${e.involvedObject.name}.${(BigInt(now) * 1_000_000n).toString(16)}`, namespace: e.metadata?.namespace },
      count: 1,
      firstTimestamp: t,
      lastTimestamp: t,
      involvedObject: e.involvedObject,
      message: `(combined from similar events): ${e.message ?? ''}`,
      type: e.type,
      reason: e.reason,
      source: e.source,
    };
    return [combined, k];
  }

  /** The spam filter: a token bucket per object (flowcontrol's passive TryAccept): 25 at once, then one per 5 minutes. */
  #accept(k: string): boolean {
    let b = this.#buckets.get(k);
    if (!b) b = new TokenBucket(SPAM_QPS, SPAM_BURST, this.#now);
    this.#buckets.set(k, b);
    return b.tryAccept();
  }
}
