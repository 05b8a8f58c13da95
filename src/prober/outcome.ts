// What one run of a probe handler says, and what the prober makes of it: the result to
// record and the event to leave. Pure; mirrors upstream's prober.probe (pkg/kubelet/prober/prober.go).
import type { ProbeType } from './state.ts';

/** upstream's probe.Result, with the handler's output (the event text) and an error when it could not run. */
export interface Outcome {
  result: 'success' | 'warning' | 'failure' | 'unknown';
  output: string;
  /** The probe could not be run (a port that does not resolve, a CRI error): its result is thrown away. */
  error?: string;
}

export interface ProbeEvent {
  type: 'Warning';
  reason: 'Unhealthy' | 'ProbeWarning';
  message: string;
}

/** undefined result: the probe errored, nothing is recorded (upstream's worker discards it). */
export function interpretOutcome(type: ProbeType, o: Outcome): { result?: 'Success' | 'Failure'; event?: ProbeEvent } {
  if (o.error !== undefined)
    return {
      event: { type: 'Warning', reason: 'Unhealthy', message: `${type} probe errored and resulted in ${o.result} state: ${o.error}` },
    };
  switch (o.result) {
    case 'success':
      return { result: 'Success' };
    case 'warning':
      return { result: 'Success', event: { type: 'Warning', reason: 'ProbeWarning', message: `${type} probe warning: ${o.output}` } };
    case 'failure':
      return { result: 'Failure', event: { type: 'Warning', reason: 'Unhealthy', message: `${type} probe failed: ${o.output}` } };
    default:
      return { result: 'Failure' };
  }
}

/** Upstream keeps at most 10 KiB of a probe's output (exec output, HTTP body). */
export const MAX_OUTPUT_BYTES = 10 * 1024;
