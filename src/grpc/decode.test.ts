// decode.ts and services.ts against what they replace: @grpc/proto-loader's loadSync (kept as a
// dev dependency for this and for proto-loader-gen-types), over every message of every proto/
// file whose services the kubelet calls or serves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { loadSync } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { decimal, decoderOf } from './decode.ts';
import { grpcServices } from './services.ts';

const PROTOS = [
  'runtime/v1/api.proto',
  'deviceplugin/v1beta1/api.proto',
  'podresources/v1/api.proto',
  'pluginregistration/v1/api.proto',
  'csi/v1/csi.proto',
  'dra/v1/api.proto',
  'dra/v1beta1/api.proto',
  'dra-health/v1alpha1/api.proto',
].map((p) => fileURLToPath(new URL(`../../proto/${p}`, import.meta.url)));
const OPTIONS = { longs: String, enums: String, defaults: true, oneofs: true };

function rootOf(file: string): protobuf.Root {
  const root = new protobuf.Root().loadSync(file, { keepCase: false });
  root.resolveAll();
  return root;
}

function typesOf(root: protobuf.Root): protobuf.Type[] {
  const types: protobuf.Type[] = [];
  (function walk(ns: protobuf.NamespaceBase) {
    for (const o of ns.nestedArray) {
      if (o instanceof protobuf.Type) types.push(o);
      if (o instanceof protobuf.Namespace || o instanceof protobuf.Type) walk(o);
    }
  })(root);
  return types;
}

const cri = rootOf(PROTOS[0]!);

// A small deterministic generator, so a failure is the same on every run.
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

const LONG_SAMPLES = ['0', '1', '-1', '9007199254740993', '1765432109876543210', '-9223372036854775808', '9223372036854775807'];
const ULONG_SAMPLES = ['0', '1', '4294967296', '9007199254740993', '18446744073709551615', '1765432109876543210'];

function scalar(type: string, rand: () => number): unknown {
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
  switch (type) {
    case 'string':
      return pick(['', 'a', 'kube-system', 'héllo ✓', '__proto__']);
    case 'bool':
      return rand() < 0.5;
    case 'bytes':
      return Buffer.from(pick(['', 'out', 'line\n\x00\xff']), 'latin1');
    case 'int64':
    case 'sint64':
    case 'sfixed64':
      return pick(LONG_SAMPLES);
    case 'uint64':
    case 'fixed64':
      return pick(ULONG_SAMPLES);
    case 'double':
    case 'float':
      return pick([0, 1.5, -2.25]);
    case 'int32':
    case 'sint32':
    case 'sfixed32':
      return pick([0, 1, -1, 2147483647, -2147483648]);
    default:
      return pick([0, 1, 4294967295]);
  }
}

/** A message of type t with each field present or not, at random. */
function fill(t: protobuf.Type, rand: () => number, depth: number): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const f of t.fieldsArray) {
    if (rand() < 0.3) continue;
    const one = (): unknown => {
      const rt = f.resolvedType;
      if (rt instanceof protobuf.Type) return depth > 3 ? {} : fill(rt, rand, depth + 1);
      if (rt instanceof protobuf.Enum)
        return rand() < 0.1 ? 77 : Object.values(rt.values)[Math.floor(rand() * Object.keys(rt.values).length)];
      return scalar(f.type, rand);
    };
    if (f.map) {
      const m: Record<string, unknown> = {};
      for (let i = Math.floor(rand() * 3); i > 0; i--) m[`k${i}`] = one();
      o[f.name] = m;
    } else if (f.repeated) o[f.name] = Array.from({ length: Math.floor(rand() * 3) }, one);
    else o[f.name] = one();
  }
  return o;
}

test('every message decodes to what protobufjs toObject makes of it', () => {
  const rand = rng(47);
  let compared = 0;
  for (const file of PROTOS) {
    for (const t of typesOf(rootOf(file))) {
      const decode = decoderOf(t);
      for (let i = 0; i < 8; i++) {
        const wire = t.encode(t.fromObject(fill(t, rand, 0))).finish();
        assert.deepStrictEqual(decode(wire), t.toObject(t.decode(wire), OPTIONS), `${t.fullName}, sample ${i}`);
        compared++;
      }
    }
  }
  assert.ok(compared > 2000, `${compared} samples`);
});

