// exec, attach and port-forward: the apiserver upgrades a connection to the kubelet,
// which asks the runtime for a streaming URL (CRI Exec/Attach/PortForward) and splices
// the upgraded connection to it, bytes untouched: SPDY, and the older WebSocket protocols,
// are the runtime's streaming server's business. With ExtendWebSocketsToKubelet, a WebSocket
// v5 exec or attach and a tunnelled port-forward, which the runtime does not speak, are
// translated to its SPDY here (./stream-translator). Tokens are single-use, so every upgrade
// attempt asks the runtime again.
import { SpanKind } from '../tracing/span.ts';
import { NO_TRACER, type Tracer } from '../tracing/tracer.ts';
import { connect } from 'node:net';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { isWebSocketRequest, offeredProtocols } from './stream-translator/websocket.ts';
import { translateRemoteCommand, V5 } from './stream-translator/remotecommand.ts';
import { tunnelledProtocols, tunnelPortForward } from './stream-translator/tunnel.ts';
import { answer } from './stream-translator/answer.ts';
import type { Duplex } from 'node:stream';
import type { Logger } from '../log/log.ts';
import type { AccessCheck } from './auth-filter.ts';
import { status as grpc } from '@grpc/grpc-js';
import { CriError, goErrorText } from '../cri/error.ts';

export type StreamRequest =
  | {
      kind: 'exec' | 'attach';
      namespace: string;
      pod: string;
      uid?: string;
      container: string;
      command: string[];
      stdin: boolean;
      stdout: boolean;
      stderr: boolean;
      tty: boolean;
    }
  | { kind: 'portForward'; namespace: string; pod: string; uid?: string; ports: number[] };

const flag = (q: URLSearchParams, ...names: string[]) => names.some((n) => q.get(n) === '1' || q.get(n) === 'true');

/**
 * Pure: a request target's path (still escaped) and query, or undefined when it is not a URL.
 * A path is read as a path even when it starts with "//" (new URL would take a host from it).
 */
export function requestTarget(url: string): URL | undefined {
  return URL.parse(url.startsWith('/') ? `https://kubelet${url}` : url) ?? undefined;
}

const badRequest = (why: string) => ({ status: 400, message: `400 Bad Request: ${why}` });

/** Pure: upstream's streaming routes and query parameters, or a 400/404 answer. */
export function parseStreamRequest(url: string): StreamRequest | { status: number; message: string } {
  const u = requestTarget(url);
  if (!u) return badRequest('malformed request URI');
  let parts: string[];
  try {
    parts = u.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return badRequest('invalid URL escape');
  }
  const [kind, namespace, pod] = parts;
  const q = u.searchParams;
  if ((kind === 'exec' || kind === 'attach') && (parts.length === 4 || parts.length === 5)) {
    const container = parts.at(-1)!;
    const command = q.getAll('command');
    if (kind !== 'attach' && command.length === 0) return { status: 400, message: 'missing required parameter "command"' };
    return {
      kind,
      namespace: namespace!,
      pod: pod!,
      uid: parts.length === 5 ? parts[3] : undefined,
      container,
      command,
      stdin: flag(q, 'input', 'stdin'),
      stdout: flag(q, 'output', 'stdout'),
      stderr: flag(q, 'error', 'stderr'),
      tty: flag(q, 'tty'),
    };
  }
  if (kind === 'portForward' && (parts.length === 3 || parts.length === 4)) {
    const ports = q.getAll('port').map(Number);
    if (ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535))
      return { status: 400, message: `invalid port in ${JSON.stringify(q.getAll('port'))}` };
    return { kind: 'portForward', namespace: namespace!, pod: pod!, uid: parts[3], ports };
  }
  return { status: 404, message: '404 page not found\n' };
}

/** A refusal with its HTTP status, as upstream's handler writes it (its words in the message). */
export class StreamError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/**
 * Pure: the answer to a failed streaming request. A refusal as it says; anything else as
 * upstream's streaming.WriteError: the runtime's NotFound 404, ResourceExhausted 429, the rest
 * 500, the body the error as Go prints it ("rpc error: code = ... desc = ...").
 */
