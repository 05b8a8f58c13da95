// GET /logs/ in query mode (NodeLogQuery with enableSystemLogQuery): upstream's logServer of
// Kubelet.Run and its journalServer (pkg/kubelet/kubelet_server_journal.go). A request with
// query parameters is parsed (400) and validated (406); services are read from the journal
// with journalctl, or from /var/log when the journal does not know them; one file is served
// as the file server serves it; a request without them is the file server's.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { Writable } from 'node:stream';
import { constants, createGzip } from 'node:zlib';
import {
  aggregate,
  hasOptions,
  journalctlArgs,
  type NodeLogQuery,
  optionsForFilesMessage,
  parseNodeLogQuery,
  serviceLogFiles,
  splitLoggers,
  validateNodeLogQuery,
} from './node-log-query.ts';
import { type Handler, reply } from './router.ts';
import { logPath, relPath, serveLogFile } from './system-logs.ts';

/** The journal as the query mode reads it: journalctl in production, a fake in tests. */
export interface Journal {
  /** `journalctl --field _SYSTEMD_UNIT`, its output and errors together; undefined when it failed. */
  units(signal: AbortSignal): Promise<string | undefined>;
  /**
   * journalctl with args, its output and errors written to out: 'exited' once it ran (whatever
   * its status, as upstream ignores an ExitError), 'unavailable' when it could not start.
   */
  read(args: string[], out: Writable, signal: AbortSignal): Promise<'exited' | 'unavailable'>;
}

/** Upstream's deadline for one query, journal and files together (nodeLogQuery.Copy). */
export const QUERY_TIMEOUT_MS = 30_000;

/** Writes unless the reader is gone, waiting while it is slow. */
async function write(out: Writable, chunk: string | Buffer, signal: AbortSignal): Promise<void> {
  if (out.destroyed || out.writableEnded) return;
  if (!out.write(chunk)) await once(out, 'drain', { signal }).catch(() => undefined);
}

/** The journal of this host, read with the journalctl binary (upstream exec.CommandContext: killed at the deadline). */
export function journalctl(bin = 'journalctl'): Journal {
  const run = (args: string[], signal: AbortSignal, sink: (chunk: Buffer, from: NodeJS.ReadableStream) => void) =>
    new Promise<'exited' | 'unavailable' | { code: number | null }>((resolve) => {
      if (signal.aborted) return resolve('unavailable');
      const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let started = false;
      const kill = () => child.kill('SIGKILL');
      signal.addEventListener('abort', kill, { once: true });
      const settle = (r: 'unavailable' | { code: number | null }) => {
        signal.removeEventListener('abort', kill);
        resolve(r);
      };
      child.once('spawn', () => {
        started = true;
      });
      // Go shares one writer between Stdout and Stderr; two pipes keep each in order.
      for (const s of [child.stdout, child.stderr]) s.on('data', (c: Buffer) => sink(c, s));
      child.once('error', () => {
        if (!started) settle('unavailable');
      });
      child.once('close', (code) => settle({ code }));
    });
  return {
    async units(signal) {
      const chunks: Buffer[] = [];
      const r = await run(['--field', '_SYSTEMD_UNIT'], signal, (c) => chunks.push(c));
      return typeof r === 'object' && r.code === 0 ? Buffer.concat(chunks).toString() : undefined;
    },
    async read(args, out, signal) {
      const r = await run(args, signal, (c, from) => {
        if (out.destroyed || out.writableEnded) return;
        if (!out.write(c)) {
          from.pause();
          out.once('drain', () => from.resume());
        }
      });
      return r === 'unavailable' ? r : 'exited';
    },
  };
}

type Found = { path: string; dir: boolean } | { error: string; notExist: boolean };

/**
 * rel under root as Go's os.Root finds it (upstream's validate uses root.Stat, the file
 * heuristics os.OpenInRoot): an absolute path, a ".." or a symlink that leads out is
 * "path escapes from parent"; errors read "OP REL: reason".
 */
export async function findInLogDir(root: string, rel: string, op: 'statat' | 'openat'): Promise<Found> {
  const fail = (reason: string, notExist = false): Found => ({ error: `${op} ${rel}: ${reason}`, notExist });
  if (rel === '') return fail('empty path');
  const normal = posix.normalize(rel);
  if (rel.startsWith('/') || normal === '..' || normal.startsWith('../')) return fail('path escapes from parent');
  let real: string;
  try {
    real = await realpath(join(root, rel));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return fail('no such file or directory', true);
    if (code === 'ENOTDIR') return fail('not a directory');
    if (code === 'EACCES') return fail('permission denied');
    if (code === 'ELOOP') return fail('too many levels of symbolic links');
    return fail((e as Error).message);
  }
  const base = await realpath(root).catch(() => root);
  if (real !== base && !real.startsWith(`${base}/`)) return fail('path escapes from parent');
  const st = await stat(real).catch(() => undefined);
  if (!st) return fail('no such file or directory', true);
  return { path: real, dir: st.isDirectory() };
}

