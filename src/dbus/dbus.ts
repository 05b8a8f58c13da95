// A minimal D-Bus client over the system bus socket, enough for logind and systemd: method calls
// (properties, KillUnit, ListInhibitors) and signals (PrepareForShutdown). Written here
// rather than taken as a dependency because what the kubelet needs is small, and a socket
// plus a parser costs next to nothing in memory (a kubelet's RSS is reserved on every node).
// It does not negotiate file descriptor passing: Node.js cannot receive descriptors over a
// unix socket, so the inhibitor lock is held elsewhere (see logind.ts).
import { createConnection, type Socket } from 'node:net';

/** godbus's default when DBUS_SYSTEM_BUS_ADDRESS is not set. */
export const DEFAULT_SYSTEM_BUS_ADDRESS = 'unix:path=/var/run/dbus/system_bus_socket';

export interface DBusSignal {
  path?: string;
  interface?: string;
  member?: string;
  sender?: string;
  body: unknown[];
}

export interface CallOptions {
  destination: string;
  path: string;
  interface: string;
  member: string;
  signature?: string;
  body?: unknown[];
}

export interface DBusConnection {
  call(c: CallOptions, timeoutMs?: number): Promise<unknown[]>;
  onSignal(fn: (s: DBusSignal) => void): void;
  /** Called once when the connection ends (the bus went away, or close()). */
  onClose(fn: (err?: Error) => void): void;
  close(): void;
}

export class DBusError extends Error {
  /** e.g. org.freedesktop.DBus.Error.ServiceUnknown */
  readonly errorName: string;
  constructor(errorName: string, message: string) {
    super(message);
    this.errorName = errorName;
  }
}

// --- wire format (the D-Bus specification, "Message Protocol") ---

const ALIGN: Record<string, number> = {
  y: 1,
  g: 1,
  v: 1,
  n: 2,
  q: 2,
  b: 4,
  i: 4,
  u: 4,
  h: 4,
  s: 4,
  o: 4,
  a: 4,
  x: 8,
  t: 8,
  d: 8,
  '(': 8,
  '{': 8,
};

/** The end index of the single complete type starting at sig[i]. */
function typeEnd(sig: string, i: number): number {
  const c = sig[i];
  if (c === 'a') return typeEnd(sig, i + 1);
  if (c === '(' || c === '{') {
    const close = c === '(' ? ')' : '}';
    let j = i + 1;
    while (sig[j] !== close) {
      if (j >= sig.length) throw new Error(`bad D-Bus signature ${sig}`);
      j = typeEnd(sig, j);
    }
    return j + 1;
  }
  if (c === undefined || !(c in ALIGN)) throw new Error(`bad D-Bus signature ${sig}`);
  return i + 1;
}

export function splitSignature(sig: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < sig.length; ) {
    const end = typeEnd(sig, i);
    out.push(sig.slice(i, end));
    i = end;
  }
  return out;
}

