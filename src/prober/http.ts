// The httpGet probe, as upstream's pkg/probe/http: GET with the probe's headers (plus
// User-Agent kube-probe/<minor> and Accept */* unless given), TLS without verification,
// redirects followed only on the same host; 2xx succeeds, 3xx not followed is a success with
// a warning, anything else fails. At most 10 KiB of the body is read, and only on success.
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Container, HTTPGetAction } from 'kubernetes-types/core/v1.js';
import { joinHostPort, resolveContainerPort } from './port.ts';
import { MAX_OUTPUT_BYTES, type Outcome } from './outcome.ts';
import { dialError } from './tcp.ts';

// node:http by getBuiltinModule, not import: its ESM facade reads every export, and the lazy
// WebSocket one loads undici, which only staticPodURL's fetch needs (docs/benchmarks.md).
const { request: httpRequest } = process.getBuiltinModule('node:http');

// upstream: "kube-probe/<major>.<minor>" of the kubelet's version.
export const PROBE_USER_AGENT = 'kube-probe/1.36';
/** Lifecycle hooks' User-Agent (NewRequestForHTTPGetAction with the "lifecycle" fragment). */
export const LIFECYCLE_USER_AGENT = 'kube-lifecycle/1.36';
const MAX_REDIRECTS = 10;
/** Go's http.Client error for an HTTPS request answered in plain HTTP. */
export const HTTP_RESPONSE_TO_HTTPS = 'http: server gave HTTP response to HTTPS client';

export interface ProbeRequest {
  url: string;
  headers: [string, string][];
}

/** Pure: the request an httpGet probe sends (host defaults to the pod IP; a named port is looked up). */
export function httpProbeRequest(
  g: HTTPGetAction,
  c: Pick<Container, 'ports'>,
  podIP: string | undefined,
  userAgent = PROBE_USER_AGENT,
): ProbeRequest | { error: string } {
  const scheme = (g.scheme || 'HTTP').toLowerCase();
  const host = g.host || podIP;
  const port = resolveContainerPort(g.port, c);
  if (typeof port !== 'number') return port;
  if (!host) return { error: 'the pod has no IP address yet' };
  const path = g.path ?? '';
  const url = `${scheme}://${joinHostPort(host, port)}${!path || path.startsWith('/') ? path : `/${path}`}`;
  const headers: [string, string][] = (g.httpHeaders ?? []).map((h) => [canonical(h.name), h.value]);
  const has = (n: string) => headers.some(([k]) => k === n);
  if (!has('User-Agent')) headers.push(['User-Agent', userAgent]);
  // An Accept header given empty removes it; none at all accepts everything.
  if (!has('Accept')) headers.push(['Accept', '*/*']);
  return { url, headers: headers.filter(([k, v]) => k !== 'Accept' || v !== '') };
}

/** Go's textproto.CanonicalMIMEHeaderKey: content-type -> Content-Type. */
const canonical = (name: string) =>
  /^[A-Za-z0-9-]+$/.test(name) ? name.toLowerCase().replace(/(^|-)([a-z])/g, (_, d: string, ch: string) => d + ch.toUpperCase()) : name;

export async function httpProbe(req: ProbeRequest, timeoutSeconds: number): Promise<Outcome> {
  const deadline = AbortSignal.timeout(timeoutSeconds * 1000);
  const r = await httpGet(req, deadline);
  if ('error' in r) return { result: 'failure', output: r.error };
  const { res } = r;
  const code = res.statusCode ?? 0;
  if (code >= 200 && code < 400) {
    const body = await readAtMost(res, MAX_OUTPUT_BYTES, deadline).catch(() => '');
    if (code >= 300) return { result: 'warning', output: `Probe terminated redirects, Response body: ${body}` };
    return { result: 'success', output: body };
  }
  // The body is not read (upstream keeps it out of the message, issue 99425).
  res.destroy();
  return { result: 'failure', output: `HTTP probe failed with statuscode: ${code}` };
}

/**
 * The GET of an httpGet probe or lifecycle hook (upstream's probe http client with
 * RedirectChecker(false)): redirects followed on the same host only, the last response
 * returned unread; a transport error as Go's http.Client words it.
 */
export async function httpGet(req: ProbeRequest, deadline: AbortSignal): Promise<{ res: IncomingMessage } | { error: string }> {
  let url = new URL(req.url);
  const first = url.hostname;
  for (let hops = 0; ; hops++) {
    let res: IncomingMessage;
    try {
      res = await get(url, req.headers, deadline);
    } catch (e) {
      // Go prints the URL as written (no "/" added to an empty path).
      const shown = hops === 0 ? req.url : url.href;
      return { error: `Get ${JSON.stringify(shown)}: ${goError(e as NodeJS.ErrnoException, url, deadline)}` };
    }
    const code = res.statusCode ?? 0;
    const location = res.headers.location;
    if (code >= 300 && code < 400 && location && [301, 302, 303, 307, 308].includes(code)) {
      const next = new URL(location, url);
      // Upstream follows redirects on the same host only; the last response answers otherwise.
      if (next.hostname === first) {
        res.destroy();
        if (hops + 1 >= MAX_REDIRECTS) return { error: `Get ${JSON.stringify(next.href)}: stopped after 10 redirects` };
        url = next;
        continue;
      }
    }
    return { res };
  }
}

function get(url: URL, headers: [string, string][], signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const https = url.protocol === 'https:';
    const host = headers.find(([k]) => k === 'Host')?.[1];
    const r = (https ? httpsRequest : httpRequest)(
      url,
      {
        method: 'GET',
        signal,
        agent: false,
        // A header may repeat: pass [name, value, name, value, ...] (then Node adds no Host of its own).
        headers: [...(host === undefined ? ['Host', url.host] : []), ...headers.flat()],
        // No verification, as upstream (InsecureSkipVerify); SNI from the URL's host unless it is an IP.
        ...(https ? { rejectUnauthorized: false, servername: isIP(url.hostname.replace(/^\[|\]$/g, '')) ? '' : url.hostname } : {}),
      },
      resolve,
    );
    r.once('error', reject);
    r.end();
  });
}

async function readAtMost(res: IncomingMessage, max: number, signal: AbortSignal): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      signal.throwIfAborted();
      chunks.push(chunk);
      n += chunk.length;
      if (n >= max) break;
    }
  } finally {
    res.destroy();
  }
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}

/** The error as Go's http.Client words it after `Get "url": `. */
function goError(e: NodeJS.ErrnoException, url: URL, deadline: AbortSignal): string {
  if (deadline.aborted || e.name === 'AbortError' || e.name === 'TimeoutError')
    return 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)';
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  if (e.syscall === 'connect' || ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT'].includes(e.code ?? ''))
    return `dial tcp ${joinHostPort(url.hostname.replace(/^\[|\]$/g, ''), Number(port))}: ${dialError(e)}`;
  if (e.code === 'ECONNRESET') return 'EOF';
  // OpenSSL's reading of a plain-HTTP answer to a TLS hello.
  if (url.protocol === 'https:' && /wrong version number|packet length too long|http request/i.test(e.message))
    return HTTP_RESPONSE_TO_HTTPS;
  return e.message;
}
