// The kubelet's own SPDY upgrade to the runtime's streaming server, for the translator and the
// tunnel: upstream's spdy.SpdyRoundTripper (Dial, then the POST with Upgrade: SPDY/3.1 and the
// protocols it offers in X-Stream-Protocol-Version). The runtime's URL is plain HTTP on the
// node (containerd's stream server), as the splice in ../streaming.ts dials it.
import { connect, type Socket } from 'node:net';

export type UpgradeResponse = {
  status: number;
  /** Header names lower-cased; repeated ones joined with ", ". */
  headers: Record<string, string>;
  /** The response's head as it came (status line to the blank line). */
  head: Buffer;
  /** What came after the head in the same reads: the first SPDY frames, or the start of an error's body. */
  rest: Buffer;
  conn: Socket;
};

/** Pure: a response's head, or undefined until its blank line is in. */
export function parseResponseHead(b: Buffer): Omit<UpgradeResponse, 'conn'> | undefined {
  const end = b.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = b.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return { status, headers, head: b.subarray(0, end + 4), rest: b.subarray(end + 4) };
}

/** Pure: the response upgraded to SPDY/3.1 (SpdyRoundTripper.NewConnection's check). */
export function upgradedToSpdy(r: Pick<UpgradeResponse, 'status' | 'headers'>): boolean {
  return (
    r.status === 101 &&
    (r.headers.connection ?? '').toLowerCase().includes('upgrade') &&
    (r.headers.upgrade ?? '').toLowerCase().includes('spdy/3.1')
  );
}

/** Pure: an upgrade refusal's words (upstream's upgradeErrorMessage: a Status's message or error, else the body). */
export function upgradeErrorMessage(body: string): string {
  try {
    const s = JSON.parse(body) as { message?: unknown; error?: unknown };
    for (const m of [s.message, s.error]) if (typeof m === 'string' && m.trim()) return m.trim();
  } catch {}
  return body.trim() || 'empty server response';
}

/** Dials the runtime's URL and asks for SPDY/3.1 with these protocols; resolves with its answer's head. */
export function upgradeToSpdy(target: URL, protocols: string[]): Promise<UpgradeResponse> {
  return new Promise((resolve, reject) => {
    const port = Number(target.port || 80);
    const conn = connect(port, target.hostname);
    let got = Buffer.alloc(0);
    const fail = (e: Error) => {
      conn.destroy();
      reject(new Error(`error dialing backend: dial tcp ${target.host}: ${e.message}`));
    };
    const onData = (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      const parsed = parseResponseHead(got);
      if (!parsed) return;
      conn.off('data', onData).off('error', fail).off('close', closed);
      // From here its end is the caller's 'close' to handle; an error comes with that close.
      conn.on('error', () => conn.destroy());
      conn.pause();
      resolve({ ...parsed, conn });
    };
    const closed = () => reject(new Error('unable to upgrade connection: the runtime closed the connection'));
    conn.on('error', fail).on('data', onData).on('close', closed);
    conn.once('connect', () => {
      const offered = protocols.map((p) => `X-Stream-Protocol-Version: ${p}\r\n`).join('');
      conn.write(
        `POST ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n${offered}Content-Length: 0\r\n\r\n`,
      );
    });
  });
}

/** Reads the rest of a refused upgrade's body (Content-Length bytes, else until the runtime closes). */
export function readBody(r: UpgradeResponse): Promise<string> {
  return new Promise((resolve) => {
    const want = Number(r.headers['content-length'] ?? Number.NaN);
    let body = r.rest;
    const done = () => {
      r.conn.destroy();
      resolve(body.toString());
    };
    if (body.length >= want) return done();
    r.conn.on('data', (c: Buffer) => {
      body = Buffer.concat([body, c]);
      if (body.length >= want) done();
    });
    r.conn.on('close', done).on('error', done);
    r.conn.resume();
  });
}