class Writer {
  #chunks: Buffer[] = [];
  len = 0;
  #push(b: Buffer) {
    this.#chunks.push(b);
    this.len += b.length;
  }
  align(n: number) {
    const pad = (n - (this.len % n)) % n;
    if (pad) this.#push(Buffer.alloc(pad));
  }
  write(type: string, v: unknown): void {
    this.align(ALIGN[type[0]!]!);
    const b = (n: number, f: (buf: Buffer) => void) => {
      const buf = Buffer.alloc(n);
      f(buf);
      this.#push(buf);
    };
    switch (type[0]) {
      case 'y':
        b(1, (x) => x.writeUInt8(Number(v)));
        break;
      case 'b':
        b(4, (x) => x.writeUInt32LE(v ? 1 : 0));
        break;
      case 'n':
        b(2, (x) => x.writeInt16LE(Number(v)));
        break;
      case 'q':
        b(2, (x) => x.writeUInt16LE(Number(v)));
        break;
      case 'i':
        b(4, (x) => x.writeInt32LE(Number(v)));
        break;
      case 'u':
        b(4, (x) => x.writeUInt32LE(Number(v)));
        break;
      case 'x':
        b(8, (x) => x.writeBigInt64LE(BigInt(v as number)));
        break;
      case 't':
        b(8, (x) => x.writeBigUInt64LE(BigInt(v as number)));
        break;
      case 'd':
        b(8, (x) => x.writeDoubleLE(Number(v)));
        break;
      case 's':
      case 'o': {
        const s = Buffer.from(String(v));
        b(4, (x) => x.writeUInt32LE(s.length));
        this.#push(Buffer.concat([s, Buffer.alloc(1)]));
        break;
      }
      case 'g': {
        const s = Buffer.from(String(v));
        this.#push(Buffer.concat([Buffer.from([s.length]), s, Buffer.alloc(1)]));
        break;
      }
      case 'v': {
        const [sig, value] = v as [string, unknown];
        this.write('g', sig);
        this.write(sig, value);
        break;
      }
      case 'a': {
        const elem = type.slice(1);
        const lenAt = this.#chunks.length;
        b(4, () => {});
        this.align(ALIGN[elem[0]!]!);
        const start = this.len;
        for (const e of v as unknown[]) this.write(elem, e);
        this.#chunks[lenAt]!.writeUInt32LE(this.len - start);
        return;
      }
      case '(':
      case '{': {
        const inner = splitSignature(type.slice(1, -1));
        for (const [k, t] of inner.entries()) this.write(t, (v as unknown[])[k]);
        break;
      }
      default:
        throw new Error(`cannot write D-Bus type ${type}`);
    }
  }
  buffer() {
    return Buffer.concat(this.#chunks);
  }
}

class Reader {
  buf: Buffer;
  pos: number;
  le: boolean;
  constructor(buf: Buffer, pos: number, le: boolean) {
    this.buf = buf;
    this.pos = pos;
    this.le = le;
  }
  align(n: number) {
    this.pos += (n - (this.pos % n)) % n;
  }
  read(type: string): unknown {
    this.align(ALIGN[type[0]!]!);
    const { buf, le } = this;
    const at = this.pos;
    switch (type[0]) {
      case 'y':
        this.pos += 1;
        return buf.readUInt8(at);
      case 'b':
        this.pos += 4;
        return (le ? buf.readUInt32LE(at) : buf.readUInt32BE(at)) !== 0;
      case 'n':
        this.pos += 2;
        return le ? buf.readInt16LE(at) : buf.readInt16BE(at);
      case 'q':
        this.pos += 2;
        return le ? buf.readUInt16LE(at) : buf.readUInt16BE(at);
      case 'i':
        this.pos += 4;
        return le ? buf.readInt32LE(at) : buf.readInt32BE(at);
      case 'u':
      case 'h':
        this.pos += 4;
        return le ? buf.readUInt32LE(at) : buf.readUInt32BE(at);
      case 'x':
        this.pos += 8;
        return le ? buf.readBigInt64LE(at) : buf.readBigInt64BE(at);
      case 't':
        this.pos += 8;
        return le ? buf.readBigUInt64LE(at) : buf.readBigUInt64BE(at);
      case 'd':
        this.pos += 8;
        return le ? buf.readDoubleLE(at) : buf.readDoubleBE(at);
      case 's':
      case 'o': {
        const n = le ? buf.readUInt32LE(at) : buf.readUInt32BE(at);
        this.pos = at + 4 + n + 1;
        return buf.toString('utf8', at + 4, at + 4 + n);
      }
      case 'g': {
        const n = buf.readUInt8(at);
        this.pos = at + 1 + n + 1;
        return buf.toString('utf8', at + 1, at + 1 + n);
      }
      case 'v': {
        const sig = this.read('g') as string;
        return this.read(sig);
      }
      case 'a': {
        const n = le ? buf.readUInt32LE(at) : buf.readUInt32BE(at);
        this.pos = at + 4;
        const elem = type.slice(1);
        this.align(ALIGN[elem[0]!]!);
        const end = this.pos + n;
        const out: unknown[] = [];
        while (this.pos < end) out.push(this.read(elem));
        return out;
      }
      case '(':
      case '{':
        return splitSignature(type.slice(1, -1)).map((t) => this.read(t));
      default:
        throw new Error(`cannot read D-Bus type ${type}`);
    }
  }
}

