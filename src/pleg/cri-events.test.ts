import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metadata, Server, ServerCredentials, type ServerWritableStream, type UntypedServiceImplementation } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { CRI_PROTO, criServices } from '../cri/proto.ts';
import type { Logger } from '../log/log.ts';
import { criEvent, decodeEventHead, runtimeEvents, runtimeEventsWanted } from './cri-events.ts';
import type { RuntimeEvent } from './runtime-events.ts';

const Response = new protobuf.Root().loadSync(CRI_PROTO, { keepCase: true }).lookupType('runtime.v1.ContainerEventResponse');
const encode = (msg: object) => Response.encode(Response.fromObject(msg)).finish();

test('decodeEventHead: the container and the type, the statuses skipped', () => {
  const buf = encode({
    container_id: 'c1',
    container_event_type: 2,
    created_at: '1795758548451000000',
    pod_sandbox_status: { id: 'sb', metadata: { name: 'p', uid: 'u', namespace: 'ns', attempt: 1 }, state: 0, labels: { a: 'b' } },
    containers_statuses: [{ id: 'c1', state: 2, exit_code: 3, reason: 'Error', labels: { 'io.kubernetes.pod.uid': 'u' } }],
  });
  assert.deepEqual(decodeEventHead(buf), { containerID: 'c1', type: 2, podUID: 'u' });
  // CONTAINER_CREATED_EVENT is 0: proto3 leaves it off the wire; no sandbox status, no UID.
  assert.deepEqual(decodeEventHead(encode({ container_id: 'c2' })), { containerID: 'c2', type: 0, podUID: '' });
  // A sandbox status without metadata; fields after it are still read.
  const noMeta = Buffer.concat([encode({ pod_sandbox_status: { id: 'sb', labels: { uid: 'x' } } }), encode({ container_id: 'c3' })]);
  assert.deepEqual(decodeEventHead(noMeta), { containerID: 'c3', type: 0, podUID: '' });
});

test('criEvent: a stopped container or sandbox, nothing else', () => {
  const cases: [string, number, string, RuntimeEvent | undefined][] = [
    ['c', 2, 'u', { kind: 'stopped', containerID: 'c', podUID: 'u' }],
    ['c', 2, '', { kind: 'stopped', containerID: 'c' }],
    ['c', 0, 'u', undefined],
    ['c', 1, 'u', undefined],
    ['c', 3, 'u', undefined],
    ['', 2, 'u', undefined],
  ];
  for (const [containerID, type, podUID, want] of cases)
    assert.deepEqual(criEvent({ containerID, type, podUID }), want, `${containerID}:${type}:${podUID}`);
});

const quiet = (lines: string[]): Logger => ({
  info: (m: string) => lines.push(m),
  v() {},
  warn: (m: string) => lines.push(m),
  error: (m: string) => lines.push(m),
});

async function serve(socket: string, impl: UntypedServiceImplementation) {
  const server = new Server();
  server.addService(criServices().runtime, impl);
  await new Promise<void>((res, rej) =>
    server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (e) => (e ? rej(e) : res())),
  );
  return server;
}

test('runtimeEvents: a runtime serving GetContainerEvents; one that does not gets the task events stream instead', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cri-events-'));
  const until = async (cond: () => boolean, what: string) => {
    for (let i = 0; i < 300 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(cond(), what);
  };
  try {
    const events: RuntimeEvent[] = [];
    const lines: string[] = [];
    let reconnects = 0,
      disconnects = 0;
    const server = await serve(join(dir, 'a.sock'), {
      GetContainerEvents(call: ServerWritableStream<unknown, unknown>) {
        call.sendMetadata(new Metadata());
        call.write({ containerId: 'c1', containerEventType: 'CONTAINER_STARTED_EVENT' });
        call.write({ containerId: 'c1', containerEventType: 'CONTAINER_STOPPED_EVENT' });
      },
    });
    const s = runtimeEvents(join(dir, 'a.sock'), {
      log: quiet(lines),
      onEvent: (e) => events.push(e),
      onReconnect: () => reconnects++,
      onDisconnect: () => disconnects++,
    });
    await until(() => events.length === 1, 'the stopped event');
    assert.deepEqual(events, [{ kind: 'stopped', containerID: 'c1' }]);
    assert.equal(reconnects, 1);
    assert.ok(lines.includes('Subscribed to CRI container events'), lines.join('\n'));
    assert.equal(disconnects, 0);
    server.forceShutdown();
    await until(() => disconnects === 1, 'the stream down told once');
    s.stop();

    const old = await serve(join(dir, 'b.sock'), {});
    const lines2: string[] = [];
    const s2 = runtimeEvents(join(dir, 'b.sock'), { log: quiet(lines2), onEvent() {}, onReconnect() {} });
    await until(() => lines2.some((l) => /containerd task events stream failed/.test(l)), 'the task events stream tried next');
    assert.match(lines2[0]!, /does not serve CRI container events/);
    s2.stop();
    old.forceShutdown();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('runtimeEventsWanted: the events wake the relist unless EventedPLEG is set false', () => {
  for (const [gates, wanted] of [
    [{}, true],
    [{ EventedPLEG: true }, true],
    [{ EventedPLEG: false }, false],
    [{ OtherGate: false }, true],
  ] as const)
    assert.equal(runtimeEventsWanted(gates), wanted, JSON.stringify(gates));
});
