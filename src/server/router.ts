// The little of express the kubelet's API used, over node:http: routes by method and path
// (params, regexps), middleware, one error handler, and plain replies. express with its body
// parsers, qs, mime-db and router cost ~6 MB of resident memory (docs/benchmarks.md); this
// keeps its behaviour where a client can see it (HEAD as GET, optional trailing slash,
// case-sensitive paths, a param that is not valid percent-encoding a 400 error).
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { parse as parseQuery, type ParsedUrlQuery } from 'node:querystring';

// node:http by getBuiltinModule, not import: its ESM facade reads every export, and the lazy
// WebSocket one loads undici (src/apiserver/client.ts says more).
const { STATUS_CODES } = process.getBuiltinModule('node:http');

export interface Request extends IncomingMessage {
  url: string;
  method: string;
  /** The path of the request target, still percent-encoded. */
  path: string;
  /** The query string, parsed as node's querystring (express's "simple" parser). */
  query: ParsedUrlQuery;
  /** The route's params, decoded. */
  params: Record<string, string>;
  /** The path template of the route that answers, as registered ('/healthz/:check'). */
  route?: string;
}
export type Response = ServerResponse<IncomingMessage>;
export type Next = (err?: unknown) => void;
export type Handler = (req: Request, res: Response, next: Next) => unknown;
export type ErrorHandler = (err: unknown, req: Request, res: Response) => void;

interface Layer {
  /** undefined: any method. */
  method?: string;
  /** undefined: any path (middleware). */
  pattern?: RegExp;
  /** The names of pattern's groups, in order. */
  keys: string[];
  /** The path as registered, when it is a template (not a RegExp). */
  route?: string;
  handler: Handler;
}

const escapeRegExp = (s: string) => s.replace(/[.+*?^${}()[\]|/\\]/g, '\\$&');

/** express 5's matching of '/a/:b/': params are one segment, one trailing slash is optional. */
function compile(path: string | RegExp): { pattern: RegExp; keys: string[]; route?: string } {
  if (path instanceof RegExp) return { pattern: path, keys: [] };
  const keys: string[] = [];
  const source = path.replace(/\/+$/, '').replace(/:(\w+)|[^:]+/g, (m, key: string | undefined) => {
    if (key === undefined) return escapeRegExp(m);
    keys.push(key);
    return '([^/]+)';
  });
  return { pattern: new RegExp(`^(?:${source})(?:/$)?$`), keys, route: path };
}

function decodeParam(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw Object.assign(new URIError(`Failed to decode param '${value}'`), { status: 400 });
  }
}

