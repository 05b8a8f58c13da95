// A message straight from the wire to what Go's encoding/json writes of the struct it unmarshals
// into (convert.ts's plans), in one pass: no intermediate protobufjs message.
import type protobuf from 'protobufjs/minimal.js';
import { type Json, num, type Obj, type Plan, planOf, SPECIAL_ZERO, specialReader } from './convert.ts';

function base64(v: unknown): string {
  const b = v as Uint8Array;
  return Buffer.from(b.buffer, b.byteOffset, b.length).toString('base64');
}

const SCALAR_READERS: Record<string, (r: protobuf.Reader) => Json> = {
  string: (r) => r.string(),
  bool: (r) => r.bool(),
  int32: (r) => r.int32(),
  int64: (r) => num(r.int64()),
  uint32: (r) => r.uint32(),
  uint64: (r) => num(r.uint64()),
  sint32: (r) => r.sint32(),
  sint64: (r) => num(r.sint64()),
  double: (r) => r.double(),
  bytes: (r) => base64(r.bytes()),
};

/** The reader of field p's values (chosen once: the kubelet runs without an optimizing compiler). */
function readerOf(p: Plan): (r: protobuf.Reader) => Json {
  const t = p.type;
  if (!t) {
    const read = SCALAR_READERS[p.scalar];
    if (!read) throw new Error(`unsupported scalar ${p.scalar}`);
    return read;
  }
  if (p.special) return specialReader(p.special);
  let read: ((r: protobuf.Reader, end: number) => Obj) | undefined;
  return (r) => {
    const len = r.uint32();
    read ??= compiledOf(t);
    return read(r, r.pos + len);
  };
}

/** One value of field p from the wire, already in its JSON form. */
function readValue(p: Plan, r: protobuf.Reader): Json {
  return (p.read ??= readerOf(p))(r);
}

/** The JSON of a message-typed value absent from the wire: its type's zero value. */
function zeroOf(p: Plan, r: protobuf.Reader): Json {
  return p.special ? SPECIAL_ZERO[p.special] : readMessage(p.type!, r, r.pos);
}

/** A map entry's key (1) and value (2). */
function readEntry(p: Plan, r: protobuf.Reader): [string, Json] {
  const end = r.uint32() + r.pos;
  let key = '';
  let value: Json;
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag >>> 3 === 1) key = r.string();
    else if (tag >>> 3 === 2) value = readValue(p, r);
    else r.skipType(tag & 7);
  }
  // An absent value is its type's zero.
  if (value === undefined) value = p.type ? zeroOf(p, r) : p.zero;
  return [key, value];
}

const PACKABLE = new Set(['int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'bool', 'double']);

/**
 * A message straight from the wire to what Go's encoding/json writes of the struct it unmarshals
 * into, in one pass (no intermediate protobufjs message): each field's value in its JSON form,
 * then Go's zero values and omitempty applied to what the wire left out.
 */
export function readMessage(type: string, r: protobuf.Reader, end: number): Obj {
  return compiledOf(type)(r, end);
}

const compiled = new Map<string, (r: protobuf.Reader, end: number) => Obj>();

function compiledOf(type: string): (r: protobuf.Reader, end: number) => Obj {
  let read = compiled.get(type);
  if (!read) {
    read = compile(type);
    compiled.set(type, read);
  }
  return read;
}

const INLINE_READS: Record<string, string> = {
  string: 'r.string()',
  bool: 'r.bool()',
  int32: 'r.int32()',
  uint32: 'r.uint32()',
  sint32: 'r.sint32()',
  double: 'r.double()',
};

/**
 * readMessage for one type as straight-line code, generated once (as protobufjs generates its
 * decoders): the kubelet runs V8 without its optimizing tiers, where a loop over the field plans
 * costs far more than a switch and locals.
 */
function compile(type: string): (r: protobuf.Reader, end: number) => Obj {
  const plans = planOf(type);
  const deps: unknown[] = [];
  const dep = (x: unknown) => `d[${deps.push(x) - 1}]`;
  const vars = plans.map((_, i) => `v${i}`);
  const code: string[] = [];
  if (vars.length) code.push(`var ${vars.join(', ')};`);
  code.push('while (r.pos < end) {', 'var t = r.uint32();', 'switch (t >>> 3) {');
  plans.forEach((p, i) => {
    const v = `v${i}`;
    const read = (!p.type && INLINE_READS[p.scalar]) || `${dep(readerOf(p))}(r)`;
    if (p.kind === 'map')
      code.push(`case ${p.id}: { var e = ${dep(readEntry)}(${dep(p)}, r); (${v} || (${v} = {}))[e[0]] = e[1]; break; }`);
    else if (p.kind === 'repeated') {
      const push = `(${v} || (${v} = [])).push(${read})`;
      if (PACKABLE.has(p.scalar))
        code.push(`case ${p.id}: if ((t & 7) === 2) { var pe = r.uint32() + r.pos; while (r.pos < pe) ${push}; } else ${push}; break;`);
      else code.push(`case ${p.id}: ${push}; break;`);
    } else code.push(`case ${p.id}: ${v} = ${read}; break;`);
  });
  code.push('default: r.skipType(t & 7);', '}', '}', 'var o = {};');
  plans.forEach((p, i) => {
    const v = `v${i}`;
    const key = JSON.stringify(p.json);
    if (p.kind !== 'one' || p.ptr) {
      // A slice, map or pointer: nil when absent (null unless omitempty).
      code.push(p.omitempty ? `if (${v} !== undefined) o[${key}] = ${v};` : `o[${key}] = ${v} === undefined ? null : ${v};`);
    } else if (p.type) {
      // A struct: its zero value when absent; encoding/json never omits one for omitempty, omitzero drops a zero Time.
      code.push(`if (${v} === undefined) ${v} = ${dep(zeroOf)}(${dep(p)}, r);`);
      const set = p.inline && !p.special ? `Object.assign(o, ${v});` : `o[${key}] = ${v};`;
      code.push(p.omitzero ? `if (${v} !== null) ${set}` : set);
    } else if (p.omitempty) code.push(`if (${v} !== undefined && ${v} !== '' && ${v} !== 0 && ${v} !== false) o[${key}] = ${v};`);
    else code.push(`o[${key}] = ${v} === undefined ? ${JSON.stringify(p.zero)} : ${v};`);
  });
  code.push('return o;');
  const name = type.slice(type.lastIndexOf('.') + 1);
  return new Function('d', `return function read_${name}(r, end) {\n${code.join('\n')}\n};`)(deps);
}
