import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpProbe, httpProbeRequest } from './http.ts';
import { tcpProbe } from './tcp.ts';

let seen: IncomingHttpHeaders[] = [];
const server = createServer((req, res) => {
  seen.push(req.headers);
  const u = req.url ?? '';
  if (u === '/ok') return res.end('fine');
  if (u === '/fail') return res.writeHead(500).end('secret body');
  if (u === '/hop') return res.writeHead(302, { location: '/ok' }).end();
  if (u === '/away') return res.writeHead(301, { location: 'http://elsewhere.invalid/' }).end('moved');
  if (u === '/loop') return res.writeHead(302, { location: '/loop' }).end();
  if (u === '/slow') return setTimeout(() => res.end('late'), 3000);
  if (u === '/big') {
    res.writeHead(200);
    const chunk = Buffer.alloc(64 * 1024, 'a');
    for (let i = 0; i < 64; i++) res.write(chunk);
    return res.end();
  }
  res.writeHead(404).end();
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const port = (server.address() as AddressInfo).port;
after(() => {
  server.closeAllConnections();
  server.close();
});

const probe = (path: string, over: object = {}, timeout = 1) => {
  const req = httpProbeRequest({ port, path, ...over }, {}, '127.0.0.1');
  if ('error' in req) throw new Error(req.error);
  return httpProbe(req, timeout);
};

test('httpGet: 2xx succeeds; the request carries kube-probe/1.36, Accept */* and the probe headers', async () => {
  seen = [];
  assert.deepEqual(
    await probe('/ok', {
      httpHeaders: [
        { name: 'X-Probe', value: 'yes' },
        { name: 'Host', value: 'svc.example' },
      ],
    }),
    { result: 'success', output: 'fine' },
  );
  assert.equal(seen[0]!['user-agent'], 'kube-probe/1.36');
  assert.equal(seen[0]!.accept, '*/*');
  assert.equal(seen[0]!['x-probe'], 'yes');
  assert.equal(seen[0]!.host, 'svc.example');
});

test("httpGet: a 500 fails with upstream's message, without the body", async () => {
  assert.deepEqual(await probe('/fail'), { result: 'failure', output: 'HTTP probe failed with statuscode: 500' });
});

test('httpGet: a redirect on the same host is followed; one elsewhere is a success with a warning', async () => {
  assert.deepEqual(await probe('/hop'), { result: 'success', output: 'fine' });
  assert.deepEqual(await probe('/away'), { result: 'warning', output: 'Probe terminated redirects, Response body: moved' });
  assert.deepEqual(await probe('/loop'), { result: 'failure', output: `Get "http://127.0.0.1:${port}/loop": stopped after 10 redirects` });
});

test("httpGet: timeout and connection refused are failures, worded as Go's client", async () => {
  const slow = await probe('/slow', {}, 1);
  assert.deepEqual(slow, {
    result: 'failure',
    output: `Get "http://127.0.0.1:${port}/slow": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
  });
  const req = httpProbeRequest({ port: 1, path: '/' }, {}, '127.0.0.1');
  assert.deepEqual(await httpProbe(req as never, 1), {
    result: 'failure',
    output: 'Get "http://127.0.0.1:1/": dial tcp 127.0.0.1:1: connect: connection refused',
  });
});

test('httpGet: at most 10 KiB of a body is read', async () => {
  const r = await probe('/big');
  assert.equal(r.result, 'success');
  assert.equal(r.output.length, 10 * 1024);
});

test('tcpSocket: open port succeeds, closed port fails as Go words it', async () => {
  assert.deepEqual(await tcpProbe('127.0.0.1', port, 1), { result: 'success', output: '' });
  assert.deepEqual(await tcpProbe('127.0.0.1', 1, 1), { result: 'failure', output: 'dial tcp 127.0.0.1:1: connect: connection refused' });
});

test('httpGet: HTTPS without verifying the (self-signed) certificate', async () => {
  const { createServer: createTLS } = await import('node:https');
  const { newPrivateKey, selfSignedServingCert } = await import('../certificates/pki.ts');
  const key = newPrivateKey();
  const cert = selfSignedServingCert(key, 'probe-test', ['127.0.0.1']);
  const tls = createTLS({ key, cert }, (_req, res) => res.end('secure'));
  await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
  try {
    const req = httpProbeRequest({ port: (tls.address() as AddressInfo).port, scheme: 'HTTPS', path: '/' }, {}, '127.0.0.1');
    assert.deepEqual(await httpProbe(req as never, 2), { result: 'success', output: 'secure' });
  } finally {
    tls.closeAllConnections();
    tls.close();
  }
});
