// Evictions for local storage limits (upstream's localStorageEviction, on while
// localStorageCapacityIsolation is): a pod whose emptyDir outgrows its sizeLimit, whose
// total ephemeral storage outgrows its containers' limits, or one of whose containers
// outgrows its own limit. Unlike pressure evictions these need no threshold and take
// every such pod in one round.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { parseQuantity } from '../resources/quantity.ts';
import { formatQuantity, quantityFormat } from './format.ts';
import { EVICTED_REASON, IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, type Eviction } from './evicted-status.ts';
import type { Candidate } from './ranking.ts';
import type { QuantityFormat } from './types.ts';
import { isCriticalPod, isSidecar } from '../podutil/podutil.ts';

const ES = 'ephemeral-storage';

const limitOf = (c: Container) => c.resources?.limits?.[ES];

/** A limit as Go holds it: the value, and the format of the first text it was summed from. */
interface Amount {
  value: number;
  format: QuantityFormat;
}

/**
 * The pod's ephemeral-storage limit (PodLimits): the containers' sum, or more while an init
 * container runs beside the sidecars before it; undefined when no container sets one.
 */
function podLimit(pod: Pod): Amount | undefined {
  const all = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  const first = all.map(limitOf).find((t) => t !== undefined);
  if (first === undefined) return undefined;
  const v = (c: Container) => parseQuantity(limitOf(c) ?? '0') ?? 0;
  let sum = (pod.spec?.containers ?? []).reduce((n, c) => n + v(c), 0);
  let sidecars = 0,
    initPeak = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    if (isSidecar(c)) {
      sum += v(c);
      sidecars += v(c);
      initPeak = Math.max(initPeak, sidecars);
    } else {
      initPeak = Math.max(initPeak, v(c) + sidecars);
    }
  }
  return { value: Math.max(sum, initPeak), format: quantityFormat(first) };
}

type WithStats = Candidate & { stats: NonNullable<Candidate['stats']> };

const show = (text: string) => formatQuantity(parseQuantity(text) ?? 0, quantityFormat(text));

function emptyDirOverLimit({ pod, stats }: WithStats): string | undefined {
  const used = new Map((stats.volume ?? []).map((v) => [v.name, v.usedBytes]));
  for (const v of pod.spec?.volumes ?? []) {
    const limit = v.emptyDir?.sizeLimit;
    const u = used.get(v.name);
    const size = limit === undefined ? undefined : parseQuantity(limit);
    if (u !== undefined && size !== undefined && size > 0 && u > size)
      return `Usage of EmptyDir volume ${JSON.stringify(v.name)} exceeds the limit ${JSON.stringify(show(limit!))}. `;
  }
  return undefined;
}

function podOverLimit({ pod, stats }: WithStats): string | undefined {
  const limit = podLimit(pod);
  if (!limit) return undefined;
  const used = stats['ephemeral-storage']?.usedBytes ?? 0;
  return used > limit.value
    ? `Pod ephemeral local storage usage exceeds the total limit of containers ${formatQuantity(limit.value, limit.format)}. `
    : undefined;
}

function containerOverLimit({ pod, stats }: WithStats, dedicatedImageFs: boolean): string | undefined {
  // Regular containers only, as upstream; a zero limit is no limit.
  const limits = new Map((pod.spec?.containers ?? []).filter((c) => parseQuantity(limitOf(c) ?? '0')).map((c) => [c.name, limitOf(c)!]));
  for (const cs of stats.containers) {
    // The writable layer counts only where it shares the node's filesystem.
    const used = (cs.logs?.usedBytes ?? 0) + (dedicatedImageFs ? 0 : (cs.rootfs?.usedBytes ?? 0));
    const limit = limits.get(cs.name);
    if (limit !== undefined && used > parseQuantity(limit)!)
      return `Container ${cs.name} exceeded its local ephemeral storage limit ${JSON.stringify(show(limit))}. `;
  }
  return undefined;
}

/** Pure: every pod to evict for a local storage limit, with an immediate (1s) grace period; critical pods never. */
export function localStorageEvictions(candidates: Candidate[], opts: { dedicatedImageFs: boolean }): Eviction[] {
  const out: Eviction[] = [];
  for (const c of candidates) {
    if (!c.stats || isCriticalPod(c.pod)) continue;
    const s = c as WithStats;
    let message: string | undefined, signal: Eviction['signal'] | undefined;
    if ((message = emptyDirOverLimit(s))) signal = 'emptydirfs.limit';
    else if ((message = podOverLimit(s))) signal = 'ephemeralpodfs.limit';
    else if ((message = containerOverLimit(s, opts.dedicatedImageFs))) signal = 'ephemeralcontainerfs.limit';
    if (message && signal)
      out.push({
        pod: c.pod,
        gracePeriodSeconds: IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS,
        reason: EVICTED_REASON,
        message,
        annotations: {},
        signal,
      });
  }
  return out;
}
