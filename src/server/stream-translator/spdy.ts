// The SPDY/3.1 side of the kubelet's stream translation: the client end of a connection to the
// runtime's streaming server, which speaks SPDY only (cri-streaming over moby/spdystream).
// Pure frame codecs; the I/O is remotecommand.ts's. As spdystream, no flow control: it sends no
// WINDOW_UPDATE and ignores the peer's.
//
// A header block is a zlib stream shared by the connection's frames. Ours is written in stored
// (uncompressed) blocks, each frame's ending with a sync flush's empty block: a valid
// zlib stream that needs neither a compressor's state nor SPDY's dictionary (its header sets no
// FDICT). The runtime's header blocks (SYN_REPLY) say nothing the translation needs: skipped
// undecoded, which keeps no inflater either.

export const VERSION = 3;
export const TYPE = { synStream: 1, synReply: 2, rstStream: 3, settings: 4, ping: 6, goAway: 7, headers: 8, windowUpdate: 9 } as const;
export const FLAG_FIN = 0x01;
/** spdystream's MaxDataLength (24-bit length): a longer write goes in several frames. */
export const MAX_DATA = 0xffffff;

function controlHeader(type: number, flags: number, length: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt16BE(0x8000 | VERSION, 0);
  b.writeUInt16BE(type, 2);
  b.writeUInt32BE(((flags << 24) | length) >>> 0, 4);
  return b;
}

/** Pure: a name/value header block as spdystream writes it (count, then each lower-case name and its value). */
export function headerBlock(headers: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  };
  const entries = Object.entries(headers);
  parts.push(u32(entries.length));
  for (const [name, value] of entries) {
    const n = Buffer.from(name.toLowerCase());
    const v = Buffer.from(value);
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

const SYNC_FLUSH = Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]);

/** Pure: data as zlib stored blocks (the stream's 2-byte header first when first), then a sync flush's empty block. */
export function storedBlocks(data: Buffer, first: boolean): Buffer {
  const parts: Buffer[] = first ? [Buffer.from([0x78, 0x01])] : [];
  let at = 0;
  do {
    const chunk = data.subarray(at, at + 0xffff);
    const head = Buffer.alloc(5);
    head[0] = 0; // BFINAL 0, BTYPE 00 (stored), padded to the byte
    head.writeUInt16LE(chunk.length, 1);
    head.writeUInt16LE(~chunk.length & 0xffff, 3);
    parts.push(head, chunk);
    at += 0xffff;
  } while (at < data.length);
  // The empty stored block a sync flush ends with: Go's inflater hands out what it holds only
  // when it reads one, and would otherwise read on into the next frame's bytes.
  parts.push(SYNC_FLUSH);
  return Buffer.concat(parts);
}

/** Pure: SYN_STREAM opening a client stream; compressed is its header block already through storedBlocks. */
export function synStream(streamId: number, compressed: Buffer, fin = false): Buffer {
  const body = Buffer.alloc(10);
  body.writeUInt32BE(streamId & 0x7fffffff, 0);
  body.writeUInt32BE(0, 4); // associated-to stream
  body.writeUInt16BE(0, 8); // priority 0, slot 0
  return Buffer.concat([controlHeader(TYPE.synStream, fin ? FLAG_FIN : 0, 10 + compressed.length), body, compressed]);
}

/** Pure: DATA frames carrying data on a stream (empty data: one empty frame, a bare FIN with fin). */
export function dataFrames(streamId: number, data: Buffer, fin = false): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  do {
    const chunk = data.subarray(at, at + MAX_DATA);
    at += MAX_DATA;
    const head = Buffer.alloc(8);
    head.writeUInt32BE(streamId & 0x7fffffff, 0);
    head.writeUInt32BE((((at >= data.length && fin ? FLAG_FIN : 0) << 24) | chunk.length) >>> 0, 4);
    parts.push(head, chunk);
  } while (at < data.length);
  return Buffer.concat(parts);
}

/** Pure: PING with this id (an echo of the peer's, as spdystream answers them). */
export function ping(id: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(id >>> 0);
  return Buffer.concat([controlHeader(TYPE.ping, 0, 4), b]);
}

/** Pure: GOAWAY, status OK: spdystream's Close before it shuts the connection. */
export function goAway(lastGoodStreamId: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt32BE(lastGoodStreamId & 0x7fffffff, 0);
  return Buffer.concat([controlHeader(TYPE.goAway, 0, 8), b]);
}

export type Frame =
  | { kind: 'data'; streamId: number; fin: boolean; data: Buffer }
  | { kind: 'control'; type: number; fin: boolean; streamId: number; ping?: number };

/** Reads a peer's frames as they arrive. Control frames carry their stream (where they name one) and a PING its id. */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Frame[] {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    const out: Frame[] = [];
    for (;;) {
      const b = this.buffered;
      if (b.length < 8) return out;
      const length = b.readUInt32BE(4) & 0xffffff;
      if (b.length < 8 + length) return out;
      const flags = b[4]!;
      const body = b.subarray(8, 8 + length);
      this.buffered = b.subarray(8 + length);
      if ((b[0]! & 0x80) === 0) {
        out.push({ kind: 'data', streamId: b.readUInt32BE(0) & 0x7fffffff, fin: (flags & FLAG_FIN) !== 0, data: Buffer.from(body) });
        continue;
      }
      const version = b.readUInt16BE(0) & 0x7fff;
      if (version !== VERSION) throw new Error(`unsupported SPDY version ${version}`);
      const type = b.readUInt16BE(2);
      const named =
        type === TYPE.synStream || type === TYPE.synReply || type === TYPE.rstStream || type === TYPE.headers || type === TYPE.windowUpdate;
      out.push({
        kind: 'control',
        type,
        fin: (flags & FLAG_FIN) !== 0,
        streamId: named && body.length >= 4 ? body.readUInt32BE(0) & 0x7fffffff : 0,
        ...(type === TYPE.ping && body.length >= 4 ? { ping: body.readUInt32BE(0) } : {}),
      });
    }
  }
}
