// /debug/pprof/ of the kubelet's API (upstream's InstallProfilingHandler over Go's
// net/http/pprof), for what a Node process has: the CPU profile, the heap profile, the command
// line. Go's profiles a Node process has no counterpart of (goroutine, block, mutex,
// threadcreate, allocs) and its trace and symbol get Go's answer to a profile it does not know.
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Logger } from '../../log/log.ts';
import type { Handler, Response } from '../router.ts';
import { cpuProfileToPprof, heapProfileToPprof } from './convert.ts';
import { encodeProfile } from './encode.ts';
import type { Profiler } from './profiler.ts';

const gzipAsync = promisify(gzip);

/** Go's CPU profiling rate: 100 Hz. */
const CPU_INTERVAL_MICROS = 10_000;
/** Go's runtime.MemProfileRate: a sample every 512 KiB allocated on average. */
export const HEAP_INTERVAL_BYTES = 512 * 1024;

const DESCRIPTIONS: [string, string][] = [
  ['cmdline', 'The command line invocation of the current program'],
  [
    'heap',
    'A sampling of memory allocations of live objects (V8 sampling heap profiler, one sample per 512 KiB allocated on average, since the first heap request).',
  ],
  [
    'profile',
    'CPU profile. You can specify the duration in the seconds GET parameter. After you get the profile file, use the go tool pprof command to investigate the profile.',
  ],
];

const escapeHTML = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' })[c]!);

/** Go's pprof.Index page, listing what kubelet-ts has. */
export function indexPage(): string {
  const rows = DESCRIPTIONS.map(([n]) => `<tr><td>0</td><td><a href='${n}?debug=1'>${escapeHTML(n)}</a></td></tr>\n`).join('');
  const descs = DESCRIPTIONS.map(([n, d]) => `<li><div class=profile-name>${escapeHTML(n)}: </div> ${escapeHTML(d)}</li>\n`).join('');
  return `<html>
<head>
<title>/debug/pprof/</title>
<style>
.profile-name{
\tdisplay:inline-block;
\twidth:6rem;
}
</style>
</head>
<body>
/debug/pprof/
<br>
<br>
Types of profiles available:
<table>
<thead><td>Count</td><td>Profile</td></thead>
${rows}</table>
<p>
Profile Descriptions:
<ul>
${descs}</ul>
</p>
</body>
</html>`;
}

/** Go's serveError: text with a newline, marked as pprof's. */
function serveError(res: Response, status: number, text: string): void {
  res.removeHeader('Content-Disposition');
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Go-Pprof': '1' });
  res.end(`${text}\n`);
}

/** Go's Profile handler's reading of seconds: not a positive integer, 30. */
export function profileSeconds(raw: unknown): number {
  const s = typeof raw === 'string' && /^[+-]?\d+$/.test(raw) ? Number(raw) : Number.NaN;
  return Number.isSafeInteger(s) && s > 0 ? s : 30;
}

async function sendProfile(res: Response, name: string, bytes: Uint8Array): Promise<void> {
  const body = await gzipAsync(bytes);
  res.writeHead(200, {
    'Content-Type': 'application/octet-stream',
    'Content-Disposition': `attachment; filename="${name}"`,
  });
  res.end(body);
}

export interface PprofDeps {
  profiler: Profiler;
  log: Logger;
  /** The command line, as Go's os.Args. */
  argv: string[];
}

/**
 * The handler of GET /debug/pprof/*. Heap sampling starts at the first heap request, not with the
 * kubelet: loading the inspector costs about 3 MB of resident memory, reserved on every node, for
 * a profile few nodes are ever asked for. That first profile holds the allocations since then
 * only; ask again for the live ones sampled in between (Go's runtime samples from its start).
 */
export function pprofHandler(deps: PprofDeps): Handler {
  const { profiler } = deps;
  return async (req, res) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const name = req.path.replace(/^\/debug\/pprof\/?/, '');
    if (name === '') return void res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(indexPage());
    if (name === 'cmdline') return void res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end(deps.argv.join('\0'));
    if (name === 'profile') {
      const seconds = profileSeconds(req.query.seconds);
      const startedNanos = Date.now() * 1e6;
      if (!(await profiler.startCpu(CPU_INTERVAL_MICROS)))
        return serveError(res, 500, 'Could not enable CPU profiling: cpu profiling already in use');
      // Go's sleep: the duration, or less if the client goes away.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, seconds * 1000);
        res.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      const profile = await profiler.stopCpu();
      if (res.destroyed) return;
      return sendProfile(res, 'profile', encodeProfile(cpuProfileToPprof(profile, CPU_INTERVAL_MICROS * 1000, startedNanos)));
    }
    if (name === 'heap') {
      if (req.query.seconds !== undefined) return serveError(res, 400, '"seconds" parameter is not supported for this profile type');
      await profiler.startHeapSampling(HEAP_INTERVAL_BYTES);
      const head = await profiler.heapProfile();
      if (!head) return serveError(res, 500, 'heap sampling is not running');
      return sendProfile(res, 'heap', encodeProfile(heapProfileToPprof(head, HEAP_INTERVAL_BYTES, Date.now() * 1e6)));
    }
    serveError(res, 404, 'Unknown profile');
  };
}