const Type = { Call: 1, Return: 2, Error: 3, Signal: 4 } as const;
const FIELD = { path: 1, interface: 2, member: 3, errorName: 4, replySerial: 5, destination: 6, sender: 7, signature: 8 } as const;
const FIELD_TYPE: Record<number, string> = { 1: 'o', 2: 's', 3: 's', 4: 's', 5: 'u', 6: 's', 7: 's', 8: 'g' };

interface Message {
  type: number;
  serial: number;
  fields: Partial<Record<keyof typeof FIELD, string | number>>;
  body: unknown[];
}

export function encodeMessage(type: number, serial: number, fields: Message['fields'], signature = '', body: unknown[] = []): Buffer {
  const bw = new Writer();
  for (const [k, t] of splitSignature(signature).entries()) bw.write(t, body[k]);
  const bodyBuf = bw.buffer();
  const hw = new Writer();
  hw.write('y', 'l'.charCodeAt(0));
  hw.write('y', type);
  hw.write('y', 0);
  hw.write('y', 1);
  hw.write('u', bodyBuf.length);
  hw.write('u', serial);
  const list: [number, [string, unknown]][] = [];
  for (const [name, code] of Object.entries(FIELD)) {
    const v = fields[name as keyof typeof FIELD];
    if (v !== undefined) list.push([code, [FIELD_TYPE[code]!, v]]);
  }
  if (signature) list.push([FIELD.signature, ['g', signature]]);
  hw.write('a(yv)', list);
  hw.align(8);
  return Buffer.concat([hw.buffer(), bodyBuf]);
}

/** The length of the first whole message in buf, or undefined when more bytes are needed. */
function messageLength(buf: Buffer): number | undefined {
  if (buf.length < 16) return undefined;
  const le = buf[0] === 0x6c;
  const bodyLen = le ? buf.readUInt32LE(4) : buf.readUInt32BE(4);
  const fieldsLen = le ? buf.readUInt32LE(12) : buf.readUInt32BE(12);
  const headerLen = 16 + fieldsLen + ((8 - ((16 + fieldsLen) % 8)) % 8);
  const total = headerLen + bodyLen;
  return buf.length >= total ? total : undefined;
}

export function decodeMessage(buf: Buffer): Message {
  const le = buf[0] === 0x6c;
  const r = new Reader(buf, 0, le);
  r.read('y');
  const type = r.read('y') as number;
  r.read('y');
  r.read('y');
  r.read('u');
  const serial = r.read('u') as number;
  const fields: Message['fields'] = {};
  const names = Object.fromEntries(Object.entries(FIELD).map(([k, v]) => [v, k]));
  for (const [code, value] of r.read('a(yv)') as [number, string | number][]) {
    const name = names[code];
    if (name) fields[name as keyof typeof FIELD] = value;
  }
  r.align(8);
  const sig = (fields.signature as string | undefined) ?? '';
  const body = splitSignature(sig).map((t) => r.read(t));
  return { type, serial, fields, body };
}

// --- the connection ---

/** The socket path of a bus address (the first unix: entry); abstract names as Node writes them. */
export function socketPath(address: string): string {
  for (const entry of address.split(';')) {
    if (!entry.startsWith('unix:')) continue;
    const kv = Object.fromEntries(
      entry
        .slice(5)
        .split(',')
        .map((p) => p.split('=', 2) as [string, string]),
    );
    if (kv.path) return decodeURIComponent(kv.path);
    if (kv.abstract) return `\0${decodeURIComponent(kv.abstract)}`;
  }
  throw new Error(`no unix socket in D-Bus address ${JSON.stringify(address)}`);
}

