import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { podsFromURL, urlSource } from './static-url.ts';
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
