import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { createSecureContext } from 'node:tls';
import { apiserverSessions } from './h2-session.ts';

test('a connection whose TLS handshake never comes fails at the handshake timeout, and the next request connects anew', {
  timeout: 5000,
}, async () => {
  // A server that accepts the connection and never answers the ClientHello (a hung apiserver).
  const held: Socket[] = [];
  const server = createServer((s) => held.push(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = new URL(`https://127.0.0.1:${(server.address() as AddressInfo).port}`);
  try {
    const sessions = apiserverSessions(
      url,
      { secureContext: createSecureContext(), rejectUnauthorized: false },
      {
        dialMs: 1000,
        handshakeMs: 100,
      },
    );
    const started = performance.now();
    await assert.rejects(sessions.get(), /no TLS handshake in 100 ms to 127\.0\.0\.1:\d+/);
    assert.ok(performance.now() - started < 1000, 'the handshake timeout, not the dial one');
    await assert.rejects(sessions.get(), /no TLS handshake/);
    assert.equal(held.length, 2, 'a failed connect is not kept: each request dials again');
  } finally {
    for (const s of held) s.destroy();
    server.close();
  }
});