/** Connects and authenticates (EXTERNAL, as the uid we run as), then says Hello. */
export async function connectBus(address: string, timeoutMs = 5000): Promise<DBusConnection> {
  const path = socketPath(address);
  const socket: Socket = createConnection(path);
  const deadline = setTimeout(() => socket.destroy(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const uid = String(process.getuid?.() ?? 0);
    socket.write(`\0AUTH EXTERNAL ${Buffer.from(uid).toString('hex')}\r\n`);
    const reply = await new Promise<string>((resolve, reject) => {
      let text = '';
      const onData = (d: Buffer) => {
        text += d.toString('latin1');
        if (!text.includes('\r\n')) return;
        socket.off('data', onData);
        resolve(text.split('\r\n')[0]!);
      };
      socket.on('data', onData);
      socket.once('error', reject);
      socket.once('close', () => reject(new Error('the bus closed the connection during authentication')));
    });
    if (!reply.startsWith('OK ')) throw new Error(`the bus refused authentication: ${reply}`);
    socket.write('BEGIN\r\n');
  } catch (e) {
    socket.destroy();
    throw new Error(`dial unix ${path}: ${(e as Error).message}`);
  } finally {
    clearTimeout(deadline);
  }
  socket.removeAllListeners('error');
  socket.removeAllListeners('close');

  let serial = 0;
  const pending = new Map<number, { resolve(b: unknown[]): void; reject(e: Error): void; timer: NodeJS.Timeout }>();
  const signalHandlers: ((s: DBusSignal) => void)[] = [];
  const closeHandlers: ((err?: Error) => void)[] = [];
  let closed: { err?: Error } | undefined;
  let inbox: Buffer = Buffer.alloc(0);

  const finish = (err?: Error) => {
    if (closed) return;
    closed = { err };
    for (const p of pending.values()) {
      clearTimeout(p.timer);
      p.reject(err ?? new Error('the D-Bus connection was closed'));
    }
    pending.clear();
    for (const fn of closeHandlers) fn(err);
  };
  socket.on('error', (e) => finish(e));
  socket.on('close', () => finish());
  socket.on('data', (d: Buffer) => {
    inbox = inbox.length ? Buffer.concat([inbox, d]) : d;
    for (let n = messageLength(inbox); n !== undefined; n = messageLength(inbox)) {
      const raw = inbox.subarray(0, n);
      inbox = inbox.subarray(n);
      let m: Message;
      try {
        m = decodeMessage(raw);
      } catch (e) {
        socket.destroy(new Error(`unreadable D-Bus message: ${(e as Error).message}`));
        return;
      }
      if (m.type === Type.Return || m.type === Type.Error) {
        const p = pending.get(Number(m.fields.replySerial));
        if (!p) continue;
        pending.delete(Number(m.fields.replySerial));
        clearTimeout(p.timer);
        if (m.type === Type.Return) p.resolve(m.body);
        else p.reject(new DBusError(String(m.fields.errorName), typeof m.body[0] === 'string' ? m.body[0] : String(m.fields.errorName)));
      } else if (m.type === Type.Signal) {
        const s: DBusSignal = {
          path: m.fields.path as string | undefined,
          interface: m.fields.interface as string | undefined,
          member: m.fields.member as string | undefined,
          sender: m.fields.sender as string | undefined,
          body: m.body,
        };
        for (const fn of signalHandlers) fn(s);
      }
      // Method calls to us (e.g. Peer.Ping) go unanswered: logind makes none.
    }
  });

  const conn: DBusConnection = {
    call(c, callTimeoutMs = 25_000) {
      if (closed) return Promise.reject(closed.err ?? new Error('the D-Bus connection was closed'));
      const s = ++serial;
      const msg = encodeMessage(
        Type.Call,
        s,
        { path: c.path, interface: c.interface, member: c.member, destination: c.destination },
        c.signature,
        c.body,
      );
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(s);
          reject(new Error(`${c.interface}.${c.member}: no reply within ${callTimeoutMs} ms`));
        }, callTimeoutMs);
        pending.set(s, { resolve, reject, timer });
        socket.write(msg);
      });
    },
    onSignal: (fn) => void signalHandlers.push(fn),
    onClose(fn) {
      if (closed) fn(closed.err);
      else closeHandlers.push(fn);
    },
    close: () => socket.destroy(),
  };
  try {
    await conn.call(
      { destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus', member: 'Hello' },
      timeoutMs,
    );
  } catch (e) {
    conn.close();
    throw e;
  }
  return conn;
}
