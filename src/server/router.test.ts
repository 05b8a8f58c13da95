// The router keeps what express showed clients (src/server/router.ts); these are the cases
// the server's own tests do not reach.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { redirect, reply, Router } from './router.ts';

const app = new Router();
app.get('/to/:where', (req, res) => redirect(res, 301, `../${req.params.where} x/`));
app.get('/a/', (_req, res) => reply(res, 200, 'text/plain', 'a'));
app.use((_req, res) => reply(res, 404, 'text/plain', 'none'));
app.onError((err, _req, res) => reply(res, (err as { status?: number }).status ?? 500, 'text/plain', 'error'));
const server = createServer(app.listener());
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const { port } = server.address() as AddressInfo;
after(() => server.close());

function get(path: string, headers: Record<string, string> = {}, method = 'GET') {
  return new Promise<{ status: number; type?: string; location?: string; body: string }>((resolve, reject) => {
    request({ port, host: '127.0.0.1', path, headers, method }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], location: res.headers.location, body }));
    })
      .on('error', reject)
      .end();
  });
}

test('redirects: the Location escaped, the body in text or HTML as express negotiated it', async () => {
  const text = await get('/to/b');
  assert.deepEqual(text, {
    status: 301,
    type: 'text/plain; charset=utf-8',
    location: '../b%20x/',
    body: 'Moved Permanently. Redirecting to ../b%20x/',
  });
  for (const accept of ['text/html', 'text/html,application/xhtml+xml,*/*;q=0.8', 'TEXT/HTML', 'text/plain;q=0.5, text/html'])
    assert.equal((await get('/to/b', { accept })).type, 'text/html; charset=utf-8', accept);
  for (const accept of ['*/*', 'text/*', 'text/html;q=0.5, text/plain;q=0.9'])
    assert.equal((await get('/to/b', { accept })).type, 'text/plain; charset=utf-8', accept);
  for (const accept of ['application/json', 'text/html;q=0', 'text/html; charset=utf-8']) {
    const r = await get('/to/b', { accept });
    assert.deepEqual([r.type, r.body], [undefined, ''], accept);
  }
});

test('routes: one trailing slash optional, HEAD as GET without a body, a bad escape a 400 for any method', async () => {
  assert.deepEqual([(await get('/a')).body, (await get('/a/')).body, (await get('/a//')).body], ['a', 'a', 'none']);
  const head = await get('/a', {}, 'HEAD');
  assert.deepEqual([head.status, head.body], [200, '']);
  for (const method of ['GET', 'PUT']) assert.equal((await get('/to/%ZZ', {}, method)).status, 400, method);
});
