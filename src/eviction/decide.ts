// The eviction manager's decision each housekeeping round (upstream's synchronize, minus
// the I/O): which thresholds are met, which have held for their grace period, which node
// conditions to report, and which resource to reclaim. All state is passed in and out.
import { nodeReclaimActions, type NodeReclaimAction } from './reclaim.ts';
import { isHard, thresholdKey, thresholdQuantity } from './thresholds.ts';
import type { Observations } from './observations.ts';
import {
  PRESSURE_CONDITIONS,
  SIGNAL_CONDITION,
  SIGNAL_RESOURCE,
  type FsLayout,
  type PressureCondition,
  type ReclaimResource,
  type Threshold,
} from './types.ts';

/**
 * Pure: the thresholds whose signal is below the line. With enforceMinReclaim the line is
 * raised by the threshold's minimum reclaim, so a threshold stays met until that much more
 * is free. A signal with no observation is never met.
 */
export function thresholdsMet(thresholds: Threshold[], observations: Observations, enforceMinReclaim: boolean): Threshold[] {
  return thresholds.filter((t) => {
    const o = observations[t.signal];
    if (!o) return false;
    let line = thresholdQuantity(t.value, o.capacity);
    if (enforceMinReclaim && t.minReclaim) line += thresholdQuantity(t.minReclaim, o.capacity);
    return t.operator === 'LessThan' && line > o.available;
  });
}

const sameValue = (a: Threshold['value'], b: Threshold['value']) =>
  'quantity' in a ? 'quantity' in b && a.quantity === b.quantity : 'percentage' in b && a.percentage === b.percentage;

/** Pure: a then b's thresholds not already in a (upstream compares all but minReclaim). */
export function mergeThresholds(a: Threshold[], b: Threshold[]): Threshold[] {
  const out = [...a];
  for (const t of b) {
    if (
      !out.some(
        (x) => x.signal === t.signal && x.operator === t.operator && x.gracePeriodMs === t.gracePeriodMs && sameValue(x.value, t.value),
      )
    )
      out.push(t);
  }
  return out;
}

export interface ObservedAt {
  threshold: Threshold;
  atMs: number;
}

/** Pure: when each met threshold was first met; one no longer met is forgotten, so its grace period restarts. */
export function thresholdsFirstObservedAt(met: Threshold[], last: ObservedAt[], nowMs: number): ObservedAt[] {
  const before = new Map(last.map((o) => [thresholdKey(o.threshold), o.atMs]));
  return met.map((threshold) => ({ threshold, atMs: before.get(thresholdKey(threshold)) ?? nowMs }));
}

/** Pure: the thresholds met for at least their grace period (hard ones at once). */
export function thresholdsMetGracePeriod(observedAt: ObservedAt[], nowMs: number): Threshold[] {
  return observedAt.filter((o) => nowMs - o.atMs >= o.threshold.gracePeriodMs).map((o) => o.threshold);
}

/** Pure: the conditions the thresholds stand for, each once, in the canonical order. */
export function nodeConditions(thresholds: Threshold[]): PressureCondition[] {
  const seen = new Set(thresholds.map((t) => SIGNAL_CONDITION[t.signal]));
  return PRESSURE_CONDITIONS.filter((c) => seen.has(c));
}

export type ConditionsObservedAt = Partial<Record<PressureCondition, number>>;

/** Pure: conditions seen now get now; the others keep when they were last seen. */
export function nodeConditionsLastObservedAt(
  conditions: PressureCondition[],
  last: ConditionsObservedAt,
  nowMs: number,
): ConditionsObservedAt {
  const out: ConditionsObservedAt = { ...last };
  for (const c of conditions) out[c] = nowMs;
  return out;
}

/**
 * Pure: the conditions seen within the period. This is the hysteresis of
 * evictionPressureTransitionPeriod: a condition stays True for the period after its last
 * sighting, so a node hovering at a threshold does not flap. (A period of 0 reports
 * nothing at all, as upstream; its defaulting makes 0 into 5m.)
 */
export function nodeConditionsObservedSince(observedAt: ConditionsObservedAt, periodMs: number, nowMs: number): PressureCondition[] {
  return PRESSURE_CONDITIONS.filter((c) => observedAt[c] !== undefined && nowMs - observedAt[c]! < periodMs);
}

/** Pure: the thresholds whose stats are newer than last round's (or carry no time), so one sample drives one eviction. */
export function thresholdsUpdatedStats(thresholds: Threshold[], observations: Observations, last: Observations): Threshold[] {
  return thresholds.filter((t) => {
    const o = observations[t.signal];
    if (!o) return false;
    const prev = last[t.signal];
    return !prev || o.timeMs === undefined || prev.timeMs === undefined || o.timeMs > prev.timeMs;
  });
}

