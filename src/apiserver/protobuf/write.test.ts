// write.ts against what it replaced: protobufjs's type.encode of the message the JSON object maps
// to (proto field names, the special types' messages), over proto/k8s parsed by protobufjs. The
// same bytes, message and envelope, for realistic objects (testdata, as the apiserver serves them)
// and for the corners: zero values, nulls, numbers as Quantity, int IntOrString, MicroTime.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { encodeObject, packageOf } from './codec.ts';
import { K8S_PROTO_DIR, loadRoot, protoFiles } from './schema-gen.ts';
import { writeMessage } from './write.ts';

type Obj = Record<string, unknown>;
const root = loadRoot(K8S_PROTO_DIR, protoFiles());

/** The message protobufjs encodes for a JSON object: each field by its Go JSON tag, the special types as their messages. */
function fromJson(type: protobuf.Type, o: Obj): Obj {
  const out: Obj = {};
  for (const f of type.fieldsArray) {
    f.resolve();
    const tag = String(f.options?.['(k8s.json)'] ?? f.name).split(',');
    const v = tag.includes('inline') || tag[0] === '' ? o : o[tag[0]!];
    if (v === undefined || v === null) continue;
    const one = (x: unknown) => valueFromJson(f, x);
    if (f.map) out[f.name] = Object.fromEntries(Object.entries(v as Obj).map(([k, x]) => [k, one(x)]));
    else if (f.repeated) out[f.name] = (v as unknown[]).map(one);
    else {
      const x = one(v);
      if (x !== undefined) out[f.name] = x;
    }
  }
  return out;
}

function valueFromJson(f: protobuf.Field, v: unknown): unknown {
  const t = f.resolvedType;
  if (!(t instanceof protobuf.Type)) return f.type === 'bytes' ? Buffer.from(v as string, 'base64') : v;
  switch (t.options?.['(k8s.special)'] as string | undefined) {
    case 'time':
      return typeof v === 'string' ? { seconds: Math.floor(Date.parse(v) / 1000) } : undefined;
    case 'microtime':
      if (typeof v !== 'string') return undefined;
      return { seconds: Math.floor(Date.parse(v) / 1000), nanos: Number((/\.(\d+)/.exec(v)?.[1] ?? '').padEnd(9, '0').slice(0, 9)) };
    case 'quantity':
      return { string: typeof v === 'number' ? String(v) : v };
    case 'intorstring':
      return typeof v === 'string' ? { type: 1, strVal: v } : { type: 0, intVal: v };
    case 'rawjson':
      return { raw: Buffer.from(JSON.stringify(v)), Raw: Buffer.from(JSON.stringify(v)) };
    case 'items':
      return { items: v };
  }
  return fromJson(t, v as Obj);
}

// metav1.Status is served as kind Status of every group.
const nameOf = (o: { apiVersion: string; kind: string }) =>
  o.kind === 'Status' ? 'k8s.io.apimachinery.pkg.apis.meta.v1.Status' : `${packageOf(o.apiVersion)}.${o.kind}`;

function assertSameBytes(obj: { apiVersion: string; kind: string }) {
  const type = root.lookupType(nameOf(obj));
  const want = Buffer.from(type.encode(fromJson(type, obj)).finish());
  assert.deepEqual(writeMessage(nameOf(obj), obj, protobuf.Writer.create()).finish(), want);
  const envelope = root
    .lookupType('k8s.io.apimachinery.pkg.runtime.Unknown')
    .encode({ typeMeta: { apiVersion: obj.apiVersion, kind: obj.kind }, raw: want })
    .finish();
  assert.deepEqual(encodeObject(obj), Buffer.concat([Buffer.from('k8s\0'), envelope]));
}

const fixture = (f: string) => JSON.parse(readFileSync(new URL(`./testdata/${f}.json`, import.meta.url), 'utf8'));

for (const name of ['pod', 'node', 'lease', 'event', 'csr', 'podlist', 'configmap', 'secret', 'csinode', 'resourceclaim', 'tokenrequest'])
  test(`${name}: the bytes protobufjs's type.encode wrote`, () => assertSameBytes(fixture(name)));

test('corners: zero values, nulls, Quantity numbers, int IntOrString, MicroTime, repeated scalars unpacked', () => {
  const pod = fixture('pod');
  const cases: { apiVersion: string; kind: string; [k: string]: unknown }[] = [
    { apiVersion: 'v1', kind: 'Pod' },
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: '', generation: 0, labels: {}, finalizers: [], deletionTimestamp: null } },
    {
      ...pod,
      spec: {
        ...pod.spec,
        securityContext: { supplementalGroups: [1, 2, 3000000000], runAsUser: 0, fsGroup: null },
        containers: [
          {
            name: 'c',
            resources: { limits: { cpu: 2, memory: '1Gi' }, requests: { cpu: 0.5 } },
            ports: [{ containerPort: 8080 }],
            livenessProbe: { httpGet: { port: 8080, path: '/' }, initialDelaySeconds: 0 },
            readinessProbe: { tcpSocket: { port: 'http' } },
          },
        ],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e' },
      eventTime: '2026-12-03T14:00:01.1Z',
      firstTimestamp: null,
      lastTimestamp: '2026-12-03T14:00:01Z',
      series: { count: 2, lastObservedTime: '2026-12-03T14:00:02.000001Z' },
      count: 0,
    },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { a: '', b: 'AAEC' }, immutable: false },
    { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', code: 404, details: { causes: [{}] } },
  ];
  for (const o of cases) assertSameBytes(o);
});
