// Bad requests to :10250 (#18): malformed paths and queries, path traversal under /logs/ and
// /containerLogs, an oversized header, a slow client. Each gets a clear 4xx, nothing outside
// the log directory is served, and the requests around it are answered. Seeded and bounded.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { Registry } from 'prom-client';
import type { Logger } from '../log/log.ts';
import { HTTP_SETTINGS } from './http-settings.ts';
import { parseLogQuery } from './log-options.ts';
import { kubeletServer, type ServerDeps } from './server.ts';
import { parseStreamRequest } from './streaming.ts';
import { onlyCpuAndMemory } from './summary-query.ts';

const scratch = mkdtempSync(join(tmpdir(), 'bad-requests-'));
const varLog = join(scratch, 'var-log');
mkdirSync(join(varLog, 'pods'), { recursive: true });
writeFileSync(join(varLog, 'syslog'), 'booted\n');
writeFileSync(join(scratch, 'secret'), 'SECRET-OUTSIDE\n');
symlinkSync(join(scratch, 'secret'), join(varLog, 'link-out'));
symlinkSync(scratch, join(varLog, 'dir-out'));
const appLog = join(scratch, 'app.log');
writeFileSync(appLog, '2026-11-22T12:00:01Z stdout F hello\n');

const errors: unknown[] = [];
const log: Logger = { info() {}, v() {}, warn() {}, error: (m, f) => void errors.push({ m, ...f }) };
const pod: Pod = { metadata: { namespace: 'default', name: 'web', uid: 'u1' }, spec: { containers: [{ name: 'app' }] } };
const deps: ServerDeps = {
  nodeName: 'node-1',
  pods: () => [pod],
  containerLog: async (ns, name, container) =>
    ns === 'default' && name === 'web' && container === 'app' ? { path: appLog, running: () => false } : undefined,
  metrics: new Registry(),
  probeMetrics: new Registry(),
  stats: { summaryJSON: async () => '{}', cadvisorMetrics: async () => '', resourceMetrics: async () => '' },
  runningPods: async () => [],
  configz: () => ({}),
  systemLogsDir: varLog,
  healthy: () => undefined,
  authenticate: async () => ({ name: 'admin', groups: [] }),
  authorize: async () => ({ allowed: true }),
  log,
};

async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}
const port = await listen(createServer(HTTP_SETTINGS, kubeletServer(deps)));
after(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Sends raw bytes (no client-side checks of the path) and reads the whole answer, until the
 * server closes (Connection: close). Not half-closed: node ends a socket whose client did.
 */
function raw(request: string | Buffer, p = port): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(p, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const body = rest.join('\r\n\r\n');
      // Chunked bodies, de-chunked well enough for text.
      const dechunked = /transfer-encoding: chunked/i.test(head) ? body.replace(/(?:^|\r\n)[0-9a-f]+\r\n/g, '').replace(/\r\n$/, '') : body;
      resolve({ status: Number(head.split(' ')[1] ?? 0), body: dechunked });
    });
    socket.write(request);
  });
}
const get = (path: string, headers = '') => raw(`GET ${path} HTTP/1.1\r\nHost: k\r\nConnection: close\r\n${headers}\r\n`);

test('fuzz: /logs/ never serves what is outside the log directory: "..", %2e%2e, double slashes, NUL, backslashes, symlinks', async () => {
  const segment = fc.constantFrom(
    '..',
    '%2e%2e',
    '%2E%2e',
    '.%2e',
    '.',
    '',
    'syslog',
    'pods',
    'link-out',
    'dir-out',
    'secret',
    '%2f',
    '..%2f',
    '%00',
    '%252e%252e',
    '..\\..',
    '%5c..',
    '%ZZ',
    '%',
    '~',
    'a b',
  );
  await fc.assert(
    fc.asyncProperty(
      fc.array(segment, { minLength: 1, maxLength: 6 }),
      fc.constantFrom('', '?x=1', '?query=syslog'),
      async (segments, query) => {
        const r = await get(`/logs/${segments.join('/')}${query}`);
        assert.ok([200, 301, 400, 404, 406].includes(r.status), `${segments.join('/')}: ${r.status} ${r.body}`);
        assert.ok(!r.body.includes('SECRET-OUTSIDE'), `${segments.join('/')}: served the file outside`);
      },
    ),
    { seed: 0x10a5, numRuns: 150 },
  );
  assert.deepEqual(errors, []);
});

test('malformed percent-encoding in a path parameter is a 400, not a 500 logged as the kubelet’s error (regression)', async () => {
  for (const path of [
    '/containerLogs/%ZZ/web/app',
    '/containerLogs/default/%E0%A4%A/app',
    '/healthz/%',
    '/containerLogs/default/web/%C0%80',
  ])
    assert.deepEqual(await get(path), { status: 400, body: '400 Bad Request\n' }, path);
  assert.deepEqual(errors, []);
  // Decoded names that are not the pod's are 404s naming them; nothing reads a path from them.
  assert.equal((await get('/containerLogs/default/web/..%2f..%2fetc%2fpasswd')).status, 404);
  assert.equal((await get('/containerLogs/..%2f../web/app')).status, 404);
  assert.equal((await get('/containerLogs/default/web/app')).body, 'hello\n');
});

