import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { MAX_BATCH, MAX_QUEUE, batchExporter, type Send, type SpanResult } from './exporter.ts';
import type { SpanData } from './span.ts';
import type { Logger } from '../log/log.ts';

const quiet: Logger = { info() {}, v() {}, warn() {}, error() {} };
const span = (i: number): SpanData => ({
  scope: { name: 's' },
  traceId: new Uint8Array(16).fill(1),
  spanId: new Uint8Array(8).fill(i % 250 || 1),
  parentRemote: false,
  name: `span-${i}`,
  kind: 1,
  startNs: 1n,
  endNs: 2n,
  attributes: {},
  events: [],
  status: { code: 0, message: '' },
});

function harness(send: Send, o: { retryForMs?: number } = {}) {
  const counts: Record<SpanResult, number> = { exported: 0, dropped: 0, failed: 0 };
  const exporter = batchExporter({
    resource: { 'service.name': 'kubelet' },
    send,
    log: quiet,
    count: (r, n) => (counts[r] += n),
    retryDelayMs: 5,
    scheduleMs: 60_000,
    ...o,
  });
  return { exporter, counts };
}

const grpcError = (code: number) => Object.assign(new Error(`code ${code}`), { code });

test('a full batch goes at once; the rest at shutdown', async () => {
  const sizes: number[] = [];
  const { exporter, counts } = harness(async (req) => void sizes.push(req.length));
  for (let i = 0; i < MAX_BATCH + 3; i++) exporter.add(span(i));
  await exporter.shutdown();
  assert.equal(sizes.length, 2);
  assert.deepEqual(counts, { exported: MAX_BATCH + 3, dropped: 0, failed: 0 });
});

test('the queue is bounded: spans past it are dropped and counted', async () => {
  let release!: () => void;
  const blocked = new Promise<void>((r) => (release = r));
  const { exporter, counts } = harness(() => blocked);
  // The first full batch is taken out and waits on the collector; the queue fills behind it.
  for (let i = 0; i < MAX_BATCH + MAX_QUEUE + 10; i++) exporter.add(span(i));
  assert.equal(counts.dropped, 10);
  release();
  await exporter.shutdown();
  assert.equal(counts.exported, MAX_BATCH + MAX_QUEUE);
});

test('Unavailable is tried again with backoff; a code that is not retryable drops the batch', async () => {
  let calls = 0;
  const flaky = harness(async () => {
    if (++calls < 3) throw grpcError(status.UNAVAILABLE);
  });
  for (let i = 0; i < MAX_BATCH; i++) flaky.exporter.add(span(i));
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(calls, 3);
  assert.deepEqual(flaky.counts, { exported: MAX_BATCH, dropped: 0, failed: 0 });

  let tries = 0;
  const refused = harness(async () => {
    tries++;
    throw grpcError(status.INVALID_ARGUMENT);
  });
  for (let i = 0; i < MAX_BATCH; i++) refused.exporter.add(span(i));
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(tries, 1);
  assert.deepEqual(refused.counts, { exported: 0, dropped: 0, failed: MAX_BATCH });
});

test('retries stop after the retry window', async () => {
  let tries = 0;
  const { exporter, counts } = harness(
    async () => {
      tries++;
      throw grpcError(status.UNAVAILABLE);
    },
    { retryForMs: 40 },
  );
  for (let i = 0; i < MAX_BATCH; i++) exporter.add(span(i));
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(tries >= 2 && tries <= 5, `tries ${tries}`);
  assert.equal(counts.failed, MAX_BATCH);
});
