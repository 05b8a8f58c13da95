// A gRPC message straight from the wire to the plain object @grpc/proto-loader's deserializer
// made of it (`Type.toObject(Type.decode(b), { longs: String, enums: String, defaults: true,
// oneofs: true })`), in one pass: no intermediate protobufjs message and no `long` object for each
// int64. grpc-js decodes every listed sandbox and container of a CRI relist this way: the
// two-step decoding was the largest piece of the kubelet's own CPU in a burst's profile.
import protobuf from 'protobufjs/minimal.js';
import type { Enum, Field, Type } from 'protobufjs';

export type Decoder = (buf: Uint8Array) => Record<string, unknown>;

type Read = (r: protobuf.Reader, end: number) => Record<string, unknown>;

// The 64-bit kinds proto/'s services use (sint64 and the fixed ones are refused, below).
const LONGS = new Set(['int64', 'uint64']);
const PACKABLE = new Set(['double', 'float', 'int32', 'uint32', 'sint32', 'fixed32', 'sfixed32', 'bool', ...LONGS]);

// The low and high 32 bits of the last 64-bit value read (no object per value).
let lo = 0;
let hi = 0;

function varint64(r: protobuf.Reader): void {
  const b = r.buf;
  let p = r.pos;
  let byte = 0;
  lo = 0;
  hi = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    if (p >= r.len) throw new RangeError('varint past the end of the message');
    byte = b[p++]!;
    lo |= (byte & 0x7f) << shift;
    if (byte < 0x80) {
      r.pos = p;
      lo >>>= 0;
      return;
    }
  }
  if (p >= r.len) throw new RangeError('varint past the end of the message');
  byte = b[p++]!;
  lo = (lo | ((byte & 0x0f) << 28)) >>> 0;
  hi = (byte & 0x7f) >> 4;
  for (let shift = 3; byte >= 0x80; shift += 7) {
    if (shift > 31 || p >= r.len) throw new RangeError('invalid varint');
    byte = b[p++]!;
    hi |= (byte & 0x7f) << shift;
  }
  hi >>>= 0;
  r.pos = p;
}

/** The decimal of the 64 bits in lo and hi, as long.js's toString writes them. */
export function decimal(low: number, high: number, signed: boolean): string {
  if (signed && high & 0x80000000) {
    // Two's complement: the magnitude is the negation.
    const nlo = (~low + 1) >>> 0;
    const nhi = (~high + (nlo === 0 ? 1 : 0)) >>> 0;
    return `-${decimal(nlo, nhi, false)}`;
  }
  // Exact as a double up to 2^53; nanosecond timestamps (~1.8e18) are above it.
  if (high < 0x200000) return String(high * 4294967296 + low);
  return ((BigInt(high) << 32n) | BigInt(low)).toString();
}

// Each 64-bit kind read into lo/hi, then written as a decimal string (longs: String).
const LONG_READS: Record<string, (r: protobuf.Reader) => string> = {
  int64: (r) => {
    varint64(r);
    return decimal(lo, hi, true);
  },
  uint64: (r) => {
    varint64(r);
    return decimal(lo, hi, false);
  },
};

// The scalars protobufjs's Reader reads to the value toObject keeps as it is.
const SCALAR_READS = new Set(['double', 'float', 'int32', 'uint32', 'sint32', 'fixed32', 'sfixed32', 'bool', 'string', 'bytes']);

const compiled = new WeakMap<Type, Read>();

/**
 * The decoder of type. A field of a kind none of proto/'s services has (sint64, the fixed 64-bit
 * kinds, a map with other keys than strings) is an error here, at the type's first message:
 * decode.test.ts reads every type of those files.
 */
export function decoderOf(type: Type): Decoder {
  const read = readerOf(type);
  return (buf) => {
    const r = protobuf.Reader.create(buf);
    return read(r, r.len);
  };
}

/** f's message type, if its values are messages. */
function messageOf(f: Field): Type | undefined {
  const t = f.resolvedType;
  return t && 'fields' in t ? (t as Type) : undefined;
}

function readerOf(type: Type): Read {
  let read = compiled.get(type);
  if (!read) {
    // Set before compiling, so a type that holds itself (directly or not) finds its reader.
    let body: Read | undefined;
    compiled.set(type, (r, end) => body!(r, end));
    body = compile(type);
    read = body;
    compiled.set(type, read);
  }
  return read;
}