test('fuzz: the container log query is options, a 400 or a 422, never a throw', () => {
  const value = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.constantFrom('-1', '0', '1', '9007199254740993', '1e3', '0x10', ' 1', 'true', 'all', '2026-11-22T12:00:00Z'),
  );
  const name = fc.constantFrom('tailLines', 'tail', 'limitBytes', 'sinceSeconds', 'sinceTime', 'follow', 'previous', 'timestamps', 'x');
  fc.assert(
    fc.property(fc.dictionary(name, fc.oneof(value, fc.array(value, { maxLength: 3 }))), (query) => {
      const q = parseLogQuery(query, 1_800_000_000_000);
      if ('message' in q) assert.ok(q.status === 400 || q.status === 422, q.message);
      else for (const n of [q.options.tailLines, q.options.limitBytes]) assert.ok(n === undefined || (Number.isSafeInteger(n) && n >= 0));
      const only = onlyCpuAndMemory(query);
      assert.ok(typeof only === 'boolean' || only.status === 400);
    }),
    { seed: 0x10a6, numRuns: 1000 },
  );
});

test('fuzz: exec, attach and portForward request targets parse or answer 400/404, never throw (regression: %ZZ, "http://[")', () => {
  const part = fc.constantFrom('exec', 'attach', 'portForward', 'default', 'web', 'app', '%ZZ', '%2F', '', '..', 'uid');
  const target = fc.oneof(
    fc
      .tuple(fc.array(part, { maxLength: 6 }), fc.constantFrom('', '?command=ls', '?port=80&port=x', '?port=99999', '?%ZZ=1'))
      .map(([p, q]) => `/${p.join('/')}${q}`),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom('http://[', '//exec/default/web/app?command=ls', '*', 'http://k/exec/default/web/app?command=ls'),
  );
  fc.assert(
    fc.property(target, (url) => {
      const r = parseStreamRequest(url);
      if ('status' in r) assert.ok(r.status === 400 || r.status === 404, `${url}: ${r.status}`);
    }),
    { seed: 0x10a7, numRuns: 1000 },
  );
  assert.deepEqual(parseStreamRequest('/exec/%ZZ/web/app?command=ls'), { status: 400, message: '400 Bad Request: invalid URL escape' });
  assert.deepEqual(parseStreamRequest('http://['), { status: 400, message: '400 Bad Request: malformed request URI' });
  // "//exec/..." is a path whose first segment is empty, not the host "exec".
  assert.equal((parseStreamRequest('//x/exec/default/web/app?command=ls') as { status: number }).status, 404);
});

test('an oversized header is answered 431 on its own connection; the server answers the next request', async () => {
  assert.equal(HTTP_SETTINGS.maxHeaderSize, 1 << 20, 'upstream MaxHeaderBytes');
  const r = await get('/healthz', `X-Big: ${'a'.repeat(HTTP_SETTINGS.maxHeaderSize + 1)}\r\n`);
  assert.equal(r.status, 431);
  assert.equal(
    (await get('/healthz', `X-Fits: ${'a'.repeat(64 << 10)}\r\n`)).status,
    200,
    'under upstream’s limit, over node’s default 16 KiB',
  );
  assert.equal((await get('/healthz')).body, 'ok');
});

test('a slow client trickling its headers gets 408 at headersTimeout, while other requests are answered', async () => {
  // The same settings with timeouts short enough for a unit test.
  const slowPort = await listen(
    createServer({ ...HTTP_SETTINGS, headersTimeout: 300, requestTimeout: 600, connectionsCheckingInterval: 50 }, kubeletServer(deps)),
  );
  const socket = connect(slowPort, '127.0.0.1');
  const answer: Buffer[] = [];
  socket.on('data', (c) => answer.push(c));
  socket.on('error', () => undefined);
  const closed = new Promise((r) => socket.on('close', r));
  const request = 'GET /healthz HTTP/1.1\r\nHost: k\r\nX-Slow: ' + 'a'.repeat(100);
  let sent = 0;
  const trickle = setInterval(() => {
    if (!socket.destroyed && sent < request.length) socket.write(request[sent++]!);
  }, 10);
  try {
    const started = Date.now();
    for (let i = 0; i < 5; i++)
      assert.equal((await raw('GET /healthz HTTP/1.1\r\nHost: k\r\nConnection: close\r\n\r\n', slowPort)).body, 'ok');
    await closed;
    assert.match(Buffer.concat(answer).toString(), /^HTTP\/1\.1 408 Request Timeout/);
    assert.ok(Date.now() - started < 2000, 'cut within headersTimeout plus a check interval or so');
  } finally {
    clearInterval(trickle);
    socket.destroy();
  }
  // A response that lasts longer than requestTimeout (a log follow) is not cut by it.
  const long = createServer(
    { ...HTTP_SETTINGS, headersTimeout: 200, requestTimeout: 300, connectionsCheckingInterval: 50 },
    (_req, res) => {
      res.write('start\n');
      setTimeout(() => res.end('end\n'), 700);
    },
  );
  const longPort = await listen(long);
  assert.match((await raw('GET / HTTP/1.1\r\nHost: k\r\nConnection: close\r\n\r\n', longPort)).body, /start\n[\s\S]*end\n/);
});
