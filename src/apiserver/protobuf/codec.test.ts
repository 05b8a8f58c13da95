import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { decodeObject, decodeWatchEvent, encodeObject, frameReader, apiVersionOfPath, protobufPath } from './codec.ts';

// Written by hack/tools/kube/kube-proto from the Go types: each object as the apiserver's
// serializers write it, protobuf and JSON.
const dir = new URL('./testdata/', import.meta.url);
const fixture = (f: string) => readFileSync(new URL(f, dir));
const names = readdirSync(dir)
  .filter((f) => f.endsWith('.pb') && f !== 'watch.pb')
  .map((f) => f.slice(0, -3));

for (const name of names) {
  test(`${name}: decoded from protobuf, the object JSON yields`, () => {
    assert.deepEqual(decodeObject(fixture(`${name}.pb`)), JSON.parse(fixture(`${name}.json`).toString()));
  });
  test(`${name}: encoded for a create or an update, decodes to the same object`, () => {
    const obj = JSON.parse(fixture(`${name}.json`).toString());
    const pb = encodeObject(obj);
    assert.ok(pb, 'encoded');
    assert.deepEqual(decodeObject(pb), obj);
  });
}

test('a watch stream: frames split anywhere decode to the JSON stream events', () => {
  const stream = fixture('watch.pb');
  const want = JSON.parse(fixture('watch.json').toString());
  for (const step of [1, 7, 100, stream.length]) {
    const got: unknown[] = [];
    const r = frameReader((f) => got.push(decodeWatchEvent(f)));
    for (let i = 0; i < stream.length; i += step) r.push(stream.subarray(i, i + step));
    assert.deepEqual(got, want, `chunks of ${step}`);
    assert.equal(r.pending(), 0);
  }
});

test("an empty list's items are [] as the apiserver writes them in JSON (protobuf has nothing)", () => {
  const list = { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: [] };
  assert.deepEqual(decodeObject(encodeObject(list)!), list);
});

test('encoded times: metav1.Time in whole seconds (as Time.ProtoTime), MicroTime to the microsecond', () => {
  const lease = {
    kind: 'Lease',
    apiVersion: 'coordination.k8s.io/v1',
    metadata: { name: 'n1', creationTimestamp: '2026-12-03T14:00:00.750Z' },
    spec: { renewTime: '2026-12-03T14:00:01.123456789Z', acquireTime: '2026-12-03T14:00:02Z' },
  };
  const back = decodeObject<typeof lease>(encodeObject(lease)!);
  assert.equal(back.metadata.creationTimestamp, '2026-12-03T14:00:00Z');
  assert.deepEqual(back.spec, { renewTime: '2026-12-03T14:00:01.123456Z', acquireTime: '2026-12-03T14:00:02.000000Z' });
});

test('objects kubelet-ts has no types for are not encoded (sent in JSON)', () => {
  for (const o of [
    { apiVersion: 'example.com/v1', kind: 'Widget' },
    { apiVersion: 'apps/v1', kind: 'Deployment' },
    { apiVersion: 'v1', kind: 'NoSuchKind' },
    { metadata: { name: 'x' } },
    undefined,
  ])
    assert.equal(encodeObject(o), undefined, JSON.stringify(o));
});

test('not an envelope is an error', () => {
  assert.throws(() => decodeObject(Buffer.from('{"kind":"Pod"}')), /no "k8s\\0" prefix/);
});

test('which paths are asked for in protobuf', () => {
  const table: [string, string | undefined, boolean][] = [
    ['/api/v1/pods?fieldSelector=spec.nodeName%3Dn1', 'v1', true],
    ['/api/v1/namespaces/ns/pods/p/status', 'v1', true],
    ['/api/v1', 'v1', true],
    ['/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1', 'coordination.k8s.io/v1', true],
    ['/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName=n1', 'resource.k8s.io/v1', true],
    ['/apis/storage.k8s.io/v1/csinodes/n1', 'storage.k8s.io/v1', true],
    ['/apis/certificates.k8s.io/v1/certificatesigningrequests', 'certificates.k8s.io/v1', true],
    ['/apis/resource.k8s.io/v1beta1/resourceslices', 'resource.k8s.io/v1beta1', false],
    ['/apis/apps/v1/deployments', 'apps/v1', false],
    ['/apis/stable.example.com/v1/namespaces/ns/crontabs', 'stable.example.com/v1', false],
    ['/apis/node.example.io/v1/things', 'node.example.io/v1', false],
    ['/version', undefined, false],
    ['/healthz', undefined, false],
  ];
  for (const [path, gv, pb] of table) {
    assert.equal(apiVersionOfPath(path), gv, path);
    assert.equal(protobufPath(path), pb, path);
  }
});
