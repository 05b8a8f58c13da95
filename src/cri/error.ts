import { status } from '@grpc/grpc-js';

// A failed CRI call, named so that one log line says which call failed and how:
// "CRI RunPodSandbox failed: code 2 UNKNOWN: ...".
export class CriError extends Error {
  override name = 'CriError';
  /** The gRPC method, e.g. RunPodSandbox. */
  readonly method: string;
  /** The gRPC status code (grpc-js `status`). */
  readonly code: status;
  readonly details: string;

  constructor(method: string, code: status, details: string, options?: ErrorOptions) {
    super(`CRI ${method} failed: code ${code} ${status[code] ?? 'UNKNOWN'}: ${details}`, options);
    this.method = method;
    this.code = code;
    this.details = details;
  }
}

// grpc-js words a failed connect as "No connection established. Last error: Error:
// connect ENOENT /path. Resolution note: "; keep only the cause, on one line.
const NO_CONNECTION = /^No connection established\. Last error: (?:Error: )?(.*?)(?:\. Resolution note:.*)?$/s;

/** Converts whatever a grpc-js call rejected with into a CriError. */
export function toCriError(method: string, target: string, err: unknown): CriError {
  const e = err as Partial<{ code: number; details: string; message: string }>;
  const code: status = typeof e?.code === 'number' ? e.code : status.UNKNOWN;
  let details = (e?.details ?? e?.message ?? String(err)).replace(/\s*\n\s*/g, ' ');
  const unreachable = code === status.UNAVAILABLE ? NO_CONNECTION.exec(details) : null;
  if (unreachable) details = `cannot reach the container runtime at ${target}: ${unreachable[1]}`;
  return new CriError(method, code, details, { cause: err });
}

/** grpc-go's names of the status codes (codes.Code.String), by number. */
const GO_CODES = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];
export const goCodeName = (c: number) => GO_CODES[c] ?? `Code(${c})`;

/**
 * A failed call as upstream prints it with %v: grpc-go's status error, "rpc error: code = NotFound
 * desc = ...". Anything else, its message.
 */
export function goErrorText(e: unknown): string {
  return e instanceof CriError ? `rpc error: code = ${goCodeName(e.code)} desc = ${e.details}` : (e as Error).message;
}

/** A failed call's status.Message() (upstream's s.Message() of CreateContainer and StartContainer); anything else, its message. */
export const statusMessage = (e: unknown): string => (e instanceof CriError ? e.details : (e as Error).message);