export function streamingError(e: unknown): { status: number; message: string } {
  if (e instanceof StreamError) return { status: e.status, message: e.message };
  const code = e instanceof CriError ? e.code : undefined;
  const status = code === grpc.NOT_FOUND ? 404 : code === grpc.RESOURCE_EXHAUSTED ? 429 : 500;
  return { status, message: goErrorText(e) };
}

/** The go-restful route upstream serves the request on: its server span's name (otelrestful). */
export function streamRoute(r: StreamRequest): string {
  const pod = '{podNamespace}/{podID}';
  if (r.kind === 'portForward') return `/portForward/${pod}${r.uid ? '/{uid}' : ''}`;
  return `/${r.kind}/${pod}${r.uid ? '/{uid}' : ''}/{containerName}`;
}

/** Pure: whether a request is upstream's to translate (ExtendWebSocketsToKubelet): its subresource, else undefined. */
export function translatedWebSocket(r: StreamRequest, headers: IncomingHttpHeaders): 'exec' | 'attach' | 'portforward' | undefined {
  if (!isWebSocketRequest(headers)) return undefined;
  const offered = offeredProtocols(headers);
  if (r.kind === 'portForward') return tunnelledProtocols(offered).length ? 'portforward' : undefined;
  return offered.includes(V5) ? r.kind : undefined;
}

/**
 * The https server's 'upgrade' listener. streamURL asks the runtime (throws StreamError for
 * 404s); webSockets, with ExtendWebSocketsToKubelet on, counts each WebSocket it translates.
 */
export function streamingUpgrade(
  check: AccessCheck,
  streamURL: (r: StreamRequest) => Promise<string>,
  log: Logger,
  tracer: Tracer = NO_TRACER,
  webSockets?: { count: (subresource: string) => void },
) {
  return async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    try {
      const requested = requestTarget(req.url ?? '/');
      if (!requested) return answer(socket, 400, '400 Bad Request: malformed request URI');
      const denied = await check(req, requested.pathname);
      if (denied) return answer(socket, denied.status, denied.message);
      const parsed = parseStreamRequest(req.url ?? '/');
      if ('status' in parsed) return answer(socket, parsed.status, parsed.message);
      // Served in a server span for its route, as upstream's restful route is: the runtime's
      // Exec, Attach or PortForward call is its child; it ends with the stream.
      const route = streamRoute(parsed);
      const header = req.headers.traceparent;
      await tracer.inSpan(
        route,
        { 'http.request.method': req.method ?? '', 'url.path': requested.pathname, 'http.route': route },
        async () => {
          const target = new URL(await streamURL(parsed));
          const translated = webSockets && translatedWebSocket(parsed, req.headers);
          if (translated) {
            webSockets.count(translated);
            if (parsed.kind === 'portForward') return await tunnelPortForward(req, socket, head, target);
            return await translateRemoteCommand(req, socket, head, target, parsed);
          }
          const upstream = connect(Number(target.port || 80), target.hostname);
          upstream.on('error', (e) => {
            log.warn('Streaming connection to the runtime failed', { url: target.origin, err: e });
            socket.destroy();
          });
          socket.on('close', () => upstream.destroy());
          upstream.on('close', () => socket.destroy());
          upstream.once('connect', () => {
            // The same request, re-addressed: the runtime's server negotiates the protocol.
            let head0 = `${req.method} ${target.pathname}${target.search} HTTP/1.1\r\n`;
            for (let i = 0; i < req.rawHeaders.length; i += 2) {
              const name = req.rawHeaders[i]!;
              head0 += `${name}: ${name.toLowerCase() === 'host' ? target.host : req.rawHeaders[i + 1]}\r\n`;
            }
            upstream.write(head0 + '\r\n');
            if (head.length) upstream.write(head);
            upstream.pipe(socket);
            socket.pipe(upstream);
          });
          await new Promise((closed) => socket.once('close', closed));
        },
        { kind: SpanKind.server, ...(typeof header === 'string' ? { remoteParent: header } : {}) },
      );
    } catch (e) {
      const { status, message } = streamingError(e);
      if (!(e instanceof StreamError)) log.error('Streaming request failed', { path: req.url, err: e });
      answer(socket, status, message);
    }
  };
}
