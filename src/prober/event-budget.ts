// How many probe events a pod may leave: a probe failing every second must not write an
// Event a second. Upstream's event correlator allows each object a burst of 25, then one
// per 5 minutes (EventSourceObjectSpamFilter); the same budget here, per pod and reason. Pure.
export interface Bucket {
  tokens: number;
  atMs: number;
}

export const EVENT_BURST = 25;
export const EVENT_REFILL_MS = 5 * 60_000;

/** Whether one more event may go now, and the bucket after it. */
export function takeEventToken(b: Bucket | undefined, nowMs: number): { ok: boolean; bucket: Bucket } {
  const cur = b ?? { tokens: EVENT_BURST, atMs: nowMs };
  const refilled = Math.min(EVENT_BURST, cur.tokens + Math.floor((nowMs - cur.atMs) / EVENT_REFILL_MS));
  // Keep the remainder of a partial refill period.
  const atMs = refilled === EVENT_BURST ? nowMs : cur.atMs + Math.floor((nowMs - cur.atMs) / EVENT_REFILL_MS) * EVENT_REFILL_MS;
  if (refilled < 1) return { ok: false, bucket: { tokens: refilled, atMs } };
  return { ok: true, bucket: { tokens: refilled - 1, atMs } };
}
