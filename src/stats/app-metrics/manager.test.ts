import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AppContainer, appMetrics, type AppMetricsIo, hostAppMetricsIo } from './manager.ts';

const LABEL = { 'io.cadvisor.metric.prometheus': '/etc/app.json' };

function fixture(files: Record<string, string>, pages: Record<string, { status: number; body: string }>) {
  const gets: string[] = [];
  const logs: string[] = [];
  let clock = 1_000_000;
  const io: AppMetricsIo = {
    readFile: (pids, path) => {
      const f = files[path];
      if (!pids.length || f === undefined) throw new Error(`file "${path}" does not exist`);
      return f;
    },
    get: async (url) => {
      gets.push(url);
      const p = pages[url];
      if (!p) throw new Error(`Get "${url}": connection refused`);
      return { ...p, statusText: p.status === 200 ? 'OK' : 'Error' };
    },
  };
  const log = {
    info: (m: string, kv: object) => logs.push(`I ${m} ${JSON.stringify(kv)}`),
    warn: (m: string, kv: object) => logs.push(`W ${m} ${JSON.stringify(kv)}`),
  };
  const collect = appMetrics(100, io, log, () => clock);
  return { gets, logs, collect, tick: (ms: number) => (clock += ms) };
}

const ctr = (id: string, labels: Record<string, string>, pids: number[] = [42]): AppContainer => ({
  id,
  ref: `ns/pod/${id}`,
  pids: () => pids,
  labels: async () => labels,
});

test('appMetrics: collectors made once a container, polled when due; a sample has the values collected in it', async () => {
  const f = fixture(
    { '/etc/app.json': '{"endpoint": "http://127.0.0.1:9100/metrics", "polling_frequency": 15000000000}' },
    { 'http://127.0.0.1:9100/metrics': { status: 200, body: '# TYPE up gauge\nup 1\n' } },
  );
  const first = await f.collect([ctr('c1', LABEL), ctr('plain', {})]);
  assert.deepEqual([...first.keys()], ['c1']);
  assert.deepEqual(first.get('c1'), {
    specs: [{ name: 'up', type: 'gauge', format: 'float', units: '' }],
    values: { up: [{ floatValue: 1, labels: {}, timestampMs: 1_000_000 }] },
  });
  f.tick(10_000);
  // Not due (15 s): the specs stay, no values.
  assert.deepEqual((await f.collect([ctr('c1', LABEL)])).get('c1')?.values, {});
  f.tick(5_000);
  assert.equal((await f.collect([ctr('c1', LABEL)])).get('c1')?.values.up?.length, 1);
  assert.equal(f.gets.length, 2);
  assert.deepEqual(f.logs, []);
});

test('appMetrics: a container without processes is tried at the next sample; a config that cannot be read is logged once', async () => {
  const f = fixture({}, {});
  assert.equal((await f.collect([ctr('c1', LABEL, [])])).size, 0);
  assert.equal(f.logs.length, 0);
  await f.collect([ctr('c1', LABEL)]);
  await f.collect([ctr('c1', LABEL)]);
  assert.deepEqual(f.logs, [
    'I Failed to register an application metrics collector {"container":"ns/pod/c1","config":"prometheus","path":"/etc/app.json","err":"Error: file \\"/etc/app.json\\" does not exist"}',
  ]);
});

test('appMetrics: scrape errors are logged at most once a minute a container; a gone container is forgotten', async () => {
  const f = fixture(
    { '/a.json': '{"endpoint": "http://a/m"}', '/b.json': '{"endpoint": "http://b/m"}' },
    { 'http://b/m': { status: 503, body: '' } },
  );
  const labels = { 'io.cadvisor.metric.prometheus-a': '/a.json', 'io.cadvisor.metric.prometheus-b': '/b.json' };
  assert.equal((await f.collect([ctr('c1', labels)])).size, 0, 'no specs, no values');
  f.tick(1000);
  await f.collect([ctr('c1', labels)]);
  assert.equal(f.logs.length, 1);
  assert.match(f.logs[0]!, /^W Failed to collect application metrics .*connection refused.*server returned HTTP status 503 Error/);
  f.tick(60_000);
  await f.collect([ctr('c1', labels)]);
  assert.equal(f.logs.length, 2);
  // Gone, then back under the same ID (a test's fake; IDs are not reused): made anew.
  await f.collect([]);
  f.gets.length = 0;
  await f.collect([ctr('c1', labels)]);
  assert.deepEqual(f.gets.sort(), ['http://a/m', 'http://b/m']);
});

test('hostAppMetricsIo: a GET of a real server, its status and page; no host is an error, as net/http says', async () => {
  const server = createServer((req, res) => {
    res.writeHead(req.url === '/metrics' ? 200 : 404);
    res.end(req.url === '/metrics' ? 'up 1\n' : 'nope');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    assert.deepEqual(await hostAppMetricsIo.get(`${base}/metrics`), { status: 200, statusText: 'OK', body: 'up 1\n' });
    assert.equal((await hostAppMetricsIo.get(`${base}/x`)).status, 404);
    await assert.rejects(
      hostAppMetricsIo.get('http://:8000/metrics'),
      /^Error: Get "http:\/\/:8000\/metrics": (no Host in request URL|Invalid URL)$/,
    );
  } finally {
    server.close();
  }
  assert.equal(hostAppMetricsIo.readFile([process.pid], '/proc/self/comm').length > 0, true);
  assert.throws(() => hostAppMetricsIo.readFile([process.pid], '/no/such/file'), /file "\/no\/such\/file" does not exist/);
});

test('hostAppMetricsIo.readFile: ".." stays in the root; a labels error is tried again at the next sample', async () => {
  // /proc/self/root/../../proc/self/comm normalises to /proc/self/comm in the process's root.
  assert.ok(hostAppMetricsIo.readFile([process.pid], '../../proc/self/comm').length > 0);
  const logs: string[] = [];
  let calls = 0;
  const collect = appMetrics(100, hostAppMetricsIo, { info: (m) => logs.push(m), warn: (m) => logs.push(m) });
  const flaky: AppContainer = {
    id: 'c1',
    ref: 'ns/p/c',
    pids: () => [process.pid],
    labels: async () => {
      if (calls++ === 0) throw new Error('image gone');
      return {};
    },
  };
  assert.equal((await collect([flaky])).size, 0);
  assert.equal((await collect([flaky])).size, 0);
  assert.equal(calls, 2);
  assert.deepEqual(logs, ['Cannot read the labels of a container for its application metrics']);
});
