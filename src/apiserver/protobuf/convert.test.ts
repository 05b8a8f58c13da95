import { test } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs/minimal.js';
import { type Json, planOf, SPECIAL_ZERO, specialOmitted, specialReader, writeSpecial } from './convert.ts';
import type { Special } from './schema.ts';

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

test('plans: the Go JSON tag, pointer-ness and type of each field', () => {
  const plan = (type: string, json: string) => {
    const p = planOf(type).find((x) => x.json === json);
    assert.ok(p, `${type} ${json}`);
    const { id, omitempty, omitzero, inline, ptr, kind, type: t, special, zero } = p;
    return { id, omitempty, omitzero, inline, ptr, kind, type: t, special, zero };
  };
  const table: [string, string, ReturnType<typeof plan>][] = [
    [
      `${META}.ObjectMeta`,
      'creationTimestamp',
      { id: 8, omitempty: true, omitzero: true, inline: false, ptr: false, kind: 'one', type: `${META}.Time`, special: 'time', zero: 0 },
    ],
    [
      `${META}.ObjectMeta`,
      'labels',
      { id: 11, omitempty: true, omitzero: false, inline: false, ptr: false, kind: 'map', type: undefined, special: undefined, zero: '' },
    ],
    [
      'k8s.io.api.coordination.v1.LeaseSpec',
      'holderIdentity',
      { id: 1, omitempty: true, omitzero: false, inline: false, ptr: true, kind: 'one', type: undefined, special: undefined, zero: '' },
    ],
    [
      'k8s.io.api.core.v1.ContainerStatus',
      'ready',
      {
        id: 4,
        omitempty: false,
        omitzero: false,
        inline: false,
        ptr: false,
        kind: 'one',
        type: undefined,
        special: undefined,
        zero: false,
      },
    ],
    [
      'k8s.io.apimachinery.pkg.runtime.Unknown',
      '',
      {
        id: 1,
        omitempty: false,
        omitzero: false,
        inline: true,
        ptr: false,
        kind: 'one',
        type: 'k8s.io.apimachinery.pkg.runtime.TypeMeta',
        special: undefined,
        zero: 0,
      },
    ],
  ];
  for (const [type, json, want] of table) assert.deepEqual(plan(type, json), want, `${type} ${json}`);
  assert.throws(() => planOf('k8s.io.api.core.v1.NoSuchKind'), /no protobuf definition of k8s\.io\.api\.core\.v1\.NoSuchKind/);
});

/** A special value written as a field's message (length first) and read back. */
function roundtrip(kind: Special, v: Json): Json {
  const w = protobuf.Writer.create().fork();
  writeSpecial(kind, v, w);
  const bytes = w.ldelim().finish();
  return specialReader(kind)(protobuf.Reader.create(bytes));
}

test('special types: JSON to the wire and back as Go marshals them', () => {
  const table: [Special, Json, Json][] = [
    // metav1.Time in whole seconds (Time.ProtoTime); MicroTime to the microsecond.
    ['time', '2026-12-03T14:00:00.750Z', '2026-12-03T14:00:00Z'],
    ['time', '1970-01-01T00:00:00Z', null],
    ['microtime', '2026-12-03T14:00:01.123456789Z', '2026-12-03T14:00:01.123456Z'],
    ['microtime', '2026-12-03T14:00:02Z', '2026-12-03T14:00:02.000000Z'],
    ['quantity', '100m', '100m'],
    ['quantity', 2, '2'],
    ['quantity', '', '0'],
    ['intorstring', 'http', 'http'],
    ['intorstring', 8080, 8080],
    ['intorstring', 0, 0],
    ['rawjson', { 'f:metadata': { 'f:labels': {} } }, { 'f:metadata': { 'f:labels': {} } }],
    ['rawjson', 'x', 'x'],
    ['items', ['a', 'b'], ['a', 'b']],
    ['items', [], null],
    // Null writes nothing: the type's zero value comes back.
    ['time', null, null],
    ['quantity', null, '0'],
    ['intorstring', null, 0],
    ['rawjson', null, null],
    ['items', null, null],
  ];
  for (const [kind, v, want] of table) assert.deepEqual(roundtrip(kind, v), want, `${kind} ${JSON.stringify(v)}`);
  for (const [kind, zero] of Object.entries(SPECIAL_ZERO)) assert.deepEqual(roundtrip(kind as Special, null), zero, kind);
  assert.throws(() => roundtrip('time', 'yesterday'), /not an RFC 3339 time: yesterday/);
});

test('a Time that is not a string is left off the wire (a nil *Time); other special values are sent', () => {
  const table: [Special, Json, boolean][] = [
    ['time', 5, true],
    ['microtime', {}, true],
    ['time', '2026-12-03T14:00:00Z', false],
    ['quantity', 5, false],
    ['rawjson', 'x', false],
  ];
  for (const [kind, v, omitted] of table) assert.equal(specialOmitted(kind, v), omitted, `${kind} ${JSON.stringify(v)}`);
});
