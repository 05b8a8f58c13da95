// The WebSocket side of the kubelet's stream translation (RFC 6455, server end): the handshake
// and the frames. Pure: the I/O is the translator's (remotecommand.ts, tunnel.ts). Upstream
// serves it with golang.org/x/net/websocket (wsstream.Conn) for exec and attach and with
// gorilla/websocket for the port-forward tunnel; both read whole messages and write one frame a
// message, as here.
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export const OPCODE = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;

/** x/net/websocket's DefaultMaxPayloadBytes: a longer message ends the connection. */
export const MAX_MESSAGE_BYTES = 32 << 20;

/** Pure: the protocols a request offers (Sec-WebSocket-Protocol, comma separated, in order). */
export function offeredProtocols(headers: IncomingHttpHeaders): string[] {
  const h = headers['sec-websocket-protocol'];
  return (Array.isArray(h) ? h.join(',') : (h ?? ''))
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

/** Pure: a WebSocket upgrade (wsstream.IsWebSocketRequest: Upgrade websocket, Connection upgrade). */
export function isWebSocketRequest(headers: IncomingHttpHeaders): boolean {
  const connection = (headers.connection ?? '').toLowerCase().split(',');
  return (headers.upgrade ?? '').toLowerCase() === 'websocket' && connection.some((t) => t.trim() === 'upgrade');
}

/** Pure: the 101 answer that takes a WebSocket up with this subprotocol ('' for none); undefined without a key. */
export function handshakeResponse(headers: IncomingHttpHeaders, protocol: string): string | undefined {
  const key = headers['sec-websocket-key'];
  if (typeof key !== 'string' || !key.trim() || headers['sec-websocket-version'] !== '13') return undefined;
  const accept = createHash('sha1')
    .update(key.trim() + GUID)
    .digest('base64');
  const chosen = protocol ? `Sec-WebSocket-Protocol: ${protocol}\r\n` : '';
  return `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n${chosen}\r\n`;
}

/** Pure: one unmasked frame, FIN set, as a server sends it. */
export function encodeFrame(opcode: number, payload: Uint8Array): Buffer {
  const n = payload.length;
  const head = n < 126 ? Buffer.alloc(2) : n < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  head[0] = 0x80 | opcode;
  if (n < 126) head[1] = n;
  else if (n < 65536) {
    head[1] = 126;
    head.writeUInt16BE(n, 2);
  } else {
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([head, payload]);
}

/** How long a close frame (and what went before it) has to reach the client before the connection is shut. */
export const CLOSE_WAIT_MS = 5_000;

/** Pure: a close frame with its status code (1000: normal closure). */
export function closeFrame(code = 1000): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(code);
  return encodeFrame(OPCODE.close, b);
}

export type Message = { opcode: number; data: Buffer };

/**
 * Reads a client's frames as they arrive into whole messages: fragments joined, masks taken
 * off, control frames (close, ping, pong) handed out between a message's fragments. Throws on
 * a protocol error (a message over MAX_MESSAGE_BYTES, a continuation with nothing to continue).
 */
export class MessageReader {
  private buffered: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private fragmentBytes = 0;
  private fragmentOpcode = 0;

  push(chunk: Buffer): Message[] {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    const out: Message[] = [];
    for (;;) {
      const frame = this.nextFrame();
      if (!frame) return out;
      const { fin, opcode, payload } = frame;
      if (opcode >= 8) {
        out.push({ opcode, data: payload });
        continue;
      }
      if (opcode === OPCODE.continuation && !this.fragments.length) throw new Error('continuation frame without a message');
      if (opcode !== OPCODE.continuation) {
        if (this.fragments.length) throw new Error('new message before the last one ended');
        this.fragmentOpcode = opcode;
      }
      this.fragmentBytes += payload.length;
      if (this.fragmentBytes > MAX_MESSAGE_BYTES) throw new Error('message too large');
      this.fragments.push(payload);
      if (fin) {
        out.push({ opcode: this.fragmentOpcode, data: this.fragments.length === 1 ? this.fragments[0]! : Buffer.concat(this.fragments) });
        this.fragments = [];
        this.fragmentBytes = 0;
      }
    }
  }

  private nextFrame(): { fin: boolean; opcode: number; payload: Buffer } | undefined {
    const b = this.buffered;
    if (b.length < 2) return undefined;
    const masked = (b[1]! & 0x80) !== 0;
    let length = b[1]! & 0x7f;
    let at = 2;
    if (length === 126) {
      if (b.length < 4) return undefined;
      length = b.readUInt16BE(2);
      at = 4;
    } else if (length === 127) {
      if (b.length < 10) return undefined;
      const long = b.readBigUInt64BE(2);
      if (long > BigInt(MAX_MESSAGE_BYTES)) throw new Error('message too large');
      length = Number(long);
      at = 10;
    }
    const maskAt = at;
    if (masked) at += 4;
    if (b.length < at + length) return undefined;
    const payload = Buffer.from(b.subarray(at, at + length));
    if (masked) for (let i = 0; i < payload.length; i++) payload[i] = payload[i]! ^ b[maskAt + (i & 3)]!;
    this.buffered = b.subarray(at + length);
    return { fin: (b[0]! & 0x80) !== 0, opcode: b[0]! & 0x0f, payload };
  }
}