test('grpcServices makes the services proto-loader makes, and reads and writes as it does', () => {
  const rand = rng(36);
  for (const file of PROTOS) {
    const ours = grpcServices(file) as Record<string, Record<string, Record<string, any>>>;
    const theirs = loadSync(file, { keepCase: false, ...OPTIONS }) as unknown as Record<string, Record<string, Record<string, any>>>;
    const serviceNames = Object.keys(theirs).filter((k) => theirs[k]!.format === undefined);
    assert.deepEqual(Object.keys(ours).sort(), serviceNames.sort(), file);
    const root = rootOf(file);
    for (const name of serviceNames) {
      for (const [method, d] of Object.entries(theirs[name]!)) {
        const o = ours[name]![method]!;
        for (const k of ['path', 'requestStream', 'responseStream', 'originalName']) assert.equal(o[k], d[k], `${name}.${method} ${k}`);
        const m = root.lookupService(name).methods[method]!;
        for (const [t, ser, de] of [
          [m.resolvedRequestType!, 'requestSerialize', 'requestDeserialize'],
          [m.resolvedResponseType!, 'responseSerialize', 'responseDeserialize'],
        ] as const) {
          const value = t.toObject(t.fromObject(fill(t, rand, 0)), OPTIONS);
          const wire = o[ser](value);
          assert.deepEqual(wire, d[ser](value), `${name}.${method} ${ser}`);
          assert.deepStrictEqual(o[de](wire), d[de](wire), `${name}.${method} ${de}`);
        }
      }
    }
  }
});

test('repeated numbers decode packed and unpacked alike', () => {
  const t = cri.lookupType('runtime.v1.LinuxContainerSecurityContext');
  const f = t.fields.supplementalGroups!;
  assert.equal(f.type, 'int64');
  const value = { supplementalGroups: ['1', '-5', '1765432109876543210'] };
  const packed = t.encode(t.fromObject(value)).finish();
  const w = protobuf.Writer.create();
  for (const g of value.supplementalGroups) w.uint32((f.id << 3) | 0).int64(g);
  const unpacked = w.finish();
  assert.notDeepEqual(packed, unpacked);
  for (const wire of [packed, unpacked]) assert.deepEqual(decoderOf(t)(wire).supplementalGroups, value.supplementalGroups);
});

test('a map entry without its value holds the zero value', () => {
  const t = cri.lookupType('runtime.v1.PodSandbox');
  const id = t.fields.labels!.id;
  const w = protobuf.Writer.create();
  w.uint32((id << 3) | 2)
    .fork()
    .uint32((1 << 3) | 2)
    .string('a')
    .uint32((2 << 3) | 2)
    .string('x')
    .ldelim();
  w.uint32((id << 3) | 2)
    .fork()
    .uint32((1 << 3) | 2)
    .string('b')
    .ldelim();
  assert.deepEqual(decoderOf(t)(w.finish()).labels, { a: 'x', b: '' });
});

test('a field of a kind no service here has is refused when its type is compiled', () => {
  for (const [field, want] of [
    ['sint64 a = 1;', /M\.a: fields of type sint64 are not read here/],
    ['map<int32, string> a = 1;', /M\.a: maps with other keys than strings are not read here/],
  ] as const) {
    const t = protobuf.parse(`syntax = "proto3"; message M { ${field} }`, { keepCase: false }).root.lookupType('M');
    assert.throws(() => decoderOf(t), want);
  }
});

test('a truncated message is an error, not a wrong value', () => {
  const t = cri.lookupType('runtime.v1.ContainerStatus');
  const wire = t.encode(t.fromObject({ id: 'abc', createdAt: '1765432109876543210' })).finish();
  assert.throws(() => decoderOf(t)(wire.subarray(0, wire.length - 2)), RangeError);
});

test('decimal writes 64-bit values as long.js does', () => {
  const cases: [number, number, boolean, string][] = [
    [0, 0, true, '0'],
    [1, 0, false, '1'],
    [0xffffffff, 0x1fffff, false, '9007199254740991'],
    [0, 0x200000, false, '9007199254740992'],
    [0xffffffff, 0xffffffff, false, '18446744073709551615'],
    [0xffffffff, 0xffffffff, true, '-1'],
    [0, 0x80000000, true, '-9223372036854775808'],
    [0xffffffff, 0x7fffffff, true, '9223372036854775807'],
  ];
  for (const [lo, hi, signed, want] of cases) assert.equal(decimal(lo, hi, signed), want, `${lo} ${hi} ${signed}`);
});
