import { Client, credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import type { Long, MethodDefinition } from '@grpc/proto-loader';
import { backoff, sleep } from '../backoff/backoff.ts';
import { grpcTarget } from './endpoint.ts';
import { toCriError, type CriError } from './error.ts';
import { NO_TRACER, type Tracer } from '../tracing/tracer.ts';

/**
 * Told about every call once it is over (after any retries), with the operation name
 * the upstream kubelet uses as the operation_type label of kubelet_runtime_operations_*.
 */
export type Observer = (operation: string, seconds: number, error?: CriError) => void;

export interface ConnectionOptions {
  observer?: Observer;
  /** Tries per idempotent read (1 disables retries); default 3. */
  readAttempts?: number;
  /** First retry delay in ms, doubled per retry plus up to 20% jitter; default 100. */
  retryDelayMs?: number;
  /**
   * upstream's runtimeRequestTimeout (default 2 min): the deadline of every call that changes
   * state, but for those that run long (pulls) or only mint a streaming URL.
   */
  requestTimeoutMs?: number;
  /** otelgrpc's client spans (KubeletConfiguration `tracing`); none by default. */
  tracer?: Tracer;
}

export interface CallOptions {
  /** Deadline of each try, in ms from its start; each method has its own default. */
  timeoutMs?: number;
  /** Cancels the call (e.g. a pull for a pod that is being deleted). */
  signal?: AbortSignal;
}

/**
 * How one method is called: its metrics name, default deadline (undefined: runtimeRequestTimeout),
 * and whether it may be retried.
 */
export interface Rpc {
  operation: string;
  timeoutMs?: number;
  idempotent: boolean;
}

/** upstream's --runtime-request-timeout default. */
export const RUNTIME_REQUEST_TIMEOUT_MS = 120_000;

// proto-loader accepts a string for a bytes field and base64-decodes it, silently
// turning plain text into garbage: requests take Buffers only.
export type BuffersOnly<T> = [Uint8Array] extends [T]
  ? Exclude<T, Uint8Array | string> | Buffer
  : T extends Long
    ? T
    : T extends readonly (infer U)[]
      ? BuffersOnly<U>[]
      : T extends object
        ? { [K in keyof T]: BuffersOnly<T[K]> }
        : T;

export type RequestOf<D> = D extends MethodDefinition<infer I, any, any, any> ? BuffersOnly<I> : never;
export type ResponseOf<D> = D extends MethodDefinition<any, any, any, infer O> ? O : never;

const RETRYABLE = new Set<status>([status.UNAVAILABLE, status.DEADLINE_EXCEEDED]);

// Same limit as the upstream kubelet: a large node's lists exceed grpc's 4 MiB default.
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** One gRPC channel to a CRI socket, with deadlines, retries of reads, and the observer. */
export class CriConnection {
  /** The grpc-js target, e.g. unix:///run/containerd/containerd.sock. */
  readonly target: string;
  readonly #client: Client;
  readonly #observer: Observer | undefined;
  readonly #readAttempts: number;
  readonly #retryDelayMs: number;
  readonly #tracer: Tracer;
  /** runtimeRequestTimeout: what StopContainer and ExecSync add their own timeouts to, as upstream. */
  readonly requestTimeoutMs: number;

  /** server.address of the spans: the socket's path, as Go's peer address names it. */
  readonly #address: string;

  constructor(endpoint: string, options: ConnectionOptions = {}) {
    this.target = grpcTarget(endpoint);
    this.#address = this.target.replace(/^unix:(\/\/)?/, '');
    // No keepalive options on purpose: containerd answers pings more often than every
    // 5 min with GOAWAY too_many_pings. Reconnect backoff capped at 3 s like upstream,
    // so a restarted containerd is found again quickly (grpc-js defaults to 120 s).
    this.#client = new Client(this.target, credentials.createInsecure(), {
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 3000,
    });
    this.#observer = options.observer;
    this.#readAttempts = Math.max(1, Math.floor(options.readAttempts ?? 3));
    this.#retryDelayMs = options.retryDelayMs ?? 100;
    this.requestTimeoutMs = options.requestTimeoutMs ?? RUNTIME_REQUEST_TIMEOUT_MS;
    this.#tracer = options.tracer ?? NO_TRACER;
  }

  async call<D extends MethodDefinition<any, any, any, any>>(
    method: D,
    rpc: Rpc,
    request: RequestOf<D>,
    timeoutMs = rpc.timeoutMs ?? this.requestTimeoutMs,
    signal?: AbortSignal,
  ): Promise<ResponseOf<D>> {
    const name = method.path.slice(method.path.lastIndexOf('/') + 1);
    const started = performance.now();
    const attempts = rpc.idempotent ? this.#readAttempts : 1;
    const delays = backoff(this.#retryDelayMs, this.#retryDelayMs * 8);
    for (let attempt = 1; ; attempt++) {
      try {
        signal?.throwIfAborted();
        const response = await this.#once(method, request, timeoutMs, signal);
        this.#observer?.(rpc.operation, (performance.now() - started) / 1000);
        return response;
      } catch (err) {
        const error = toCriError(name, this.target, err);
        if (attempt < attempts && RETRYABLE.has(error.code)) {
          await sleep(delays.next());
          continue;
        }
        this.#observer?.(rpc.operation, (performance.now() - started) / 1000, error);
        throw error;
      }
    }
  }

  close(): void {
    this.#client.close();
  }

  #once<D extends MethodDefinition<any, any, any, any>>(
    method: D,
    request: RequestOf<D>,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<ResponseOf<D>> {
    // otelgrpc's client stats handler: a span per call, named by the full method, its
    // traceparent in the call's metadata, each message an event with its size.
    const name = method.path.slice(1);
    const span = this.#tracer.startClient(name, () => ({ 'rpc.method': name, 'rpc.system.name': 'grpc', 'server.address': this.#address }));
    const metadata = new Metadata();
    if (span.traceparent) metadata.set('traceparent', span.traceparent);
    const message = (type: 'SENT' | 'RECEIVED', size: number) =>
      span.addEvent('message', {
        'rpc.message.type': type,
        'rpc.message.id': 1,
        'rpc.message.compressed_size': size,
        'rpc.message.uncompressed_size': size,
      });
    const serialize = span.recording
      ? (r: unknown) => {
          const b = method.requestSerialize(r);
          message('SENT', b.length);
          return b;
        }
      : method.requestSerialize;
    const deserialize = span.recording
      ? (b: Buffer) => {
          message('RECEIVED', b.length);
          return method.responseDeserialize(b);
        }
      : method.responseDeserialize;
    return new Promise((resolve, reject) => {
      const call = this.#client.makeUnaryRequest(
        method.path,
        serialize,
        deserialize,
        request,
        metadata,
        { deadline: Date.now() + timeoutMs },
        (err: ServiceError | null, response?: ResponseOf<D>) => {
          signal?.removeEventListener('abort', cancel);
          if (span.recording) {
            span.setAttributes({ 'rpc.response.status_code': status[err ? err.code : status.OK] ?? String(err?.code) });
            if (err) span.fail(err.details || err.message, false);
            span.end();
          }
          if (err) reject(err);
          else resolve(response!);
        },
      );
      const cancel = () => call.cancel();
      signal?.addEventListener('abort', cancel, { once: true });
    });
  }
}