/** Upstream's heuristicsCopyFileLog: undefined once copied, or why not (a directory counts as not there). */
async function copyLogFile(root: string, name: string, out: Writable, signal: AbortSignal): Promise<Found | undefined> {
  const f = await findInLogDir(root, name, 'openat');
  if ('error' in f) return f;
  if (f.dir) return { error: 'file does not exist', notExist: true };
  try {
    for await (const chunk of createReadStream(f.path, { signal })) await write(out, chunk as Buffer, signal);
  } catch (e) {
    const reason = signal.aborted ? 'context deadline exceeded' : (e as Error).message;
    return { error: reason, notExist: false };
  }
  return undefined;
}

/** Upstream's heuristicsCopyFileLogs: /var/log/S, S.log, then S/S.log, the first found. */
async function copyServiceFileLog(root: string, service: string, out: Writable, signal: AbortSignal): Promise<void> {
  let last: Found | undefined;
  for (const name of serviceLogFiles(service)) {
    last = await copyLogFile(root, name, out, signal);
    if (!last || !('notExist' in last) || !last.notExist) break;
  }
  if (last && 'error' in last)
    await write(out, last.notExist ? `\nlog not found for ${service}\n` : `\nerror getting log for ${service}: ${last.error}\n`, signal);
}

/**
 * Upstream's nodeLogQuery.Copy and copyForBoot: services the journal knows through journalctl,
 * the others from files under root; what went wrong is written into the output, as upstream's.
 */
export async function copyNodeLogs(q: NodeLogQuery, out: Writable, deps: { root: string; journal: Journal }, signal: AbortSignal) {
  if (signal.aborted) return;
  // Upstream asks journalctl once per service for the same list; once serves them all.
  const units = q.services.length > 0 ? await deps.journal.units(signal) : undefined;
  const split = splitLoggers(q.services, units);
  if (split.journal.length > 0) {
    const r = await deps.journal.read(journalctlArgs(q, split.journal), out, signal);
    if (r === 'unavailable' && (q.boot ?? 0n) === 0n) await write(out, '\nerror: journal output not available\n', signal);
  }
  if (split.files.length > 0 && hasOptions(q)) return write(out, optionsForFilesMessage(split.files), signal);
  if (split.files.length === 0) return;
  if (signal.aborted) return write(out, '\ncontext error: context deadline exceeded\n', signal);
  for (const service of split.files) await copyServiceFileLog(deps.root, service, out, signal);
}

/**
 * Upstream's logServer with newNodeLogQuery (Kubelet.Run): the handler of GET /logs/... when
 * the query mode is on. Without query parameters it is the file server (serveLogFile).
 */
export function nodeLogQueryHandler(deps: { root: string; journal: Journal; timeoutMs?: number }, prefix = '/logs/'): Handler {
  return async (req, res, next) => {
    const text = (status: number, body: string) => reply(res, status, 'text/plain', body);
    const { query, errors } = parseNodeLogQuery(new URL(req.url, 'http://kubelet').searchParams);
    if (errors.length > 0) return text(400, `${aggregate(errors)}\n`);
    const p = logPath(req.path, prefix);
    if (!query) return 'status' in p ? text(p.status, p.message) : serveLogFile(deps.root, p.rel, req, res, next);
    if (!('rel' in p) || (p.rel !== '' && p.rel !== '/')) return text(406, 'path not allowed in query mode\n');

    const file = query.files.length === 1 ? query.files[0]! : undefined;
    const fileFound = file === undefined ? undefined : await findInLogDir(deps.root, file, 'statat');
    const invalid = validateNodeLogQuery(query, fileFound && 'error' in fileFound ? fileFound.error : undefined);
    if (invalid.length > 0) return text(406, `${aggregate(invalid)}\n`);

    if (query.services.length === 0) {
      // One file: what the file server answers for it.
      const r = relPath(file!);
      return 'status' in r ? text(r.status, r.message) : serveLogFile(deps.root, r.rel, req, res, next);
    }

    // Upstream's journalServer.ServeHTTP: streamed, gzipped only for exactly "Accept-Encoding: gzip".
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/plain;charset=UTF-8');
    let out: Writable = res;
    if (req.headers['accept-encoding'] === 'gzip') {
      res.setHeader('Content-Encoding', 'gzip');
      const gz = createGzip({ level: constants.Z_BEST_SPEED });
      gz.pipe(res);
      out = gz;
    }
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), deps.timeoutMs ?? QUERY_TIMEOUT_MS);
    const gone = () => deadline.abort();
    res.once('close', gone);
    try {
      await copyNodeLogs(query, out, deps, deadline.signal);
    } finally {
      clearTimeout(timer);
      res.off('close', gone);
      out.end();
    }
  };
}
