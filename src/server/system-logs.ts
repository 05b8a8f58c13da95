// GET /logs/ and /logs/PATH: the node's log directory (/var/log) as upstream serves it
// with Go's http.FileServer: directories as an HTML list, files streamed (with ranges).
// Unlike Go's, nothing outside the directory is served: ".." is refused (400, as Go
// does) and so is a symlink that leads out (404).
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { type Handler, type Next, redirect, reply, type Request, type Response } from './router.ts';

const notFound = '404 page not found\n';

export type LogPath = { rel: string } | { status: 400; message: string };

/** Pure: the path under the log directory that a raw (still escaped) URL path asks for. */
export function logPath(urlPath: string, prefix = '/logs/'): LogPath {
  let rel: string;
  try {
    rel = decodeURIComponent(urlPath.slice(prefix.length));
  } catch {
    return { status: 400, message: 'invalid URL escape\n' };
  }
  return relPath(rel);
}

/** Pure: Go's FileServer refuses a path with a ".." element (containsDotDot) or a NUL. */
export function relPath(rel: string): LogPath {
  if (rel.includes('\0') || rel.split('/').includes('..')) return { status: 400, message: 'invalid URL path\n' };
  return { rel };
}

const escapeHTML = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' })[c]!);

/** Pure: Go's directory listing: names sorted, directories with a trailing slash. */
export function directoryListing(entries: { name: string; dir: boolean }[]): string {
  const rows = [...entries]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((e) => {
      const name = e.dir ? `${e.name}/` : e.name;
      return `<a href="${escapeHTML(encodeURIComponent(e.name) + (e.dir ? '/' : ''))}">${escapeHTML(name)}</a>\n`;
    });
  return `<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n${rows.join('')}</pre>\n`;
}

/** Pure: whether a file's first bytes look like text (Go's sniffing says text/plain for these). */
export function looksLikeText(head: Buffer): boolean {
  for (const b of head) if (b === 0 || (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c && b !== 0x1b)) return false;
  return true;
}

async function inside(root: string, path: string): Promise<string | undefined> {
  const [base, real] = await Promise.all([realpath(root), realpath(path).catch(() => undefined)]);
  return real !== undefined && (real === base || real.startsWith(`${base}/`)) ? real : undefined;
}

export function systemLogsHandler(root = '/var/log', prefix = '/logs/'): Handler {
  return (req, res, next) => {
    const p = logPath(req.path, prefix);
    if ('status' in p) return reply(res, p.status, 'text/plain', p.message);
    return serveLogFile(root, p.rel, req, res, next);
  };
}

/**
 * Go's http.FileServer(http.Dir(root)) answering for rel (decoded, checked by relPath): the
 * file server mode of /logs/, and a file query of the query mode (node-logs.ts).
 */
export async function serveLogFile(root: string, rel: string, req: Request, res: Response, next: Next): Promise<void> {
  const real = await inside(root, join(root, rel.replace(/\/+$/, '')));
  const st = real && (await stat(real).catch(() => undefined));
  if (!real || !st) return reply(res, 404, 'text/plain', notFound);
  // Go's FileServer redirects so that relative links in a listing resolve.
  const wantsDir = rel === '' || rel.endsWith('/');
  // Go's localRedirect keeps the query.
  const at = req.url.indexOf('?');
  const query = at >= 0 && at < req.url.length - 1 ? req.url.slice(at) : '';
  if (st.isDirectory() && !wantsDir) return redirect(res, 301, `${posix.basename(rel)}/${query}`);
  if (!st.isDirectory() && wantsDir) return redirect(res, 301, `../${posix.basename(rel.slice(0, -1))}${query}`);

  let file = real;
  if (st.isDirectory()) {
    const index = await inside(root, join(real, 'index.html'));
    if (!index) {
      const entries = await readdir(real, { withFileTypes: true });
      return reply(res, 200, 'text/html; charset=utf-8', directoryListing(entries.map((e) => ({ name: e.name, dir: e.isDirectory() }))));
    }
    file = index;
  }
  const head = Buffer.alloc(512);
  const fh = await open(file, 'r').catch(() => undefined);
  if (!fh) return reply(res, 404, 'text/plain', notFound);
  const { bytesRead } = await fh.read(head, 0, 512, 0).finally(() => fh.close());
  if (looksLikeText(head.subarray(0, bytesRead))) res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  // send (ranges, conditional requests, a type by extension) is loaded by the first file served.
  const { default: send } = await import('send');
  send(req, encodeURI(file), { dotfiles: 'allow', etag: false })
    .on('error', (err: NodeJS.ErrnoException) => {
      if (res.headersSent) return;
      if (err.code === 'ENOENT') reply(res, 404, 'text/plain', notFound);
      else next(err);
    })
    .pipe(res);
}
