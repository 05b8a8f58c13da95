// One HTTP/2 session to the apiserver for every request and watch of a client, as client-go's
// transport multiplexes them (golang.org/x/net/http2 behind net/http): a node then holds one TLS
// connection to the apiserver where HTTP/1.1 needs one a watch (6 a node, docs/benchmarks.md run
// K), each a TLS session and buffers in the apiserver. The protocol is ALPN's: a server that does
// not offer h2 (a test server, a proxy) is spoken HTTP/1.1 to, by the caller's agents.
import { type ClientHttp2Session, type ClientHttp2Stream, connect as h2connect, type OutgoingHttpHeaders } from 'node:http2';
import { connect as tlsConnect, type SecureContext } from 'node:tls';

export interface SessionTls {
  secureContext: SecureContext;
  rejectUnauthorized: boolean;
  servername?: string;
}

/** How long a ping may go unanswered before the session is taken for dead (client-go's PingTimeout). */
const PING_TIMEOUT_MS = 15_000;

/**
 * How long a new connection may take: client-go's dialer (30 s to connect) and
 * utilnet.SetTransportDefaults' TLSHandshakeTimeout (10 s). Without them a connect to an
 * apiserver whose packets are dropped waits out the kernel's SYN retries (about 2 minutes), and
 * every request of the client waits on that one connect.
 */
export const CONNECT_TIMEOUTS = { dialMs: 30_000, handshakeMs: 10_000 };

/**
 * The receive windows, as Go's transport sets them (transportDefaultStreamFlow, 4 MB a stream):
 * node:http2 keeps the protocol's 64 KB, so a large list waits for a WINDOW_UPDATE every 64 KB,
 * a round trip each. The connection's window is four streams' worth rather than Go's 1 GB:
 * node:http2 refuses new streams once a session buffers more than maxSessionMemory.
 */
const STREAM_WINDOW = 4 << 20;
const SESSION_WINDOW = 4 * STREAM_WINDOW;
const SESSION_MEMORY_MB = 2 * (SESSION_WINDOW >> 20);

/** An open session: streams on it, and its health check. */
export interface Session {
  /**
   * A stream for one request or watch; the session keeps the process alive while one is open.
   * body: whether a body follows. node:http2 ends a GET's, HEAD's and DELETE's stream at once
   * unless told otherwise, and the kubelet's DELETEs carry DeleteOptions.
   */
  request(headers: OutgoingHttpHeaders, body: boolean, signal?: AbortSignal): ClientHttp2Stream;
  /**
   * A stream was silent too long: ask for a ping, and destroy the session (all its streams fail,
   * their callers retry on a new one) when none comes back, as client-go's ReadIdleTimeout health
   * check does for a connection whose packets are dropped.
   */
  suspect(): void;
}

export interface Sessions {
  /** The session to open a stream on; undefined when the server speaks HTTP/1.1 only. */
  get(): Promise<Session | undefined>;
  /** New credentials: the next stream opens a new session; streams open finish on the old one. */
  reset(tls: SessionTls): void;
}

export function apiserverSessions(url: URL, first: SessionTls, timeouts = CONNECT_TIMEOUTS): Sessions {
  let tls = first;
  // Sessions open: another is opened when each has as many streams as the server allows
  // (its SETTINGS_MAX_CONCURRENT_STREAMS, 250 in Go's server), as Go's transport does, so that a
  // request never queues behind watches (a node watches each ConfigMap and Secret its pods use).
  let pool: OpenSession[] = [];
  let connecting: Promise<OpenSession | undefined> | undefined;
  let http1 = false;

  function open(): Promise<OpenSession | undefined> {
    return new Promise<OpenSession | undefined>((resolve, reject) => {
      const socket = tlsConnect({
        host: url.hostname,
        port: Number(url.port || 443),
        ALPNProtocols: ['h2', 'http/1.1'],
        ...tls,
      });
      const fail = (why: string) => socket.destroy(new Error(`${why} to ${url.host}`));
      let timer = setTimeout(() => fail(`no connection in ${timeouts.dialMs} ms`), timeouts.dialMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        timer = setTimeout(() => fail(`no TLS handshake in ${timeouts.handshakeMs} ms`), timeouts.handshakeMs);
      });
      const failed = (e: Error) => {
        clearTimeout(timer);
        reject(e);
      };
      socket.once('error', failed);
      socket.once('secureConnect', () => {
        clearTimeout(timer);
        socket.removeListener('error', failed);
        if (socket.alpnProtocol !== 'h2') {
          socket.destroy();
          http1 = true;
          return resolve(undefined);
        }
        const h2 = h2connect(url.origin, {
          createConnection: () => socket,
          settings: { initialWindowSize: STREAM_WINDOW },
          maxSessionMemory: SESSION_MEMORY_MB,
        });
        h2.setLocalWindowSize(SESSION_WINDOW);
        const session = wrap(h2, () => {
          pool = pool.filter((x) => x !== session);
        });
        pool.push(session);
        resolve(session);
      });
    });
  }

  return {
    async get() {
      if (http1) return undefined;
      const roomy = pool.find((x) => x.hasRoom());
      if (roomy) return roomy;
      // A failed connect is tried anew by the next request.
      connecting ??= open().finally(() => (connecting = undefined));
      return connecting;
    },
    reset(next) {
      tls = next;
      http1 = false;
      for (const old of pool) old.close();
      pool = [];
    },
  };
}

type OpenSession = Session & { hasRoom(): boolean; close(): void };

/** A session's streams counted: for the process's liveness and the pool's room. gone: it closed or the server sent GOAWAY. */
function wrap(session: ClientHttp2Session, gone: () => void): OpenSession {
  // Like an agent's free socket, an idle session keeps no process alive (join, the CLI's
  // commands); a stream open does.
  let open = 0;
  let usable = true;
  session.unref();
  const leave = () => {
    usable = false;
    gone();
  };
  session.once('close', leave);
  session.once('goaway', leave);
  session.on('error', leave);
  return {
    request(headers, body, signal) {
      const stream = session.request(headers, { endStream: !body, ...(signal ? { signal } : {}) });
      if (open++ === 0) session.ref();
      stream.once('close', () => {
        if (--open === 0 && !session.destroyed) session.unref();
      });
      return stream;
    },
    hasRoom: () => usable && !session.closed && open < (session.remoteSettings.maxConcurrentStreams ?? 100),
    suspect() {
      // A session this client closed (new credentials, reset()) cannot be pinged: node:http2
      // cancels the ping at once (ERR_HTTP2_PING_CANCEL), and destroying the session for that
      // failed every watch still on it, a node's pods watch too, at the first silence after each
      // client-certificate rotation. Its streams finish on their own, at their servers' timeouts.
      if (session.destroyed || session.closed) return;
      const timer = setTimeout(() => session.destroy(new Error(`no answer to a ping in ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS);
      timer.unref();
      const sent = session.ping((err) => {
        clearTimeout(timer);
        if (err && !session.destroyed) session.destroy(err);
      });
      if (!sent) clearTimeout(timer);
    },
    // Graceful: no new streams; those open (watches) finish, then the connection goes.
    close() {
      usable = false;
      session.close();
    },
  };
}
