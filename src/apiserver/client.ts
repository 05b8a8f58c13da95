// A small REST client for the kube-apiserver: over one HTTP/2 session where the server offers
// h2 (src/apiserver/h2-session.ts), as client-go, else over node:https. The kubelet uses a
// dozen endpoints; @kubernetes/client-node's generated clients cost ~60 MB of resident
// memory on import (docs/benchmarks.md), so its models are used as types only.
import { NO_TRACER, type Tracer } from '../tracing/tracer.ts';
import { Agent, request as httpsRequest } from 'node:https';
import { createSecureContext } from 'node:tls';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { apiserverSessions, type Session, type Sessions } from './h2-session.ts';
import { readFileSync } from 'node:fs';
import type { Connection } from './kubeconfig.ts';
import { type ExecCredential, ExecCredentials, type ExecObserver } from './exec-credential.ts';
import { type CAReload, caReload } from './ca-reload.ts';
import type { Logger } from '../log/log.ts';
import * as protobufCodec from './protobuf/codec.ts';
import { backoff } from '../backoff/backoff.ts';

// node:http by getBuiltinModule, not import: its ESM facade reads every export, and the lazy
// WebSocket one loads undici, which only staticPodURL's fetch needs (docs/benchmarks.md).
const { request: httpRequest } = process.getBuiltinModule('node:http');

export type PatchType = 'merge' | 'strategic' | 'json';
const patchContentType: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
};

/** A failed request: status is the HTTP code (0 when the apiserver was not reached). */
export class ApiError extends Error {
  readonly status: number;
  readonly reason: string;
  constructor(status: number, reason: string, message: string) {
    super(message);
    this.status = status;
    this.reason = reason;
  }
}
export const isNotFound = (e: unknown) => e instanceof ApiError && e.status === 404;
export const isConflict = (e: unknown) => e instanceof ApiError && e.status === 409;
export const isGone = (e: unknown) => e instanceof ApiError && e.status === 410;
export const isAlreadyExists = (e: unknown) => e instanceof ApiError && e.status === 409 && e.reason === 'AlreadyExists';

/**
 * The refusals of an apiserver whose own view of a pod trails the kubelet's watch: the node
 * authorizer's graph of pods (what a pod references, its token), and NodeRestriction's pod cache
 * (a pod the scheduler has just bound is not yet on this node there), both fed by the apiserver's
 * informer. The same request passes once they catch up.
 */
const BEHIND = ['no relationship found between node', 'node requested token bound to a pod scheduled on a different node'];

/**
 * Pure: refused by an apiserver behind the pod (BEHIND). In a burst its informer trails by a few
 * hundred ms: 11 of 130 pods' first tokens in run AK (the authorizer's refusal) and 10 of 50 in
 * run AM's cluster (NodeRestriction's), each then a FailedMount event and a start a second later;
 * in AK also the first list of a new namespace's kube-root-ca.crt, which every pod of that burst
 * waited for. Upstream's kubelet shows the same and retries 0.5 s (a mount) or 0.8 s (a list) later.
 */
export const apiserverBehind = (e: unknown): boolean =>
  e instanceof ApiError && e.status === 403 && BEHIND.some((m) => e.message.includes(m));

/**
 * The waits before asking again an apiserver behind the pod: 0.1, 0.2 and 0.4 s (each up to
 * 1.5x), then undefined: the refusal stands (or the caller's own backoff takes over).
 */
export function behindWaits(): () => number | undefined {
  const b = backoff(100, 400, 0.5);
  let left = 3;
  return () => (left-- > 0 ? b.next() : undefined);
}

export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export interface ApiClient {
  get<T>(path: string): Promise<T>;
  create<T>(path: string, body: unknown): Promise<T>;
  replace<T>(path: string, body: unknown): Promise<T>;
  patch<T>(path: string, body: unknown, type: PatchType): Promise<T>;
  delete<T>(path: string, body?: unknown): Promise<T>;
  /** Streams watch events until the server ends the watch, the signal aborts, or an error occurs. */
  watch<T>(path: string, onEvent: (e: WatchEvent<T>) => void, signal?: AbortSignal): Promise<void>;
  /** Uses new credentials (a rotated client certificate) for the requests that follow. */
  reload(conn: Connection): void;
  /** Reflectors ask for their lists as watches' initial events (client-go's WatchListClient gate; src/apiserver/reflector.ts). */
  readonly watchList?: boolean;
}

