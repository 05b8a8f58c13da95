import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ClientReadableStream } from '@grpc/grpc-js';
import type { Logger } from '../log/log.ts';
import { keepStream } from './event-stream.ts';

const log: Logger = { info() {}, v() {}, warn() {}, error() {} };
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A stream that never sends headers (containerd's, until its first event) over a channel whose readiness the case sets. */
function idleStream(ready: () => boolean | undefined) {
  const seen: string[] = [];
  const calls: EventEmitter[] = [];
  const s = keepStream(
    {
      name: 'events',
      open: () => {
        // grpc-js ends a cancelled call with an error (CANCELLED).
        const c: EventEmitter = Object.assign(new EventEmitter(), { cancel: () => c.emit('error', { code: 1, message: 'cancelled' }) });
        calls.push(c);
        return c as unknown as ClientReadableStream<unknown>;
      },
      event: () => undefined,
      ready: ready() === undefined ? undefined : () => ready()!,
      readyPollMs: 5,
    },
    { log, onEvent() {}, onReconnect: () => seen.push('up'), onDisconnect: () => seen.push('down') },
  );
  return { seen, calls, stop: s.stop };
}

test('keepStream: an open stream on a ready channel is up without headers; not while the channel is not ready', async () => {
  const cases: [string, boolean | undefined, string[]][] = [
    ['ready channel, no headers', true, ['up']],
    ['channel not ready', false, []],
    ['no readiness to ask', undefined, []],
  ];
  for (const [name, ready, want] of cases) {
    const s = idleStream(() => ready);
    await tick(40);
    s.stop();
    assert.deepEqual(s.seen, want, name);
  }
});

test('keepStream: headers make it up at once, and only once with the polls; a drop makes it down', async () => {
  let ready = false;
  const s = idleStream(() => ready);
  s.calls[0]!.emit('metadata');
  ready = true;
  await tick(40);
  assert.deepEqual(s.seen, ['up']);
  s.calls[0]!.emit('end');
  await tick(1);
  s.stop();
  assert.deepEqual(s.seen, ['up', 'down']);
});