/** parseurl's split of a request target (an absolute URI gives its path) into path and query. */
function splitTarget(url: string): { path: string; search: string } {
  if (url.startsWith('/') && !/[\t\n\f\r #\u00a0\ufeff]/.test(url)) {
    const at = url.indexOf('?');
    return at < 0 ? { path: url, search: '' } : { path: url.slice(0, at), search: url.slice(at + 1) };
  }
  try {
    const u = new URL(url, 'http://kubelet');
    return { path: u.pathname, search: u.search.slice(1) };
  } catch {
    return { path: url, search: '' };
  }
}

export class Router {
  readonly #layers: Layer[] = [];
  #onError: ErrorHandler = (_err, _req, res) => void reply(res, 500, 'text/plain', 'Internal Server Error\n');

  /** GET, and HEAD answered as GET without its body. */
  get(path: string | RegExp, handler: Handler): void {
    this.#layers.push({ method: 'GET', ...compile(path), handler });
  }
  post(path: string | RegExp, handler: Handler): void {
    this.#layers.push({ method: 'POST', ...compile(path), handler });
  }
  all(path: string | RegExp, handler: Handler): void {
    this.#layers.push({ ...compile(path), handler });
  }
  use(handler: Handler): void {
    this.#layers.push({ keys: [], handler });
  }
  /** What a thrown error or a rejected handler comes to. */
  onError(handler: ErrorHandler): void {
    this.#onError = handler;
  }

  /** The listener for node:http's or node:https's createServer. */
  listener(): RequestListener {
    return (incoming, res) => {
      const req = incoming as Request;
      const { path, search } = splitTarget(req.url);
      req.path = path;
      req.query = parseQuery(search);
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      let i = 0;
      const fail = (err: unknown) => {
        try {
          this.#onError(err, req, res);
        } catch {
          res.destroy();
        }
      };
      const next: Next = (err) => {
        if (err !== undefined) return fail(err);
        for (; i < this.#layers.length; ) {
          const layer = this.#layers[i++]!;
          const match = layer.pattern ? layer.pattern.exec(path) : undefined;
          if (layer.pattern && !match) continue;
          try {
            // As express, a param that does not decode fails the request even when the method differs.
            const params: Record<string, string> = {};
            if (match) for (let k = 1; k < match.length; k++) params[layer.keys[k - 1] ?? k - 1] = decodeParam(match[k] ?? '');
            if (layer.method !== undefined && layer.method !== method) continue;
            req.params = params;
            if (layer.route !== undefined) req.route = layer.route;
            const r = layer.handler(req, res, next);
            if (r instanceof Promise) r.catch(fail);
          } catch (e) {
            fail(e);
          }
          return;
        }
      };
      next();
    };
  }
}

// mime-types' contentType for the types the kubelet answers with: text and JSON are UTF-8.
const withCharset = (type: string) =>
  type.includes('charset') || !(type.startsWith('text/') || type === 'application/json') ? type : `${type}; charset=utf-8`;

/** The whole answer at once, with its length; a HEAD gets the headers alone. */
export function reply(res: Response, status: number, type: string, body: string | Buffer): void {
  const data = typeof body === 'string' ? Buffer.from(body) : body;
  res.statusCode = status;
  res.setHeader('Content-Type', withCharset(type));
  res.setHeader('Content-Length', data.length);
  if (res.req.method === 'HEAD') res.end();
  else res.end(data);
}

export const replyJSON = (res: Response, value: unknown) => reply(res, 200, 'application/json', JSON.stringify(value));

/** Starts an answer to be streamed: its status and content type. */
export function startReply(res: Response, status: number, type: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', withCharset(type));
}

// encodeurl's: escapes what may not appear in a URL, keeping the escapes already there.
const UNSAFE = /(?:[^\x21\x23-\x3B\x3D\x3F-\x5F\x61-\x7A\x7C\x7E]|%(?:[^0-9A-Fa-f]|[0-9A-Fa-f][^0-9A-Fa-f]|$))+/g;
const LONE_SURROGATE = /(^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]|[\uD800-\uDBFF]([^\uDC00-\uDFFF]|$)/g;

interface Range {
  type: string;
  subtype: string;
  q: number;
  /** Its place in the header. */
  o: number;
}

/** An Accept header's media ranges as negotiator reads them; a range with parameters other than q matches neither of ours. */
function acceptRanges(accept: string): Range[] {
  return accept.split(',').flatMap((part, o) => {
    const [range = '', ...params] = part.split(';').map((p) => p.trim());
    const [type, subtype] = range.toLowerCase().split('/');
    if (!type || !subtype) return [];
    const q = params[0]?.toLowerCase().startsWith('q=') ? Number.parseFloat(params[0].slice(2)) : params.length ? 0 : 1;
    return [{ type, subtype, q, o }];
  });
}

/** express's choice (negotiator's) between a text and an HTML redirect body; undefined: neither is acceptable. */
function redirectFormat(accept: string | undefined): 'text' | 'html' | undefined {
  const ranges = acceptRanges(accept || '*/*');
  const offers = (['plain', 'html'] as const).map((subtype, i) => {
    let best = { s: 0, q: 0, o: -1, i };
    for (const r of ranges) {
      if ((r.type !== 'text' && r.type !== '*') || (r.subtype !== subtype && r.subtype !== '*')) continue;
      const s = (r.type === 'text' ? 4 : 0) | (r.subtype === subtype ? 2 : 0);
      if ((best.s - s || best.q - r.q || best.o - r.o) < 0) best = { s, q: r.q, o: r.o, i };
    }
    return best;
  });
  const [first] = offers.filter((o) => o.q > 0).sort((a, b) => b.q - a.q || b.s - a.s || a.o - b.o || a.i - b.i);
  return first && (first.i === 0 ? 'text' : 'html');
}

const escapeHTML = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A redirect as express writes it: the Location escaped, a short body in text or HTML. */
export function redirect(res: Response, status: number, location: string): void {
  const url = location.replace(LONE_SURROGATE, '$1\uFFFD$2').replace(UNSAFE, encodeURI);
  const message = `${STATUS_CODES[status]}. Redirecting to`;
  res.setHeader('Location', url);
  res.setHeader('Vary', 'Accept');
  const format = redirectFormat(res.req.headers.accept);
  if (format === 'html')
    reply(
      res,
      status,
      'text/html',
      `<!DOCTYPE html><head><title>${STATUS_CODES[status]}</title></head><body><p>${message} ${escapeHTML(url)}</p></body>`,
    );
  else if (format === 'text') reply(res, status, 'text/plain', `${message} ${url}`);
  else {
    res.statusCode = status;
    res.setHeader('Content-Length', 0);
    res.end();
  }
}
