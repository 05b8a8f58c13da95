// The OTel SDK's BatchSpanProcessor over otlptracegrpc, as component-base's NewProvider sets them
// up: finished spans queue (at most 2048; more are dropped), go out in batches of up to 512 every
// 5 s (jittered by up to 10%) or as soon as a batch is full, each export with a 10 s deadline; an export the collector
// cannot take now (Unavailable and the other retryable codes) is tried again with backoff (5 s
// doubling to 30 s, jittered) for up to a minute, then dropped. Every span's fate is counted.
import { Client, credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { backoff, jittered, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import { encodeExportRequest } from './otlp.ts';
import type { Attributes, SpanData } from './span.ts';
import type { SpanSink } from './tracer.ts';

export const MAX_QUEUE = 2048;
export const MAX_BATCH = 512;
const SCHEDULE_MS = 5000;
const EXPORT_TIMEOUT_MS = 10_000;
const RETRY_FOR_MS = 60_000;

/** otlptracegrpc's retryable codes (retry.go evaluate); anything else drops the batch at once. */
const RETRYABLE = new Set<number>([
  status.CANCELLED,
  status.DEADLINE_EXCEEDED,
  status.RESOURCE_EXHAUSTED,
  status.ABORTED,
  status.OUT_OF_RANGE,
  status.UNAVAILABLE,
  status.DATA_LOSS,
]);

/** Sends one encoded ExportTraceServiceRequest; rejects with a gRPC code. */
export type Send = (request: Uint8Array, deadlineMs: number) => Promise<void>;

export type SpanResult = 'exported' | 'dropped' | 'failed';

export interface BatchExporter extends SpanSink {
  /** Exports what is queued (one try), then stops. */
  shutdown(): Promise<void>;
}

export function batchExporter(o: {
  resource: Attributes;
  send: Send;
  log: Logger;
  count: (result: SpanResult, n: number) => void;
  retryForMs?: number;
  retryDelayMs?: number;
  scheduleMs?: number;
}): BatchExporter {
  const queue: SpanData[] = [];
  let exporting: Promise<void> | undefined;
  let stopped = false;
  const retryFor = o.retryForMs ?? RETRY_FOR_MS;

  const exportBatch = async (batch: SpanData[], retry: boolean) => {
    const request = encodeExportRequest(o.resource, batch);
    const first = o.retryDelayMs ?? 5000;
    const delays = backoff(first, first * 6);
    const until = Date.now() + retryFor;
    for (;;) {
      try {
        await o.send(request, EXPORT_TIMEOUT_MS);
        o.count('exported', batch.length);
        return;
      } catch (e) {
        const code = (e as ServiceError).code;
        const wait = delays.next();
        if (!retry || stopped || !RETRYABLE.has(code) || Date.now() + wait > until) {
          o.log.error('Failed to export spans', { err: (e as Error).message, spans: batch.length });
          o.count('failed', batch.length);
          return;
        }
        o.log.v(4, 'Export of spans refused for now; trying again', { err: (e as Error).message, afterMs: wait });
        await sleep(wait);
      }
    }
  };

  const drain = (retry = true) => {
    exporting ??= (async () => {
      while (queue.length) await exportBatch(queue.splice(0, MAX_BATCH), retry);
    })().finally(() => {
      exporting = undefined;
    });
    return exporting;
  };

  let timer: NodeJS.Timeout;
  const tick = () => {
    void drain();
    timer = setTimeout(tick, jittered(o.scheduleMs ?? SCHEDULE_MS));
    timer.unref();
  };
  timer = setTimeout(tick, jittered(o.scheduleMs ?? SCHEDULE_MS));
  timer.unref();

  return {
    add(span) {
      if (stopped || queue.length >= MAX_QUEUE) return o.count('dropped', 1);
      queue.push(span);
      if (queue.length >= MAX_BATCH) void drain();
    },
    async shutdown() {
      stopped = true;
      clearTimeout(timer);
      await exporting;
      await drain(false);
    },
  };
}

/**
 * otlptracegrpc's client: TraceService/Export over an insecure channel to `endpoint`
 * (host:port, or unix:///path as gRPC names it; upstream's default localhost:4317).
 */
export function grpcSend(endpoint: string): { send: Send; close(): void } {
  const client = new Client(endpoint, credentials.createInsecure());
  const send: Send = (request, deadlineMs) =>
    new Promise((resolve, reject) => {
      client.makeUnaryRequest(
        '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
        (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength),
        (b: Buffer) => b,
        request,
        new Metadata(),
        { deadline: Date.now() + deadlineMs },
        (err: ServiceError | null) => (err ? reject(err) : resolve()),
      );
    });
  return { send, close: () => client.close() };
}