/** The code that reads one value of f from the reader r. */
function valueRead(f: Field, dep: (x: unknown) => string): string {
  const m = messageOf(f);
  if (m) return `${dep(readerOf(m))}(r, r.uint32() + r.pos)`;
  if (f.resolvedType) {
    // An enum: its name, or its number when the name is unknown (as toObject).
    const names = dep((f.resolvedType as Enum).valuesById);
    return `(n = r.int32(), ${names}[n] === undefined ? n : ${names}[n])`;
  }
  if (LONGS.has(f.type)) return `${dep(LONG_READS[f.type])}(r)`;
  if (SCALAR_READS.has(f.type)) return `r.${f.type}()`;
  throw new Error(`${f.fullName}: fields of type ${f.type} are not read here`);
}

/** The code of the value toObject gives f when it is absent from the wire (defaults: true). */
function zeroCode(f: Field): string {
  if (messageOf(f)) return 'null';
  if (f.resolvedType) return JSON.stringify((f.resolvedType as Enum).valuesById[f.typeDefault as number] ?? f.typeDefault);
  if (LONGS.has(f.type)) return "'0'";
  if (f.type === 'bytes') return 'Buffer.alloc(0)';
  return JSON.stringify(f.typeDefault);
}

/**
 * One type's reader as straight-line code generated once, as protobufjs generates its own: the
 * kubelet runs V8 without its optimizing tiers, where a loop over field tables costs far more than
 * a switch and locals.
 */
function compile(type: Type): Read {
  const fields = type.fieldsArray.slice().sort((a, b) => a.id - b.id);
  const deps: unknown[] = [];
  const dep = (x: unknown) => `d[${deps.push(x) - 1}]`;
  const code: string[] = ['var n;', ...fields.map((_, i) => `var v${i};`)];
  code.push('while (r.pos < end) {', 'var t = r.uint32();', 'switch (t >>> 3) {');
  fields.forEach((f, i) => {
    f.resolve();
    const v = `v${i}`;
    const read = valueRead(f, dep);
    const m = messageOf(f);
    if (f.map) {
      if ((f as unknown as protobuf.MapField).keyType !== 'string')
        throw new Error(`${f.fullName}: maps with other keys than strings are not read here`);
      code.push(
        `case ${f.id}: { var e = r.uint32() + r.pos, k = '', x = undefined;`,
        `  while (r.pos < e) { var u = r.uint32(); if (u >>> 3 === 1) k = r.string(); else if (u >>> 3 === 2) x = ${read}; else r.skipType(u & 7); }`,
        // An absent value is its type's zero (a message's: all its fields' zeros).
        `  if (x === undefined) x = ${m ? `${dep(readerOf(m))}(r, r.pos)` : zeroCode(f)};`,
        `  if (${v} === undefined) ${v} = {};`,
        `  if (k === '__proto__') Object.defineProperty(${v}, k, { value: x, enumerable: true, writable: true, configurable: true }); else ${v}[k] = x;`,
        '  break; }',
      );
    } else if (f.repeated) {
      const push = `(${v} || (${v} = [])).push(${read})`;
      if (PACKABLE.has(f.type) || (f.resolvedType && !m))
        code.push(`case ${f.id}: if ((t & 7) === 2) { var pe = r.uint32() + r.pos; while (r.pos < pe) ${push}; } else ${push}; break;`);
      else code.push(`case ${f.id}: ${push}; break;`);
    } else code.push(`case ${f.id}: ${v} = ${read}; break;`);
  });
  code.push('default: r.skipType(t & 7);', '}', '}');
  // toObject's key order: repeated fields, then maps, then the rest; a oneof's members (proto3
  // optional fields too) only when present, each naming itself in the oneof's property.
  const order = [...fields.keys()].filter((i) => !fields[i]!.partOf).sort((a, b) => rank(fields[a]!) - rank(fields[b]!) || a - b);
  const props = order.map((i) => {
    const f = fields[i]!;
    const zero = f.repeated ? '[]' : f.map ? '{}' : zeroCode(f);
    return `${JSON.stringify(f.name)}: v${i} === undefined ? ${zero} : v${i}`;
  });
  code.push(`var o = { ${props.join(', ')} };`);
  fields.forEach((f, i) => {
    if (f.partOf)
      code.push(
        `if (v${i} !== undefined) { o[${JSON.stringify(f.name)}] = v${i}; o[${JSON.stringify(f.partOf.name)}] = ${JSON.stringify(f.name)}; }`,
      );
  });
  code.push('return o;');
  return new Function('d', `return function ${type.name}$read(r, end) {\n${code.join('\n')}\n};`)(deps) as Read;
}

function rank(f: Field): number {
  return f.repeated ? 0 : f.map ? 1 : 2;
}
