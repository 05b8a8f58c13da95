import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { podsFromURL, urlSource } from './static-url.ts';
import { MAX_MANIFEST_BYTES } from './static-file.ts';
import { logger } from '../log/log.ts';

const pod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
});
const URL_ = 'http://example.test/pods';

test('podsFromURL: one Pod, a PodList, an empty body; static names, the http source, UIDs by URL and content', () => {
  const [one] = podsFromURL(JSON.stringify(pod('web')), URL_, 'node1');
  assert.equal(one!.metadata!.name, 'web-node1');
  assert.equal(one!.metadata!.annotations!['kubernetes.io/config.source'], 'http');
  const list = podsFromURL(
    JSON.stringify({
      kind: 'PodList',
      items: [
        { metadata: { name: 'a' }, spec: pod('a').spec },
        { metadata: { name: 'b' }, spec: pod('b').spec },
      ],
    }),
    URL_,
    'node1',
  );
  assert.deepEqual(
    list.map((p) => p.metadata!.name),
    ['a-node1', 'b-node1'],
  );
  assert.deepEqual(podsFromURL('  \n', URL_, 'node1'), []);
  assert.notEqual(podsFromURL(JSON.stringify(pod('web')), 'http://other/pods', 'node1')[0]!.metadata!.uid, one!.metadata!.uid);
  assert.throws(() => podsFromURL('kind: Deployment', URL_, 'node1'), /want apiVersion v1, kind Pod/);
});

test('urlSource: serves pods with the configured headers; a changed document replaces, an error keeps, an empty one removes', async () => {
  let body = JSON.stringify(pod('web'));
  let status = 200;
  const headers: string[] = [];
  const server = createServer((req, res) => {
    headers.push(String(req.headers['x-token']));
    res.statusCode = status;
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pods`;
  const events: string[] = [];
  const src = urlSource(
    url,
    { 'X-Token': ['secret'] },
    'n',
    { update: (p: Pod) => events.push(`+${p.metadata!.name}`), remove: () => events.push('-') },
    logger('test'),
    50,
  );
  const settle = () => new Promise((r) => setTimeout(r, 150));
  try {
    await settle();
    assert.deepEqual(events, ['+web-n']);
    assert.equal(headers[0], 'secret');
    status = 500;
    await settle();
    assert.deepEqual(events, ['+web-n'], 'a failed fetch keeps the pods');
    status = 200;
    body = JSON.stringify({ ...pod('web'), spec: { containers: [{ name: 'c', image: 'busybox:2' }] } });
    await settle();
    assert.deepEqual(events, ['+web-n', '-', '+web-n'], 'an edit replaces the pod');
    body = '';
    await settle();
    assert.deepEqual(events, ['+web-n', '-', '+web-n', '-']);
  } finally {
    src.stop();
    server.close();
  }
});

test('urlSource: a body past maxConfigLength is the read limit reached, logged once; the pods it served before keep running', async () => {
  let huge = false;
  const server = createServer((_req, res) => {
    if (!huge) return void res.end(JSON.stringify(pod('web')));
    // Streamed without a length, as a runaway generator would: the reader stops at the limit.
    const chunk = Buffer.alloc(1 << 20, 0x20);
    let sent = 0;
    const more = () => {
      while (sent <= MAX_MANIFEST_BYTES && res.write(chunk)) sent += chunk.length;
      if (sent <= MAX_MANIFEST_BYTES) res.once('drain', more);
      else res.end();
    };
    res.on('error', () => undefined);
    more();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pods`;
  const events: string[] = [];
  const errors: string[] = [];
  const log = { info() {}, v() {}, warn() {}, error: (_m: string, f?: Record<string, unknown>) => void errors.push(String(f?.err)) };
  const src = urlSource(
    url,
    {},
    'n',
    { update: (p: Pod) => events.push(`+${p.metadata!.name}`), remove: () => events.push('-') },
    log,
    100,
  );
  try {
    await new Promise((r) => setTimeout(r, 150));
    huge = true;
    // Tens of MB streamed: under a loaded machine (the unit tests run in parallel) that takes
    // more than a fixed wait. Then a few more polls (every 100 ms) to see that it is logged once.
    for (const end = Date.now() + 10_000; !errors.length && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 400));
    assert.deepEqual(events, ['+web-n']);
    assert.deepEqual(errors, [`${url}: the read limit is reached`]);
  } finally {
    src.stop();
    server.closeAllConnections();
    server.close();
  }
});
