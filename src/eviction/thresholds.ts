// Thresholds from KubeletConfiguration's evictionHard / evictionSoft /
// evictionSoftGracePeriod / evictionMinimumReclaim maps, validated as upstream's
// ParseThresholdConfig: a bad entry refuses the whole configuration, since evicting on a
// misread threshold (or never evicting) is worse than not starting.
import { parseDuration } from '../apiserver/duration.ts';
import { parseQuantity } from '../resources/quantity.ts';
import { formatQuantity, quantityFormat } from './format.ts';
import { isSignal, type FsLayout, type QuantityFormat, type Signal, type Threshold, type ThresholdValue } from './types.ts';

export interface EvictionSettings {
  evictionHard?: Record<string, string>;
  evictionSoft?: Record<string, string>;
  evictionSoftGracePeriod?: Record<string, string>;
  evictionMinimumReclaim?: Record<string, string>;
  /**
   * enforceNodeAllocatable: with "pods" in it (upstream's default), a hard memory.available
   * threshold is copied onto allocatableMemory.available. Default ["pods"].
   */
  enforceNodeAllocatable?: string[];
}

// Go's resource.ParseQuantity error text, so the message reads as upstream's does.
const QUANTITY_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

function signalOf(name: string): Signal {
  if (!isSignal(name)) throw new Error(`unsupported eviction signal ${name}`);
  return name;
}

/** "10%" as upstream reads it: a float32 fraction, so 10% is 0.10000000149011612, not 0.1. */
function parsePercentage(text: string): number {
  const body = text.slice(0, -1);
  const v = Number(body);
  if (body.trim() === '' || !Number.isFinite(v)) throw new Error(`strconv.ParseFloat: parsing ${JSON.stringify(body)}: invalid syntax`);
  return Math.fround(Math.fround(v) / 100);
}

function parseAmount(text: string): { quantity: number; format: QuantityFormat } {
  const n = parseQuantity(text);
  if (n === undefined) throw new Error(QUANTITY_ERROR);
  return { quantity: n, format: quantityFormat(text) };
}

/** One evictionHard/evictionSoft entry; undefined for "0%" and "100%", which upstream ignores. */
function parseStatement(name: string, text: string): Threshold | undefined {
  const signal = signalOf(name);
  if (text.endsWith('%')) {
    if (text === '0%' || text === '100%') return undefined;
    const percentage = parsePercentage(text);
    if (percentage < 0) throw new Error(`eviction percentage threshold ${signal} must be >= 0%: ${text}`);
    if (percentage > 1) throw new Error(`eviction percentage threshold ${signal} must be <= 100%: ${text}`);
    return { signal, operator: 'LessThan', value: { percentage }, gracePeriodMs: 0 };
  }
  const value = parseAmount(text);
  if (value.quantity <= 0)
    throw new Error(`eviction threshold ${signal} must be positive: ${formatQuantity(value.quantity, value.format)}`);
  return { signal, operator: 'LessThan', value, gracePeriodMs: 0 };
}

function parseGracePeriods(m: Record<string, string>): Map<Signal, number> {
  const out = new Map<Signal, number>();
  for (const [name, text] of Object.entries(m)) {
    const signal = signalOf(name);
    const ms = parseDuration(text);
    if (ms === undefined) throw new Error(`time: invalid duration ${JSON.stringify(text)}`);
    if (ms < 0) throw new Error(`invalid eviction grace period specified: ${text}, must be a positive value`);
    out.set(signal, ms);
  }
  return out;
}

function parseMinimumReclaims(m: Record<string, string>): Map<Signal, ThresholdValue> {
  const out = new Map<Signal, ThresholdValue>();
  for (const [name, text] of Object.entries(m)) {
    const signal = signalOf(name);
    if (text.endsWith('%')) {
      const percentage = parsePercentage(text);
      // Upstream refuses "0%" here too, unlike in a threshold.
      if (percentage <= 0) throw new Error(`eviction percentage minimum reclaim ${signal} must be positive: ${text}`);
      out.set(signal, { percentage });
      continue;
    }
    const value = parseAmount(text);
    if (value.quantity < 0) throw new Error(`negative eviction minimum reclaim specified for ${signal}`);
    out.set(signal, value);
  }
  return out;
}

/**
 * Pure: the thresholds, hard ones first then soft ones, each in its map's order, then the
 * allocatableMemory.available copies. Throws an Error with upstream's message on the
 * first bad entry.
 */
