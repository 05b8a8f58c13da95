import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { directoryListing, logPath, looksLikeText, systemLogsHandler } from './system-logs.ts';
import { Router } from './router.ts';

test('logPath: the path under the log directory; ".." in any spelling is a 400', () => {
  const cases: [url: string, want: ReturnType<typeof logPath>][] = [
    ['/logs/', { rel: '' }],
    ['/logs/syslog', { rel: 'syslog' }],
    ['/logs/apt/history.log', { rel: 'apt/history.log' }],
    ['/logs/a%20b', { rel: 'a b' }],
    ['/logs/../etc/passwd', { status: 400, message: 'invalid URL path\n' }],
    ['/logs/%2e%2e/etc/passwd', { status: 400, message: 'invalid URL path\n' }],
    ['/logs/apt/..%2F..%2Fetc', { status: 400, message: 'invalid URL path\n' }],
    ['/logs/x%00', { status: 400, message: 'invalid URL path\n' }],
    ['/logs/%zz', { status: 400, message: 'invalid URL escape\n' }],
    ['/logs/..foo', { rel: '..foo' }],
  ];
  for (const [url, want] of cases) assert.deepEqual(logPath(url), want, url);
});

test("directoryListing: as Go's FileServer, sorted, directories with a slash, names escaped", () => {
  assert.equal(
    directoryListing([
      { name: 'syslog', dir: false },
      { name: 'apt', dir: true },
      { name: 'a<b>&"c', dir: false },
      { name: 'sp ace', dir: false },
    ]),
    '<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n' +
      '<a href="a%3Cb%3E%26%22c">a&lt;b&gt;&amp;&#34;c</a>\n<a href="apt/">apt/</a>\n<a href="sp%20ace">sp ace</a>\n<a href="syslog">syslog</a>\n' +
      '</pre>\n',
  );
});

test("looksLikeText tells text from binary as Go's sniffing does", () => {
  assert.equal(looksLikeText(Buffer.from('Nov 22 13:44:01 host kernel: ok\n\ttab\r\n')), true);
  assert.equal(looksLikeText(Buffer.from([0x4c, 0x50, 0x4b, 0x53, 0x48, 0x48, 0x52, 0x48, 0x00, 0x01])), false);
  assert.equal(looksLikeText(Buffer.alloc(0)), true);
});

const root = mkdtempSync(join(tmpdir(), 'varlog-'));
const outside = mkdtempSync(join(tmpdir(), 'secret-'));
writeFileSync(join(outside, 'passwd'), 'root:x:0:0\n');
writeFileSync(join(root, 'syslog'), 'line one\nline two\n');
writeFileSync(join(root, 'wtmp'), Buffer.from([1, 0, 0, 0, 2]));
mkdirSync(join(root, 'apt'));
writeFileSync(join(root, 'apt', 'history.log'), 'installed\n');
mkdirSync(join(root, 'www'));
writeFileSync(join(root, 'www', 'index.html'), '<p>hi</p>\n');
symlinkSync(join(outside, 'passwd'), join(root, 'leak'));
symlinkSync(outside, join(root, 'leakdir'));
symlinkSync(join(root, 'syslog'), join(root, 'syslog.link'));

const app = new Router();
app.get(/^\/logs\/.*$/, systemLogsHandler(root));
const server = createServer(app.listener());
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const { port } = server.address() as AddressInfo;
// After the last top-level await: a root hook registered before it would run once the tests before it are done.
after(() => {
  server.closeAllConnections();
  server.close();
  for (const d of [root, outside]) rmSync(d, { recursive: true, force: true });
});

function get(path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; type?: string; location?: string; body: string }>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent: false, headers }, (res) => {
      let body = '';
      res
        .setEncoding('latin1')
        .on('data', (d) => {
          body += d;
        })
        .on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], location: res.headers.location, body }));
    })
      .on('error', reject)
      .end();
  });
}

test('the handler lists directories, streams files, follows links only inside', async () => {
  const list = await get('/logs/');
  assert.equal(list.status, 200);
  assert.equal(list.type, 'text/html; charset=utf-8');
  assert.match(list.body, /<a href="apt\/">apt\/<\/a>\n/);
  assert.match(list.body, /<a href="syslog">syslog<\/a>\n/);
  assert.deepEqual(await get('/logs/syslog'), {
    status: 200,
    type: 'text/plain; charset=utf-8',
    location: undefined,
    body: 'line one\nline two\n',
  });
  assert.equal((await get('/logs/syslog', { Range: 'bytes=5-7' })).body, 'one');
  assert.equal((await get('/logs/syslog.link')).body, 'line one\nline two\n', 'a link that stays inside is followed');
  assert.equal((await get('/logs/apt/history.log')).body, 'installed\n');
  assert.equal((await get('/logs/wtmp')).type, 'application/octet-stream');
  assert.equal((await get('/logs/www/')).body, '<p>hi</p>\n', 'index.html stands for its directory, as in Go');
});

test('the handler refuses what is outside, and redirects as Go does', async () => {
  const cases: [path: string, status: number, location?: string][] = [
    ['/logs/../etc/passwd', 400],
    ['/logs/%2e%2e/%2e%2e/etc/passwd', 400],
    ['/logs/apt/../../x', 400],
    ['/logs/leak', 404],
    ['/logs/leakdir/', 404],
    ['/logs/leakdir/passwd', 404],
    ['/logs/nope', 404],
    ['/logs/apt', 301, 'apt/'],
    ['/logs/syslog/', 301, '../syslog'],
  ];
  for (const [path, status, location] of cases) {
    const r = await get(path);
    assert.equal(r.status, status, path);
    assert.doesNotMatch(r.body, /root:x/, path);
    if (location) assert.equal(r.location, location, path);
  }
});
