import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseResponseHead, upgradedToSpdy, upgradeErrorMessage } from './upgrade.ts';

test("parseResponseHead: the runtime's 101 with the first frame's bytes after it; nothing until the blank line", () => {
  const head =
    'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n';
  const r = parseResponseHead(Buffer.concat([Buffer.from(head), Buffer.from([0x80, 0x03])]))!;
  assert.equal(r.status, 101);
  assert.deepEqual(r.headers, { connection: 'Upgrade', upgrade: 'SPDY/3.1', 'x-stream-protocol-version': 'v4.channel.k8s.io' });
  assert.equal(r.head.toString(), head);
  assert.deepEqual(r.rest, Buffer.from([0x80, 0x03]));
  assert.equal(upgradedToSpdy(r), true);
  assert.equal(parseResponseHead(Buffer.from(head.slice(0, -2))), undefined);
});

const answers: [string, string, boolean][] = [
  ['101 without Upgrade', 'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n\r\n', false],
  ['101 to websocket', 'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n', false],
  ['a refusal', 'HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\n', false],
];
for (const [name, head, want] of answers)
  test(`upgradedToSpdy: ${name}`, () => assert.equal(upgradedToSpdy(parseResponseHead(Buffer.from(head))!), want));

const bodies: [string, string, string][] = [
  ['a Status: its message', '{"kind":"Status","message":" token expired ","error":"x"}', 'token expired'],
  ['an error field', '{"error":"bad stream"}', 'bad stream'],
  ['plain text', 'Not Found\n', 'Not Found'],
  ['nothing', ' ', 'empty server response'],
];
for (const [name, body, want] of bodies) test(`upgradeErrorMessage: ${name}`, () => assert.equal(upgradeErrorMessage(body), want));