export function parseThresholds(s: EvictionSettings): Threshold[] {
  const parseAll = (m: Record<string, string> = {}) =>
    Object.entries(m)
      .map(([k, v]) => parseStatement(k, v))
      .filter((t): t is Threshold => t !== undefined);
  const hard = parseAll(s.evictionHard);
  const softStatements = parseAll(s.evictionSoft);
  const grace = parseGracePeriods(s.evictionSoftGracePeriod ?? {});
  const minReclaim = parseMinimumReclaims(s.evictionMinimumReclaim ?? {});
  // A soft threshold with a zero grace period is, from here on, a hard one: upstream tells them apart by the period alone.
  const soft = softStatements.map((t) => {
    const ms = grace.get(t.signal);
    if (ms === undefined) throw new Error(`grace period must be specified for the soft eviction threshold ${t.signal}`);
    return { ...t, gracePeriodMs: ms };
  });
  const all = [...hard, ...soft].map((t) => (minReclaim.has(t.signal) ? { ...t, minReclaim: minReclaim.get(t.signal) } : t));
  if (!(s.enforceNodeAllocatable ?? ['pods']).includes('pods')) return all;
  // Pods are held to allocatable by their cgroup; the same hard line on that cgroup's memory
  // evicts before the kernel OOM-kills inside it.
  const allocatable = all
    .filter((t) => t.signal === 'memory.available' && isHard(t))
    .map((t): Threshold => ({ ...t, signal: 'allocatableMemory.available' }));
  return [...all, ...allocatable];
}

export const isHard = (t: Threshold) => t.gracePeriodMs === 0;

/** The amount a value stands for against a capacity (GetThresholdQuantity: float32 fraction, truncated). */
export function thresholdQuantity(v: ThresholdValue, capacity: number): number {
  return 'quantity' in v ? v.quantity : Math.trunc(capacity * v.percentage);
}

const valueKey = (v: ThresholdValue | undefined) => (v === undefined ? '' : 'quantity' in v ? `${v.quantity}` : `${v.percentage}%`);

/** Identity for bookkeeping maps: upstream keys maps by the Threshold struct itself. */
export const thresholdKey = (t: Threshold) => `${t.signal}<${valueKey(t.value)} grace=${t.gracePeriodMs} min=${valueKey(t.minReclaim)}`;

/** How upstream logs a threshold (formatThreshold): the eviction manager's reclaim line names it. */
export function describeThreshold(t: Threshold): string {
  const v = 'quantity' in t.value ? formatQuantity(t.value.quantity, t.value.format) : `${+(t.value.percentage * 100).toFixed(4)}%`;
  return `threshold(signal=${t.signal}, operator=${t.operator}, value=${v}, gracePeriod=${t.gracePeriodMs / 1000}s)`;
}

const CONTAINERFS: Partial<Record<Signal, { nodefs: Signal; imagefs: Signal }>> = {
  'containerfs.available': { nodefs: 'nodefs.available', imagefs: 'imagefs.available' },
  'containerfs.inodesFree': { nodefs: 'nodefs.inodesFree', imagefs: 'imagefs.inodesFree' },
};

/**
 * Pure: upstream's UpdateContainerFsThresholds, applied once the filesystem layout is known.
 * Writable layers share a filesystem with either the node (one filesystem, or images split
 * off on their own) or the images (a dedicated imagefs), so containerfs thresholds are
 * copies of that filesystem's, hard and soft; configured containerfs thresholds are
 * replaced, with a warning each. Where the source threshold is not configured there is no
 * copy (upstream adds an empty one that can never be met).
 */
export function withContainerFsThresholds(thresholds: Threshold[], layout: FsLayout): { thresholds: Threshold[]; warnings: string[] } {
  const { dedicatedImageFs: image, splitContainerImageFs: split } = layout;
  // An imagefs without a dedicated image filesystem is not a layout upstream handles: no copies.
  if (!image && split) return { thresholds, warnings: [] };
  const from = (target: Signal) => CONTAINERFS[target]![image && !split ? 'imagefs' : 'nodefs'];
  const warnings: string[] = [];
  const copy = (target: Signal, hard: boolean): Threshold | undefined => {
    const src = thresholds.find((t) => t.signal === from(target) && isHard(t) === hard);
    return src && { ...src, signal: target, gracePeriodMs: hard ? 0 : src.gracePeriodMs };
  };
  const out: (Threshold | undefined)[] = thresholds.map((t) => {
    if (!CONTAINERFS[t.signal]) return t;
    warnings.push(`found ${t.signal} for ${isHard(t) ? 'hard' : 'soft'} eviction. ignoring`);
    return copy(t.signal, isHard(t));
  });
  for (const target of ['containerfs.available', 'containerfs.inodesFree'] as const) {
    for (const hard of [true, false]) {
      if (!thresholds.some((t) => t.signal === target && isHard(t) === hard)) out.push(copy(target, hard));
    }
  }
  return { thresholds: out.filter((t): t is Threshold => t !== undefined), warnings };
}
