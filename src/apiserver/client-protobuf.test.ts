// The client with contentType protobuf against a fake apiserver that answers as the real one
// does: protobuf for what is asked in protobuf, JSON otherwise (fixtures: protobuf/testdata).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { ApiError, apiClient, type WatchEvent } from './client.ts';
import { decodeObject, encodeObject } from './protobuf/codec.ts';
import { K8S_PROTO_DIR, loadRoot, protoFiles } from './protobuf/schema-gen.ts';
import { fakeApiserver, type Request } from './testing.ts';

let seen: Request[] = [];
let route: (q: Request, res: ServerResponse) => void = (_q, res) => res.writeHead(404).end();
const base = await fakeApiserver((q, res) => {
  seen.push(q);
  route(q, res);
});

const fixture = (f: string) => readFileSync(new URL(`./protobuf/testdata/${f}`, import.meta.url));
const json = (f: string) => JSON.parse(fixture(f).toString());
const PB = 'application/vnd.kubernetes.protobuf';
const BOTH = `${PB}, application/json`;
// The definitions the watch frames below are written with, parsed before the tests' clocks start
// (seconds on a loaded machine).
const watchEvent = loadRoot(K8S_PROTO_DIR, protoFiles()).lookupType('k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent');
const quick = { timeout: 5000 };

const api = apiClient({ server: base }, { contentType: PB });
const jsonApi = apiClient({ server: base });

test('get: built-in types are asked for in protobuf and decoded to the JSON path object; others in JSON', quick, async () => {
  route = (q, res) => {
    if (q.headers.accept?.startsWith(PB)) res.writeHead(200, { 'Content-Type': PB }).end(fixture('pod.pb'));
    else res.writeHead(200, { 'Content-Type': 'application/json' }).end(fixture('pod.json'));
  };
  seen = [];
  const cases: [string, string][] = [
    ['/api/v1/namespaces/shop/pods/web-0', BOTH],
    ['/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1', BOTH],
    ['/apis/stable.example.com/v1/namespaces/shop/crontabs/c', 'application/json'],
    ['/apis/apps/v1/namespaces/shop/deployments/d', 'application/json'],
  ];
  for (const [path, accept] of cases) {
    assert.deepEqual(await api.get(path), json('pod.json'), path);
    assert.equal(seen.at(-1)!.headers.accept, accept, path);
  }
  // An apiserver that answers JSON to a protobuf Accept is read as JSON.
  route = (_q, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(fixture('node.json'));
  assert.deepEqual(await api.get('/api/v1/nodes/n1'), json('node.json'));
});

test('create and replace send built-in types in protobuf; patches, deletes and unknown kinds stay JSON', quick, async () => {
  route = (_q, res) => res.writeHead(200, { 'Content-Type': PB }).end(fixture('lease.pb'));
  seen = [];
  const lease = json('lease.json');
  await api.create('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', lease);
  await api.replace('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1', lease);
  for (const q of seen) {
    assert.equal(q.headers['content-type'], PB, q.method);
    assert.equal(q.headers['content-length'], String(q.body.length));
    assert.deepEqual(decodeObject(q.body), lease, q.method);
  }
  seen = [];
  const patch = { metadata: { labels: { a: 'b' } } };
  await api.patch('/api/v1/nodes/n1/status', patch, 'strategic');
  await api.create('/api/v1/namespaces/shop/events', { metadata: { name: 'no-kind' } });
  await api.create('/apis/stable.example.com/v1/namespaces/shop/crontabs', { apiVersion: 'stable.example.com/v1', kind: 'CronTab' });
  await api.delete('/api/v1/namespaces/shop/pods/web-0', { gracePeriodSeconds: 0 });
  assert.deepEqual(
    seen.map((q) => [q.method, q.headers['content-type'], JSON.parse(q.body.toString())]),
    [
      ['PATCH', 'application/strategic-merge-patch+json', patch],
      ['POST', 'application/json', { metadata: { name: 'no-kind' } }],
      ['POST', 'application/json', { apiVersion: 'stable.example.com/v1', kind: 'CronTab' }],
      ['DELETE', 'application/json', { gracePeriodSeconds: 0 }],
    ],
  );
});

test('an error Status in protobuf is an ApiError with its code, reason and message', quick, async () => {
  route = (_q, res) => res.writeHead(404, { 'Content-Type': PB }).end(fixture('status.pb'));
  await assert.rejects(api.get('/api/v1/namespaces/shop/pods/x'), (e) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 404);
    assert.equal(e.reason, 'NotFound');
    assert.match(e.message, /pods "x" not found/);
    return true;
  });
});

const frame = (type: string, obj: unknown) => {
  const body = watchEvent.encode({ type, object: { raw: encodeObject(obj) } }).finish();
  const len = Buffer.alloc(4);
  len.writeUInt32BE(body.length);
  return Buffer.concat([len, body]);
};

test('watch: protobuf frames, however the stream is cut, are the JSON stream events; ERROR is an ApiError', quick, async () => {
  const stream = fixture('watch.pb');
  route = (q, res) => {
    assert.equal(q.headers.accept, BOTH);
    res.writeHead(200, { 'Content-Type': `${PB};stream=watch` });
    for (let i = 0; i < stream.length; i += 333) res.write(stream.subarray(i, i + 333));
    res.end();
  };
  const got: WatchEvent<unknown>[] = [];
  await api.watch('/api/v1/pods?watch=1&resourceVersion=1', (e) => got.push(e));
  assert.deepEqual(got, json('watch.json'));

  const gone = {
    apiVersion: 'v1',
    kind: 'Status',
    metadata: {},
    status: 'Failure',
    message: 'too old resource version',
    reason: 'Expired',
    code: 410,
  };
  route = (_q, res) => res.writeHead(200, { 'Content-Type': `${PB};stream=watch` }).end(frame('ERROR', gone));
  await assert.rejects(
    api.watch('/api/v1/pods?watch=1&resourceVersion=1', () => {}),
    (e) => e instanceof ApiError && e.status === 410,
  );
});

test('contentType JSON (the setting application/json): everything in JSON, as before', quick, async () => {
  route = (_q, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(fixture('lease.json'));
  seen = [];
  await jsonApi.get('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1');
  await jsonApi.replace('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1', json('lease.json'));
  assert.deepEqual(
    seen.map((q) => [q.headers.accept, q.headers['content-type']]),
    [
      ['application/json', undefined],
      ['application/json', 'application/json'],
    ],
  );
});
