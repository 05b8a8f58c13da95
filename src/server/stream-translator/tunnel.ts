// port-forward over WebSocket (ExtendWebSocketsToKubelet): the client speaks SPDY inside
// WebSocket binary messages (subprotocol "SPDY/3.1+portforward.k8s.io"), so the kubelet asks
// the runtime for SPDY itself and carries the bytes between the two untouched. Upstream's
// TunnelingHandler (k8s.io/apiserver/pkg/util/proxy/streamtunnel.go) in front of the runtime's
// URL in getPortForward; its messages are client-go's TunnelingConnection (one binary message a
// write).
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  CLOSE_WAIT_MS,
  closeFrame,
  encodeFrame,
  handshakeResponse,
  type Message,
  MessageReader,
  OPCODE,
  offeredProtocols,
} from './websocket.ts';
import { relay } from './relay.ts';
import { answer } from './answer.ts';
import { type UpgradeResponse, upgradedToSpdy, upgradeToSpdy } from './upgrade.ts';

const PREFIX = 'SPDY/3.1+';

/** Pure: the SPDY protocols a tunnelling request offers (spdyProtocolsFromWebsocketProtocols). */
export function tunnelledProtocols(offered: string[]): string[] {
  return offered.filter((p) => p.startsWith(PREFIX) && p.endsWith('.k8s.io')).map((p) => p.slice(PREFIX.length));
}

/** An HTTP error as http.Error writes it (the message and a newline), the connection closed. */
const plain = (socket: Duplex, status: number, message: string) => answer(socket, status, `${message}\n`);

/** Serves one tunnelled port-forward to its end (the request checked and its runtime URL in hand). */
export async function tunnelPortForward(req: IncomingMessage, socket: Duplex, head: Buffer, target: URL): Promise<void> {
  const closed = new Promise<void>((resolve) => socket.once('close', resolve));
  const protocols = tunnelledProtocols(offeredProtocols(req.headers));
  if (!protocols.length) return plain(socket, 400, 'unable to upgrade: no tunneling spdy protocols provided');
  let r: UpgradeResponse;
  try {
    r = await upgradeToSpdy(target, protocols);
  } catch (e) {
    return plain(socket, 500, (e as Error).message);
  }
  const runtime = r.conn;
  socket.once('close', () => runtime.destroy());
  // A refusal goes back as the runtime wrote it: the client reads an HTTP error, not a WebSocket.
  if (r.status !== 101) {
    socket.write(r.head);
    if (r.rest.length) socket.write(r.rest);
    runtime.pipe(socket);
    runtime.resume();
    return closed;
  }
  if (!upgradedToSpdy(r)) {
    runtime.destroy();
    return plain(socket, 500, 'unable to upgrade: missing upgrade headers in response');
  }
  const chosen = (r.headers['x-stream-protocol-version'] ?? '').trim();
  const accept = handshakeResponse(req.headers, chosen ? PREFIX + chosen : '');
  if (!accept) {
    runtime.destroy();
    return plain(socket, 400, 'Bad Request');
  }
  socket.write(accept);
  // The runtime's connection gone: a close frame, and the connection shut after a moment to flush it.
  runtime.once('close', () => {
    if (!socket.destroyed) socket.end(closeFrame());
    setTimeout(() => socket.destroy(), CLOSE_WAIT_MS).unref();
  });
  const toClient = (bytes: Buffer) => relay(runtime, socket, encodeFrame(OPCODE.binary, bytes));
  if (r.rest.length) toClient(r.rest);
  runtime.on('data', toClient);
  runtime.resume();

  const reader = new MessageReader();
  const fromClient = (chunk: Buffer) => {
    let messages: Message[];
    try {
      messages = reader.push(chunk);
    } catch {
      return socket.destroy();
    }
    for (const m of messages) {
      if (m.opcode === OPCODE.close) {
        runtime.end();
        return socket.end(closeFrame());
      }
      if (m.opcode === OPCODE.ping) socket.write(encodeFrame(OPCODE.pong, m.data));
      else if (m.opcode === OPCODE.binary) relay(socket, runtime, m.data);
      else if (m.opcode === OPCODE.text) return socket.destroy(); // TunnelingConnection: "invalid message type received"
    }
  };
  socket.on('data', fromClient);
  if (head.length) fromClient(head);
  return closed;
}