/**
 * How long a watch may be silent before its connection is suspected dead (packets dropped, no
 * reset), which TCP would take minutes to notice. Upstream's client asks with HTTP/2 pings
 * (ReadIdleTimeout 30 s, PingTimeout 15 s); so does this one over HTTP/2, where a quiet watch is
 * not a dead one: the cacher sends its minutely bookmark only once the resource's version passed
 * the watch's, so the watch of an object nobody changes (a namespace's kube-root-ca.crt, the
 * CSIDrivers) hears nothing for its whole 5-10 minutes. Over HTTP/1.1, with no ping to ask, the
 * silent watch is ended (and renewed by its reflector).
 */
const WATCH_IDLE_MS = 90_000;

/**
 * Over HTTP/1.1 (a server without h2), the connections for requests (watches have their own). Without a bound, a burst of 100 pods'
 * token requests and status patches opened 100 TLS connections at once, each a handshake and
 * a client certificate for the kubelet's loop and the apiserver (profile of 2026-11-27);
 * upstream's client multiplexes everything over one HTTP/2 connection.
 */
const REQUEST_SOCKETS = 16;

/** A request's outcome, for upstream's rest_client_requests_total: the HTTP code, or '<error>' when none came. */
export type RequestObserver = (method: string, code: string, host: string) => void;

/**
 * A request's whole span, for client-go's rest_client_request_duration_seconds and _request_size_bytes /
 * _response_size_bytes (Request.request observes them; watches go through Request.Watch, which does not):
 * seconds from the call to the body read or the failure; the body sent (0 without one), once it was
 * sent; the body received, once it was read in full.
 */
export type RequestTimer = (verb: string, host: string, seconds: number, size: { request?: number; response?: number }) => void;

/** The media types kubelet-ts speaks to the apiserver (its contentType setting, upstream's --kube-api-content-type). */
export const JSON_CONTENT_TYPE = 'application/json';
export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';
export type ContentType = typeof JSON_CONTENT_TYPE | typeof PROTOBUF_CONTENT_TYPE;

/** A request, over either protocol: a watch (stream) is bounded by silence alone, anything else as a whole too. */
interface Outgoing {
  method: string;
  fullPath: string;
  headers: Record<string, string>;
  data: Buffer | undefined;
  stream: boolean;
  signal: AbortSignal | undefined;
}

/** An answer, over either protocol: its code and headers once they came, and its body to read. */
interface Answer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

const isProtobuf = (res: Answer) => (res.headers['content-type'] ?? '').startsWith(PROTOBUF_CONTENT_TYPE);

