import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  closeFrame,
  encodeFrame,
  handshakeResponse,
  isWebSocketRequest,
  MAX_MESSAGE_BYTES,
  MessageReader,
  OPCODE,
  offeredProtocols,
} from './websocket.ts';

const hex = (s: string) => Buffer.from(s.replace(/ /g, ''), 'hex');

test("handshakeResponse: RFC 6455's example key, the chosen protocol; no key or another version: none", () => {
  const headers = { 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', 'sec-websocket-version': '13' };
  assert.equal(
    handshakeResponse(headers, 'v5.channel.k8s.io'),
    'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n',
  );
  assert.doesNotMatch(handshakeResponse(headers, '')!, /Sec-WebSocket-Protocol/);
  assert.equal(handshakeResponse({ 'sec-websocket-version': '13' }, ''), undefined);
  assert.equal(handshakeResponse({ ...headers, 'sec-websocket-version': '8' }, ''), undefined);
});

const requests: [string, Record<string, string>, boolean][] = [
  ['Upgrade websocket, Connection Upgrade', { upgrade: 'websocket', connection: 'Upgrade' }, true],
  ['any case, Connection with other tokens', { upgrade: 'WebSocket', connection: 'keep-alive, upgrade' }, true],
  ['SPDY', { upgrade: 'SPDY/3.1', connection: 'Upgrade' }, false],
  ['no Connection upgrade', { upgrade: 'websocket', connection: 'close' }, false],
];
for (const [name, headers, want] of requests) test(`isWebSocketRequest: ${name}`, () => assert.equal(isWebSocketRequest(headers), want));

test('offeredProtocols: comma separated, trimmed, in order', () => {
  assert.deepEqual(offeredProtocols({ 'sec-websocket-protocol': 'v5.channel.k8s.io, v4.channel.k8s.io,,channel.k8s.io' }), [
    'v5.channel.k8s.io',
    'v4.channel.k8s.io',
    'channel.k8s.io',
  ]);
  assert.deepEqual(offeredProtocols({}), []);
});

// RFC 6455 section 5.7's examples.
const messages: [string, string[], { opcode: number; data: string }[]][] = [
  ['a masked text message', ['81 85 37 fa 21 3d 7f 9f 4d 51 58'], [{ opcode: OPCODE.text, data: 'Hello' }]],
  ['a fragmented unmasked text message', ['01 03 48 65 6c', '80 02 6c 6f'], [{ opcode: OPCODE.text, data: 'Hello' }]],
  [
    'a ping between two fragments, handed out first',
    ['01 03 48 65 6c 89 05 48 65 6c 6c 6f 80 02 6c 6f'],
    [
      { opcode: OPCODE.ping, data: 'Hello' },
      { opcode: OPCODE.text, data: 'Hello' },
    ],
  ],
  ['a frame split across reads', ['82 83 01 02', '03 04 01', '02 03'], [{ opcode: OPCODE.binary, data: '\u0000\u0000\u0000' }]],
];
for (const [name, chunks, want] of messages)
  test(`MessageReader: ${name}`, () => {
    const r = new MessageReader();
    const got = chunks.flatMap((c) => r.push(hex(c)).map((m) => ({ opcode: m.opcode, data: m.data.toString('latin1') })));
    assert.deepEqual(got, want);
  });

test('MessageReader: 16- and 64-bit lengths; a message past the limit or a stray continuation is a protocol error', () => {
  const r = new MessageReader();
  const [m256] = r.push(Buffer.concat([hex('82 7e 01 00'), Buffer.alloc(256, 7)]));
  assert.equal(m256!.data.length, 256);
  const [m64k] = r.push(Buffer.concat([hex('82 7f 00 00 00 00 00 01 00 00'), Buffer.alloc(65536, 7)]));
  assert.equal(m64k!.data.length, 65536);
  const tooBig = Buffer.alloc(10);
  tooBig[0] = 0x82;
  tooBig[1] = 127;
  tooBig.writeBigUInt64BE(BigInt(MAX_MESSAGE_BYTES + 1), 2);
  assert.throws(() => new MessageReader().push(tooBig), /too large/);
  assert.throws(() => new MessageReader().push(hex('80 00')), /continuation/);
});

test('encodeFrame: unmasked, FIN set, each length form; read back', () => {
  assert.deepEqual(encodeFrame(OPCODE.binary, Buffer.from([1])), hex('82 01 01'));
  assert.deepEqual(encodeFrame(OPCODE.binary, Buffer.alloc(256)).subarray(0, 4), hex('82 7e 01 00'));
  assert.deepEqual(encodeFrame(OPCODE.binary, Buffer.alloc(65536)).subarray(0, 10), hex('82 7f 00 00 00 00 00 01 00 00'));
  assert.deepEqual(closeFrame(), hex('88 02 03 e8'));
  const [m] = new MessageReader().push(encodeFrame(OPCODE.binary, Buffer.alloc(70_000, 3)));
  assert.equal(m!.data.length, 70_000);
});
