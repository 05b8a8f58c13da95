// The decisions of one probe worker, pure: whether to probe now, and what a new result
// makes of the probe's state (thresholds, hold after a liveness or startup failure).
// Mirrors upstream's worker.doProbe (pkg/kubelet/prober/worker.go).
import type { Probe } from 'kubernetes-types/core/v1.js';

export type ProbeType = 'Liveness' | 'Readiness' | 'Startup';
/** What the results cache holds per container and probe type (upstream's results.Result). */
export type Result = 'Success' | 'Failure' | 'Unknown';

/** The value a probe shows before its first decision (upstream's worker.initialValue). */
export const initialResult: Record<ProbeType, Result> = {
  // Not ready until the readiness probe succeeds; alive until proven dead; not started until the startup probe says so.
  Readiness: 'Failure',
  Liveness: 'Success',
  Startup: 'Unknown',
};

/** A probe's timing with the apiserver's defaults filled in (a static pod's spec has none). */
export interface ProbeTiming {
  initialDelaySeconds: number;
  periodSeconds: number;
  timeoutSeconds: number;
  successThreshold: number;
  failureThreshold: number;
}

export function probeTiming(p: Probe): ProbeTiming {
  const pos = (v: number | undefined, d: number) => (v && v > 0 ? v : d);
  return {
    initialDelaySeconds: Math.max(0, p.initialDelaySeconds ?? 0),
    periodSeconds: pos(p.periodSeconds, 10),
    timeoutSeconds: pos(p.timeoutSeconds, 1),
    successThreshold: pos(p.successThreshold, 1),
    failureThreshold: pos(p.failureThreshold, 3),
  };
}

/** What a worker remembers between probes. */
export interface WorkerState {
  /** The last result seen, and how many times in a row. */
  lastResult?: 'Success' | 'Failure';
  run: number;
  /** After a liveness or startup failure: no probing until a new container instance. */
  onHold: boolean;
}

export const freshState = (): WorkerState => ({ run: 0, onHold: false });

/**
 * A new probe result: the worker's next state, and the result to publish when the run of
 * equal results reached its threshold (undefined: leave the published state alone).
 */
export function nextProbeState(
  type: ProbeType,
  t: Pick<ProbeTiming, 'successThreshold' | 'failureThreshold'>,
  s: WorkerState,
  result: 'Success' | 'Failure',
): { state: WorkerState; publish?: Result } {
  const run = s.lastResult === result ? s.run + 1 : 1;
  const threshold = result === 'Failure' ? t.failureThreshold : t.successThreshold;
  if (run < threshold) return { state: { ...s, lastResult: result, run } };
  // A container that failed liveness or startup will be killed: stop probing it (upstream
  // avoids exec'ing into a container that is being stopped).
  if (result === 'Failure' && type !== 'Readiness') return { state: { lastResult: result, run: 0, onHold: true }, publish: result };
  return { state: { ...s, lastResult: result, run }, publish: result };
}

export interface GateInput {
  type: ProbeType;
  onHold: boolean;
  /** When the container instance started (ms since the epoch). */
  startedAtMs: number;
  nowMs: number;
  initialDelaySeconds: number;
  /** The container is started: it has no startup probe, or that probe succeeded. */
  started: boolean;
  /** The pod is being deleted. */
  deleting: boolean;
}

/**
 * Whether to probe now: 'probe'; 'wait' (for the next tick); or 'succeed' (publish Success
 * and stop: a pod being deleted is not killed by its liveness or startup probe).
 */
export function probeGate(g: GateInput): 'probe' | 'wait' | 'succeed' {
  if (g.onHold) return 'wait';
  if (g.deleting && g.type !== 'Readiness') return 'succeed';
  // Upstream compares whole seconds since the start.
  if (Math.floor((g.nowMs - g.startedAtMs) / 1000) < g.initialDelaySeconds) return 'wait';
  // The startup probe runs until the container started; the others only after.
  if (g.type === 'Startup' ? g.started : !g.started) return 'wait';
  return 'probe';
}
