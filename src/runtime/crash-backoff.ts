// The crash-loop back-off of restarted containers: upstream's flowcontrol.Backoff as the kubelet
// builds it (NewBackOff(10s, 5m) with a HasExpiredFunc of 600 s, pkg/kubelet/kubelet.go), keyed
// as kuberuntime's GetBackoffKey so that a new image or new resources start a fresh back-off.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { featureEnabled } from '../features/gates.ts';

export const CRASH_BACKOFF_INITIAL_MS = 10_000;
export const CRASH_BACKOFF_MAX_MS = 300_000;
// The kubelet's HasExpiredFunc: an entry not advanced for this long is stable again (and GC'd).
export const CRASH_BACKOFF_EXPIRY_MS = 600_000;
// ReduceDefaultCrashLoopBackOffDecay's (alpha, off) initial delay and cap.
const REDUCED_INITIAL_MS = 1_000;
const REDUCED_MAX_MS = 60_000;

/**
 * Pure: the crash-loop back-off's initial delay and cap, as upstream's newCrashLoopBackOff
 * (pkg/kubelet/kubelet.go): 10 s to 5 min, or 1 s to 60 s with ReduceDefaultCrashLoopBackOffDecay;
 * with KubeletCrashLoopBackOffMax on, the configured crashLoopBackOff.maxContainerRestartPeriod is
 * the cap, and the initial delay too when it is shorter.
 */
export function crashLoopBackOffPeriods(c: {
  featureGates: Readonly<Record<string, boolean>>;
  crashLoopBackOff: { maxContainerRestartPeriodMs?: number };
}): { initialMs: number; maxMs: number } {
  const reduced = featureEnabled(c.featureGates, 'ReduceDefaultCrashLoopBackOffDecay');
  let initialMs = reduced ? REDUCED_INITIAL_MS : CRASH_BACKOFF_INITIAL_MS;
  let maxMs = reduced ? REDUCED_MAX_MS : CRASH_BACKOFF_MAX_MS;
  const configured = c.crashLoopBackOff.maxContainerRestartPeriodMs;
  if (featureEnabled(c.featureGates, 'KubeletCrashLoopBackOffMax') && configured !== undefined) {
    maxMs = configured;
    initialMs = Math.min(initialMs, maxMs);
  }
  return { initialMs, maxMs };
}

/**
 * The back-off key of a pod's container, as upstream's GetBackoffKey: an FNV-64a of pod name,
 * namespace, uid, container name, image and resources, so that a changed image (the e2e "back-off
 * timer reset on image update") or an in-place resize earns a fresh back-off. Prefixed with
 * "uid/name/" (not upstream) so that a removed pod's entries can be dropped by prefix.
 */
export function crashBackoffKey(pod: Pod, c: Container): string {
  const m = pod.metadata!;
  const fields = [m.name ?? '', m.namespace ?? '', m.uid ?? '', c.name, c.image ?? '', canonicalJSON(c.resources ?? {})];
  return `${m.uid}/${c.name}/${fnv64a(fields.join('/'))}`;
}

/** JSON with sorted keys: the same resources give the same text whatever order they arrived in. */
function canonicalJSON(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJSON).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJSON((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

const FNV64_OFFSET = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;
const MASK64 = (1n << 64n) - 1n;

/** hash/fnv New64a over the UTF-8 bytes, in hex as strconv.FormatUint(h, 16). */
export function fnv64a(text: string): string {
  let h = FNV64_OFFSET;
  for (const b of Buffer.from(text, 'utf8')) h = ((h ^ BigInt(b)) * FNV64_PRIME) & MASK64;
  return h.toString(16);
}

interface Entry {
  backoffMs: number;
  lastUpdateMs: number;
}

/** Per-key exponential back-off, as client-go's flowcontrol.Backoff (no jitter, as the kubelet's). */
export class CrashBackoff {
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;
  readonly #initialMs: number;
  readonly #maxMs: number;

  constructor(opts: { now?: () => number; initialMs?: number; maxMs?: number } = {}) {
    this.#now = opts.now ?? Date.now;
    this.#initialMs = opts.initialMs ?? CRASH_BACKOFF_INITIAL_MS;
    this.#maxMs = opts.maxMs ?? CRASH_BACKOFF_MAX_MS;
  }

  /** The current delay of key, 0 when none (Backoff.Get). */
  get(key: string): number {
    return this.#entries.get(key)?.backoffMs ?? 0;
  }

  /** Whether key is still backing off from an event (a container's finish) at eventMs (Backoff.IsInBackOffSince). */
  isInBackOffSince(key: string, eventMs: number): boolean {
    const e = this.#entries.get(key);
    if (!e || expired(eventMs, e.lastUpdateMs)) return false;
    return this.#now() - eventMs < e.backoffMs;
  }

  /** Arms the next delay: the initial one when none or expired, else doubled up to the max (Backoff.Next). */
  next(key: string, eventMs: number): void {
    const e = this.#entries.get(key);
    const backoffMs = !e || expired(eventMs, e.lastUpdateMs) ? this.#initialMs : Math.min(e.backoffMs * 2, this.#maxMs);
    this.#entries.set(key, { backoffMs, lastUpdateMs: this.#now() });
  }

  /** Drops the entries not advanced for the expiry (Backoff.GC, run by upstream's HandlePodCleanups). */
  gc(): void {
    const now = this.#now();
    for (const [k, e] of this.#entries) if (expired(now, e.lastUpdateMs)) this.#entries.delete(k);
  }

  /** Drops every entry whose key starts with prefix (a removed pod's, "uid/"). */
  forget(prefix: string): void {
    for (const k of this.#entries.keys()) if (k.startsWith(prefix)) this.#entries.delete(k);
  }

  get size(): number {
    return this.#entries.size;
  }
}

// The kubelet's HasExpiredFunc (pkg/kubelet/kubelet.go): eventTime.Sub(lastUpdate) > 600s.
function expired(eventMs: number, lastUpdateMs: number): boolean {
  return eventMs - lastUpdateMs > CRASH_BACKOFF_EXPIRY_MS;
}