const isMemory = (t: Threshold) => t.signal === 'memory.available' || t.signal === 'allocatableMemory.available';

/** Pure: memory thresholds first (a node out of memory falls over soonest), the rest in their order. */
export function byEvictionPriority(thresholds: Threshold[]): Threshold[] {
  return [...thresholds.filter(isMemory), ...thresholds.filter((t) => !isMemory(t))];
}

export interface EvictionState {
  /** The conditions reported now (after the transition period). */
  nodeConditions: PressureCondition[];
  thresholdsFirstObservedAt: ObservedAt[];
  nodeConditionsLastObservedAt: ConditionsObservedAt;
  /** Thresholds met with their grace period last round: they stay met until their minimum reclaim is free. */
  thresholdsMet: Threshold[];
  lastObservations: Observations;
}

export const initialEvictionState = (): EvictionState => ({
  nodeConditions: [],
  thresholdsFirstObservedAt: [],
  nodeConditionsLastObservedAt: {},
  thresholdsMet: [],
  lastObservations: {},
});

export interface EvaluateInput {
  /** From parseThresholds, then withContainerFsThresholds once the layout is known. */
  thresholds: Threshold[];
  observations: Observations;
  nowMs: number;
  /** evictionPressureTransitionPeriod (upstream default 5m). */
  pressureTransitionPeriodMs: number;
  layout: FsLayout;
}

export interface Reclaim {
  /** The threshold that drives this round: the first memory one, else the first. */
  threshold: Threshold;
  resource: ReclaimResource;
  /**
   * Node-level actions to try first. When there are any: run them, take a fresh Summary,
   * and if reclaimSatisfied no pod need go this round. When there are none: evict.
   */
  nodeReclaim: NodeReclaimAction[];
  /** Hard: evict with a 1s grace period; soft: with evictionMaxPodGracePeriod (see evictionGracePeriodSeconds). */
  hard: boolean;
}

export interface Evaluation {
  state: EvictionState;
  /** The pressure conditions to report True (the others False); also what admission looks at. */
  conditions: PressureCondition[];
  /** The thresholds that drive eviction this round, by eviction priority (for the eviction message). */
  thresholds: Threshold[];
  /** Absent when nothing is starved (or its stats have not moved since last round). */
  reclaim?: Reclaim;
}

/** Pure: one housekeeping round. */
export function evaluate(state: EvictionState, input: EvaluateInput): Evaluation {
  const { observations, nowMs } = input;
  let met = thresholdsMet(input.thresholds, observations, false);
  // Thresholds that drove evictions stay met until their minimum reclaim is free as well.
  if (state.thresholdsMet.length) met = mergeThresholds(met, thresholdsMet(state.thresholdsMet, observations, true));
  const firstObservedAt = thresholdsFirstObservedAt(met, state.thresholdsFirstObservedAt, nowMs);
  const lastObservedAt = nodeConditionsLastObservedAt(nodeConditions(met), state.nodeConditionsLastObservedAt, nowMs);
  const conditions = nodeConditionsObservedSince(lastObservedAt, input.pressureTransitionPeriodMs, nowMs);
  const graceMet = thresholdsMetGracePeriod(firstObservedAt, nowMs);
  const next: EvictionState = {
    nodeConditions: conditions,
    thresholdsFirstObservedAt: firstObservedAt,
    nodeConditionsLastObservedAt: lastObservedAt,
    thresholdsMet: graceMet,
    lastObservations: observations,
  };
  const acting = byEvictionPriority(thresholdsUpdatedStats(graceMet, observations, state.lastObservations));
  const threshold = acting[0];
  if (!threshold) return { state: next, conditions, thresholds: acting };
  return {
    state: next,
    conditions,
    thresholds: acting,
    reclaim: {
      threshold,
      resource: SIGNAL_RESOURCE[threshold.signal],
      nodeReclaim: nodeReclaimActions(threshold.signal, input.layout),
      hard: isHard(threshold),
    },
  };
}

/**
 * Pure: after node-level reclaim, whether the fresh observations leave no threshold met
 * (with minimum reclaim, ignoring grace periods): then no pod need be evicted this round.
 */
export function reclaimSatisfied(thresholds: Threshold[], observationsAfter: Observations): boolean {
  return thresholdsMet(thresholds, observationsAfter, true).length === 0;
}