export function apiClient(
  conn: Connection,
  opts: {
    timeoutMs?: number;
    watchIdleMs?: number;
    userAgent?: string;
    observe?: RequestObserver;
    time?: RequestTimer;
    /**
     * protobuf: as upstream's kubelet with contentType protobuf (rest.Config ContentType, and
     * AcceptContentTypes "protobuf,json"), built-in types are asked for and sent in protobuf; the
     * others (CRDs), PATCH and DELETE bodies stay JSON. Default JSON.
     */
    contentType?: ContentType;
    /**
     * The ClientsAllowCARotation gate on: the connection's CA file is read again at a request
     * everyMs (5 min) or more after the last look, each look counted (src/apiserver/ca-reload.ts).
     */
    caRotation?: { everyMs: number; observe(r: CAReload): void; log: Logger };
    /** The WatchListClient gate (ApiClient.watchList). */
    watchList?: boolean;
    /** KubeletConfiguration `tracing`: otelhttp's client span a request (tracing.WrapperFor). */
    tracer?: Tracer;
    /** Counts an exec credential plugin's calls and certificates (client-go's exec metrics). */
    execObserver?: ExecObserver;
  } = {},
): ApiClient {
  const tracer = opts.tracer ?? NO_TRACER;
  // The schema of the built-in types (proto/k8s/schema.json) is read on the first protobuf request.
  const codec = opts.contentType === PROTOBUF_CONTENT_TYPE ? protobufCodec : undefined;
  /** Whether the apiserver is asked for protobuf at path: a built-in group kubelet-ts has the types of. */
  const protobufAt = (path: string) => codec?.protobufPath(path) ?? false;
  /** The body on the wire and its media type: protobuf for a create or an update of a built-in type. */
  const encode = (method: string, path: string, body: unknown, contentType: string | undefined) => {
    if (body === undefined) return undefined;
    if (!contentType && (method === 'POST' || method === 'PUT') && protobufAt(path)) {
      const pb = codec?.encodeObject(body);
      if (pb) return { data: pb, type: PROTOBUF_CONTENT_TYPE };
    }
    return { data: Buffer.from(JSON.stringify(body)), type: contentType ?? JSON_CONTENT_TYPE };
  };
  /** A response body as the JSON path has it, whichever of the two the apiserver chose. */
  const decode = (res: Answer, data: Buffer): unknown => {
    if (!data.length) return undefined;
    if (codec && isProtobuf(res)) return codec.decodeObject(data);
    return JSON.parse(data.toString('utf8'));
  };
  const url = new URL(conn.server);
  const tls = url.protocol === 'https:';
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const watchIdleMs = opts.watchIdleMs ?? WATCH_IDLE_MS;
  let agents: { requests: Agent; streams: Agent } | undefined;
  let sessions: Sessions | undefined;
  let headers: Record<string, string> = {};
  let current = conn;
  let caLookedAt = performance.now();
  // An exec plugin's credentials: asked for before each request (cached until they expire), the
  // connection made again with them when they change (client-go's exec round tripper).
  const execOf = (c: Connection) => (c.exec ? { plugin: new ExecCredentials(c.exec, opts.execObserver) } : undefined);
  let exec: { plugin: ExecCredentials; using?: ExecCredential } | undefined = execOf(conn);
  function use(c: Connection) {
    if (c.exec !== current.exec) exec = execOf(c);
    withCredentials(c);
  }
  function withCredentials(c: Connection) {
    const old = agents;
    current = c;
    if (tls) {
      // One TLS context for every connection: given ca, cert and key, each connection would
      // parse them again.
      const o = {
        keepAlive: true,
        secureContext: createSecureContext({ ca: c.ca, cert: c.cert, key: c.key }),
        rejectUnauthorized: !c.insecureSkipTLSVerify,
        servername: c.tlsServerName,
      };
      agents = { requests: new Agent({ ...o, maxSockets: REQUEST_SOCKETS }), streams: new Agent(o) };
      const sessionTls = { secureContext: o.secureContext, rejectUnauthorized: o.rejectUnauthorized, servername: o.servername };
      if (sessions) sessions.reset(sessionTls);
      else sessions = apiserverSessions(url, sessionTls);
    }
    headers = {
      'user-agent': opts.userAgent ?? 'kubelet-ts',
      ...(c.token ? { authorization: `Bearer ${c.token}` } : {}),
    };
    // Requests in flight (and watches, which the reflector renews within 10 min) finish on
    // the old connections; then they go.
    if (old)
      setTimeout(() => {
        old.requests.destroy();
        old.streams.destroy();
      }, 600_000).unref();
  }
  withCredentials(conn);

  /** The exec plugin's credentials in use, asked for again when they expired; the connection's own without a plugin. */
  async function execCredentials(): Promise<ExecCredential | undefined> {
    if (!exec) return undefined;
    const cred = await exec.plugin.get();
    if (cred !== exec.using) {
      exec.using = cred;
      withCredentials({ ...current, token: cred.token, cert: cred.cert, key: cred.key });
    }
    return cred;
  }

  // client-go's atomicTransportHolder.getTransport: the new CA for the connections that follow;
  // those open finish on the old one (use's old agents), where upstream closes its idle ones.
  function lookAtCA() {
    const r = opts.caRotation;
    if (!r || !tls || !current.caFile || performance.now() - caLookedAt < r.everyMs) return;
    caLookedAt = performance.now();
    let read: Buffer | Error;
    try {
      read = readFileSync(current.caFile);
    } catch (e) {
      read = e as Error;
    }
    const out = caReload(current.ca, read);
    r.observe(out);
    if (out.result === 'failure')
      r.log.error('Failed to reload the CA file, the CA in use stays', {
        caFile: current.caFile,
        reason: out.reason,
        ...(read instanceof Error ? { err: read } : {}),
      });
    else if (out.reason === 'updated') {
      r.log.info('CA content changed, updating transport', { caFile: current.caFile });
      withCredentials({ ...current, ca: read as Buffer });
    }
  }

  /**
   * One request, over the HTTP/2 session when the server speaks it (TLS with ALPN h2, as the
   * apiserver does), else over HTTP/1.1: the answer once its headers came, a code of 300 or more
   * read and rejected as an ApiError, a failure to reach the server as one with status 0.
   */
  async function send(
    method: string,
    path: string,
    body: unknown,
    contentType: string | undefined,
    stream: boolean,
    signal?: AbortSignal,
    size?: { request?: number; response?: number },
  ): Promise<Answer> {
    lookAtCA();
    let cred: ExecCredential | undefined;
    try {
      cred = await execCredentials();
    } catch (e) {
      throw new ApiError(0, 'Unauthorized', `${method} ${path}: getting credentials: ${(e as Error).message}`);
    }
    const encoded = encode(method, path, body, contentType);
    const data = encoded?.data;
    if (size) size.request = data?.length ?? 0;
    const fullPath = url.pathname.replace(/\/$/, '') + path;
    const unreachable = (e: Error) => {
      opts.observe?.(method, '<error>', url.host);
      return new ApiError(0, 'Unreachable', `${method} ${path}: ${e.message}`);
    };
    let session: Session | undefined;
    try {
      session = await sessions?.get();
    } catch (e) {
      throw unreachable(e as Error);
    }
    // otelhttp's Transport: a client span a request, ended with its body; its traceparent sent.
    const span = tracer.startClient(`HTTP ${method}`, () => ({
      'http.request.method': method,
      'url.full': `${url.origin}${fullPath}`,
      'server.address': url.hostname,
      'server.port': Number(url.port || (tls ? 443 : 80)),
      'network.protocol.version': session ? '2' : '1.1',
    }));
    const h = {
      ...headers,
      accept: protobufAt(path) ? `${PROTOBUF_CONTENT_TYPE}, ${JSON_CONTENT_TYPE}` : JSON_CONTENT_TYPE,
      ...(encoded ? { 'content-type': encoded.type, 'content-length': String(encoded.data.length) } : {}),
      ...(span.traceparent ? { traceparent: span.traceparent } : {}),
    };
    let res: Answer;
    try {
      const out: Outgoing = { method, fullPath, headers: h, data, stream, signal };
      res = await (session ? overH2(session, out) : overH1(out));
    } catch (e) {
      span.fail((e as Error).message, false);
      span.end();
      throw unreachable(e as Error);
    }
    if (span.recording) {
      const code = res.statusCode;
      span.setAttributes({ 'http.response.status_code': code, ...(code >= 400 ? { 'error.type': String(code) } : {}) });
      if (code >= 400) span.fail('', false);
      res.body.once('close', () => span.end());
    }
    opts.observe?.(method, String(res.statusCode), url.host);
    if (res.statusCode < 300) return res;
    // maybeRefreshCreds: the plugin runs again for the next request, unless it already has.
    if (res.statusCode === 401 && cred && exec)
      exec.plugin.unauthorized(cred).catch((e: unknown) => opts.execObserver?.refreshFailed?.(e as Error));
    const raw = await readAll(res.body).catch(() => Buffer.alloc(0));
    if (size) size.response = raw.length;
    const text = raw.toString('utf8');
    let status: { reason?: string; message?: string } = {};
    // A proxy may answer with anything, even JSON null: only an object is a Status.
    try {
      const parsed = decode(res, raw);
      if (parsed && typeof parsed === 'object') status = parsed;
    } catch {
      /* not a Status object */
    }
    throw new ApiError(
      res.statusCode,
      status.reason ?? String(res.statusCode),
      `${method} ${path}: ${res.statusCode} ${status.message ?? text.slice(0, 200)}`,
    );
  }

  /**
   * A stream of the session; a silent one has the session asked for a ping (no answer: the session
   * and its streams go). A silent request is destroyed too; a silent watch stays, and is asked
   * about again after its next silence (WATCH_IDLE_MS).
   */
  function overH2(session: Session, { method, fullPath, headers, data, stream, signal }: Outgoing): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = session.request({ ':method': method, ':path': fullPath, ...headers }, data !== undefined, signal);
      const silent = () => {
        session.suspect();
        // node:http2 arms a stream's timeout listener once: set again for the next silence.
        if (stream) req.setTimeout(watchIdleMs, silent);
        else req.destroy(new Error(`timed out after ${timeoutMs} ms`));
      };
      req.setTimeout(stream ? watchIdleMs : timeoutMs, silent);
      // Bounded as a whole too, as over HTTP/1.1 below.
      if (!stream) {
        const deadline = setTimeout(() => req.destroy(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
        req.once('close', () => clearTimeout(deadline));
      }
      let answered = false;
      req.once('response', (rh) => {
        answered = true;
        resolve({ statusCode: Number(rh[':status'] ?? 0), headers: rh, body: req });
      });
      req.on('error', (e) => {
        if (!answered) reject(e);
      });
      // A session that dies (a killed apiserver) closes its streams with CANCEL and no error
      // event: unanswered, the caller would wait for good (a reflector's watch never renewed).
      req.once('close', () => {
        if (!answered) reject(new Error(`stream closed before an answer (HTTP/2 code ${req.rstCode})`));
      });
      if (data !== undefined) req.end(data);
    });
  }

  function overH1({ method, fullPath, headers, data, stream, signal }: Outgoing): Promise<Answer> {
    const req = (tls ? httpsRequest : httpRequest)({
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port,
      path: fullPath,
      method,
      headers,
      agent: stream ? agents?.streams : agents?.requests,
      signal,
      timeout: stream ? watchIdleMs : timeoutMs,
    });
    return new Promise((resolve, reject) => {
      // Destroyed with the reason, so that a watch's reader (after the headers) sees it too.
      let response: IncomingMessage | undefined;
      req.on('timeout', () =>
        (response ?? req).destroy(new Error(stream ? `silent for ${watchIdleMs} ms` : `timed out after ${timeoutMs} ms`)),
      );
      // The socket timeout above fires only on silence: a request is also bounded as a whole, so
      // that a server that answers slowly forever cannot hold a caller (and what it serializes,
      // a mirror pod's reconcile, a status patch) for good. Watches are bounded by the reflector.
      if (!stream) {
        const deadline = setTimeout(() => (response ?? req).destroy(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
        req.once('close', () => clearTimeout(deadline));
      }
      req.on('error', (e) => {
        if (!response) reject(e);
      });
      req.once('response', (res) => {
        response = res;
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      req.end(data);
    });
  }

  async function json<T>(method: string, path: string, body?: unknown, contentType?: string): Promise<T> {
    const started = performance.now();
    const size: { request?: number; response?: number } = {};
    try {
      const res = await send(method, path, body, contentType, false, undefined, size);
      let data: Buffer;
      try {
        data = await readAll(res.body);
      } catch (e) {
        // The body cut short, by the deadline or the server.
        throw new ApiError(0, 'Unreachable', `${method} ${path}: ${(e as Error).message}`);
      }
      size.response = data.length;
      return decode(res, data) as T;
    } finally {
      opts.time?.(method, url.host, (performance.now() - started) / 1000, size);
    }
  }

  return {
    get: (p) => json('GET', p),
    create: (p, b) => json('POST', p, b),
    replace: (p, b) => json('PUT', p, b),
    patch: (p, b, t) => json('PATCH', p, b, patchContentType[t]),
    delete: (p, b) => json('DELETE', p, b),
    reload: use,
    watchList: opts.watchList ?? false,
    async watch<T>(path: string, onEvent: (e: WatchEvent<T>) => void, signal?: AbortSignal) {
      const deliver = (ev: WatchEvent<T>) => {
        if (ev.type === 'ERROR') {
          const st = ev.object as { code?: number; reason?: string; message?: string };
          throw new ApiError(st.code ?? 500, st.reason ?? 'WatchError', `watch ${path}: ${st.message ?? 'error'}`);
        }
        onEvent(ev);
      };
      try {
        // An abort before the answer's headers ends the watch as one after them does.
        const res = await send('GET', path, undefined, undefined, true, signal);
        if (codec && isProtobuf(res)) {
          // application/vnd.kubernetes.protobuf;stream=watch: length-prefixed frames.
          const frames = codec.frameReader((f) => deliver(codec.decodeWatchEvent(f) as WatchEvent<T>));
          for await (const chunk of res.body) frames.push(chunk as Buffer);
          return;
        }
        let buf = '';
        res.body.setEncoding('utf8');
        for await (const chunk of res.body) {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (!line) continue;
            deliver(JSON.parse(line) as WatchEvent<T>);
          }
        }
      } catch (e) {
        if (signal?.aborted) return;
        throw e instanceof ApiError || e instanceof SyntaxError
          ? e
          : new ApiError(0, 'Unreachable', `watch ${path}: ${(e as Error).message}`);
      }
    },
  };
}

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  // An HTTP/2 stream reset mid-body (CANCEL, its session dead) ends as if it were whole: a body
  // cut short, as Go's transport says, not a truncated JSON to fail in the decoder.
  const reset = (body as { rstCode?: number }).rstCode;
  if (reset) throw new Error(`stream reset before the body's end (HTTP/2 code ${reset})`);
  return Buffer.concat(chunks);
}
