// The schema the kubelet reads (proto/k8s/schema.json, `npm run gen:k8s`) against protobufjs's
// reading of proto/k8s, so neither the generator nor a stale file drifts from the .proto silently.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { fieldSpec, K8S_PROTO_DIR, loadRoot, protoFiles, schemaOf } from './schema-gen.ts';
import { type FieldSpec, messageOf, SCHEMA_FILE } from './schema.ts';

const root = loadRoot(K8S_PROTO_DIR, protoFiles());
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const CORE = 'k8s.io.api.core.v1';
const QUANTITY = 'k8s.io.apimachinery.pkg.api.resource.Quantity';

test('the schema file is the generator on proto/k8s as it is now (npm run gen:k8s)', () => {
  assert.deepEqual(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')), schemaOf(root));
});

const TYPES = [
  `${CORE}.Pod`,
  `${CORE}.Node`,
  'k8s.io.api.coordination.v1.Lease',
  `${CORE}.Event`,
  `${META}.WatchEvent`,
  'k8s.io.apimachinery.pkg.runtime.Unknown',
  `${META}.Status`,
  `${META}.ObjectMeta`,
  QUANTITY,
  // Quantity fields: maps of it.
  `${CORE}.NodeStatus`,
  `${CORE}.ResourceRequirements`,
];

for (const name of TYPES)
  test(`${name}: field for field what protobufjs reads of proto/k8s`, () => {
    const type = root.lookupType(name);
    const spec = messageOf(name);
    assert.ok(spec, name);
    assert.equal(spec.special, type.options?.['(k8s.special)']);
    const fields = [...type.fieldsArray].sort((a, b) => a.id - b.id);
    assert.deepEqual(
      spec.fields.map((f) => f[1]),
      fields.map((f) => f.name),
    );
    for (const [i, f] of fields.entries()) {
      f.resolve();
      const [id, , json, ptr, label, ty]: FieldSpec = spec.fields[i]!;
      const where = `${name}.${f.name}`;
      assert.equal(id, f.id, where);
      assert.equal(json, f.options?.['(k8s.json)'] ?? f.name, where);
      assert.equal(ptr === 1, f.options?.['(k8s.ptr)'] === true, where);
      assert.equal(label, f.map ? 'map' : f.repeated ? 'repeated' : 'one', where);
      assert.equal(ty, f.resolvedType ? f.resolvedType.fullName.slice(1) : f.type, where);
    }
  });

test('fields as the schema has them', () => {
  const rows: [string, FieldSpec][] = [
    [`${CORE}.Pod`, [1, 'metadata', 'metadata,omitempty', 0, 'one', `${META}.ObjectMeta`]],
    [`${CORE}.NodeStatus`, [1, 'capacity', 'capacity,omitempty', 0, 'map', QUANTITY]],
    [`${CORE}.PodSecurityContext`, [4, 'supplementalGroups', 'supplementalGroups,omitempty', 0, 'repeated', 'int64']],
    ['k8s.io.api.coordination.v1.LeaseSpec', [4, 'renewTime', 'renewTime,omitempty', 1, 'one', `${META}.MicroTime`]],
    [`${META}.ObjectMeta`, [8, 'creationTimestamp', 'creationTimestamp,omitempty,omitzero', 0, 'one', `${META}.Time`]],
    [`${META}.ObjectMeta`, [11, 'labels', 'labels,omitempty', 0, 'map', 'string']],
    ['k8s.io.apimachinery.pkg.runtime.Unknown', [1, 'typeMeta', ',inline', 0, 'one', 'k8s.io.apimachinery.pkg.runtime.TypeMeta']],
    ['k8s.io.apimachinery.pkg.runtime.Unknown', [2, 'raw', '-', 0, 'one', 'bytes']],
    [QUANTITY, [1, 'string', 'string', 0, 'one', 'string']],
  ];
  for (const [type, row] of rows)
    assert.deepEqual(
      messageOf(type)?.fields.find((f) => f[0] === row[0]),
      row,
      type,
    );
  assert.equal(messageOf(QUANTITY)?.special, 'quantity');
  assert.equal(messageOf(`${META}.Time`)?.special, 'time');
  assert.equal(messageOf(`${CORE}.NoSuchKind`), undefined);
  assert.equal(messageOf('toString'), undefined);
});

test('fieldSpec: what kubelet-ts cannot read is refused at generation', () => {
  const { root: r } = protobuf.parse(
    `syntax = "proto2"; package p;
     enum E { A = 0; }
     message M { map<int32, string> byInt = 1; optional E e = 2; optional string s = 3; }`,
    { keepCase: true },
  );
  r.resolveAll();
  const m = r.lookupType('p.M');
  assert.throws(() => fieldSpec(m.fields.byInt!), /p\.M\.byInt: a map of int32 keys/);
  assert.throws(() => fieldSpec(m.fields.e!), /p\.M\.e: an enum/);
  assert.deepEqual(fieldSpec(m.fields.s!), [3, 's', 's', 0, 'one', 'string']);
});
