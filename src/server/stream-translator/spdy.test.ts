// The frames checked on the wire against the framer the runtime's streaming server reads and
// writes them with (github.com/moby/spdystream/spdy, through hack/tools/kube/spdy-check). No Go:
// the test fails, it does not skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dataFrames, FrameReader, goAway, headerBlock, MAX_DATA, ping, storedBlocks, synStream, TYPE } from './spdy.ts';

const GO = process.env.GO ?? '/usr/local/go/bin/go';
const TOOLS = new URL('../../../hack/tools/kube', import.meta.url).pathname;

function spdyCheck(mode: 'read' | 'write', input?: Buffer): Buffer {
  assert.ok(existsSync(GO), `go is needed to check the SPDY frames: no go at ${GO} (set GO=/path/to/go)`);
  return execFileSync(GO, ['run', './spdy-check', mode], {
    cwd: TOOLS,
    input,
    timeout: 300_000,
    env: { ...process.env, GOTOOLCHAIN: 'local' },
  });
}

test("spdystream reads the translator's frames: streams with their headers, data, a bare FIN, PING, GOAWAY", { timeout: 300_000 }, () => {
  const big = 'x'.repeat(70_000); // a header block past one stored block's 65535 bytes
  const frames = Buffer.concat([
    synStream(1, storedBlocks(headerBlock({ streamType: 'error' }), true)),
    synStream(3, storedBlocks(headerBlock({ streamtype: 'stdin', other: 'a' }), false)),
    synStream(5, storedBlocks(headerBlock({ streamtype: 'resize', long: big }), false)),
    dataFrames(3, Buffer.from('typed\n')),
    dataFrames(3, Buffer.alloc(0), true),
    dataFrames(5, Buffer.from('{"Width":80,"Height":24}')),
    ping(2),
    goAway(0),
  ]);
  const got = spdyCheck('read', frames)
    .toString()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(got, [
    { type: 'SYN_STREAM', streamId: 1, headers: { Streamtype: ['error'] } },
    { type: 'SYN_STREAM', streamId: 3, headers: { Streamtype: ['stdin'], Other: ['a'] } },
    { type: 'SYN_STREAM', streamId: 5, headers: { Streamtype: ['resize'], Long: [big] } },
    { type: 'DATA', streamId: 3, data: 'typed\n' },
    { type: 'DATA', streamId: 3, flags: 1 },
    { type: 'DATA', streamId: 5, data: '{"Width":80,"Height":24}' },
    { type: 'PING', pingId: 2 },
    { type: 'GOAWAY' },
  ]);
});

test("FrameReader reads spdystream's server frames, a byte at a time: replies, data, FIN, PING, RST_STREAM, GOAWAY", {
  timeout: 300_000,
}, () => {
  const bytes = spdyCheck('write');
  const reader = new FrameReader();
  const got = [];
  for (let i = 0; i < bytes.length; i++) got.push(...reader.push(bytes.subarray(i, i + 1)));
  assert.deepEqual(got, [
    { kind: 'control', type: TYPE.synReply, fin: false, streamId: 1 },
    { kind: 'control', type: TYPE.synReply, fin: false, streamId: 3 },
    { kind: 'control', type: TYPE.ping, fin: false, streamId: 0, ping: 2 },
    { kind: 'data', streamId: 3, fin: false, data: Buffer.from('out\n') },
    { kind: 'data', streamId: 3, fin: true, data: Buffer.alloc(0) },
    { kind: 'data', streamId: 1, fin: true, data: Buffer.from('{"status":"Success"}') },
    { kind: 'control', type: TYPE.rstStream, fin: false, streamId: 5 },
    { kind: 'control', type: TYPE.goAway, fin: false, streamId: 0 },
  ]);
});

test('dataFrames: a write past 24 bits of length goes in two frames, the FIN on the last', () => {
  const frames = new FrameReader().push(dataFrames(7, Buffer.alloc(MAX_DATA + 5, 1), true));
  assert.deepEqual(
    frames.map((f) => f.kind === 'data' && [f.streamId, f.data.length, f.fin]),
    [
      [7, MAX_DATA, false],
      [7, 5, true],
    ],
  );
});

test('FrameReader: a control frame of another SPDY version is refused', () => {
  const v2 = ping(1);
  v2.writeUInt16BE(0x8002, 0);
  assert.throws(() => new FrameReader().push(v2), /unsupported SPDY version 2/);
});
