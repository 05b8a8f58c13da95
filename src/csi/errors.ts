// A failed CSI call keeps its gRPC status code: upstream decides by it whether a stage or publish
// that failed may still be under way in the driver (the volume may be mounted) or surely is not.
import { status } from '@grpc/grpc-js';

export class CsiError extends Error {
  override name = 'CsiError';
  readonly driver: string;
  /** The gRPC method, e.g. NodeStageVolume. */
  readonly method: string;
  /** The gRPC status code (grpc-js `status`). */
  readonly code: status;
  readonly details: string;

  constructor(driver: string, method: string, code: status, details: string, options?: ErrorOptions) {
    super(`CSI ${method} of driver ${driver} failed: code ${code} ${status[code] ?? 'UNKNOWN'}: ${details}`, options);
    this.driver = driver;
    this.method = method;
    this.code = code;
    this.details = details;
  }
}

/** Converts whatever a grpc-js call rejected with into a CsiError. */
export function toCsiError(driver: string, method: string, err: unknown): CsiError {
  const e = err as Partial<{ code: number; details: string; message: string }>;
  const code: status = typeof e?.code === 'number' ? e.code : status.UNKNOWN;
  return new CsiError(driver, method, code, (e?.details ?? e?.message ?? String(err)).replace(/\s*\n\s*/g, ' '), { cause: err });
}

// The codes after which the operation may still be in progress (gRPC: cancelled, timed out, server
// gone or out of resources; CSI: an operation already pending for the volume).
const MAYBE_IN_PROGRESS = new Set<status>([
  status.CANCELLED,
  status.DEADLINE_EXCEEDED,
  status.UNAVAILABLE,
  status.RESOURCE_EXHAUSTED,
  status.ABORTED,
]);

/**
 * upstream's isFinalError: true when the failed call surely did nothing (or finished failing), so
 * the kubelet may clean up; false when it may still be under way, so the volume must be treated as
 * possibly mounted (upstream's UncertainProgressError) and torn down later. An error without a
 * gRPC code failed before any call was made: upstream plays safe and calls it not final.
 */
export function isFinalError(err: unknown): boolean {
  if (!(err instanceof CsiError)) return false;
  return !MAYBE_IN_PROGRESS.has(err.code);
}

/**
 * How a node expansion failed, as upstream's expander.go and node_expander.go tell them apart:
 * notSupported (no EXPAND_VOLUME: OperationNotSupportedError), inUse (FailedPrecondition: the
 * driver cannot expand the volume while it is in use), infeasible (InvalidArgument, OutOfRange,
 * NotFound), transient (the driver is not registered: nothing was tried), final (anything else).
 */
export type NodeExpandFailure = 'notSupported' | 'inUse' | 'infeasible' | 'transient' | 'final';

export class NodeExpandError extends Error {
  override name = 'NodeExpandError';
  readonly kind: NodeExpandFailure;
  constructor(message: string, kind: NodeExpandFailure, options?: ErrorOptions) {
    super(message, options);
    this.kind = kind;
  }
}

/** upstream's nodeExpandWithClient's mapping of a failed NodeExpandVolume call (inUseError, isInfeasibleError). */
export function nodeExpandFailure(err: unknown): NodeExpandError {
  if (!(err instanceof CsiError))
    return new NodeExpandError(`Expander.NodeExpand failed to expand the volume : ${(err as Error).message}`, 'final', { cause: err });
  if (err.code === status.FAILED_PRECONDITION)
    return new NodeExpandError(`Expander.NodeExpand failed to expand the volume : ${err.message}`, 'inUse', { cause: err });
  if (err.code === status.INVALID_ARGUMENT || err.code === status.OUT_OF_RANGE || err.code === status.NOT_FOUND)
    return new NodeExpandError(`Expander.NodeExpand failed to expand the volume ${err.message}`, 'infeasible', { cause: err });
  return new NodeExpandError(`Expander.NodeExpand failed to expand the volume : ${err.message}`, 'final', { cause: err });
}
