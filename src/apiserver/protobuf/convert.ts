// A protobuf message from the wire to the very object the JSON path yields, and back: what Go's
// encoding/json makes of the Go struct the message unmarshals into. Each field's Go JSON tag and
// pointer-ness come from proto/k8s ((k8s.json), (k8s.ptr)); the types upstream hand-writes
// (metav1.Time, Quantity, IntOrString, RawExtension...) are (k8s.special).
import protobuf from 'protobufjs';

type Json = unknown;
type Obj = Record<string, unknown>;

interface Plan {
  proto: string;
  json: string;
  omitempty: boolean;
  omitzero: boolean;
  inline: boolean;
  ptr: boolean;
  kind: 'repeated' | 'map' | 'one';
  /** The message of the value (the element's, a map's value's), or undefined for a scalar. */
  type?: protobuf.Type;
  /** The type's (k8s.special), when it has one. */
  special?: string;
  scalar: string;
  /** Go's zero value of a scalar in JSON (the field absent from the wire). */
  zero: Json;
  /** One value read from the wire, in its JSON form (set on first read: types nest each other). */
  read?: (r: protobuf.Reader) => Json;
}

const plans = new WeakMap<protobuf.Type, Plan[]>();

function planOf(type: protobuf.Type): Plan[] {
  let p = plans.get(type);
  if (p) return p;
  p = [];
  // Set before the fields are planned: a type may contain itself (JSONSchemaProps-like recursion).
  plans.set(type, p);
  for (const f of type.fieldsArray) {
    f.resolve();
    const tag = String(f.options?.['(k8s.json)'] ?? f.name).split(',');
    const opts = new Set(tag.slice(1));
    const t = f.resolvedType instanceof protobuf.Type ? f.resolvedType : undefined;
    const s = t && special(t);
    const scalar = f.type;
    p.push({
      proto: f.name,
      json: tag[0]!,
      omitempty: opts.has('omitempty'),
      omitzero: opts.has('omitzero'),
      inline: opts.has('inline') || tag[0] === '',
      ptr: f.options?.['(k8s.ptr)'] === true,
      kind: f.map ? 'map' : f.repeated ? 'repeated' : 'one',
      type: t,
      special: s,
      scalar,
      zero: ZERO[scalar] ?? 0,
    });
  }
  return p;
}

function base64(v: unknown): string {
  const b = v as Uint8Array;
  return Buffer.from(b.buffer, b.byteOffset, b.length).toString('base64');
}

const special = (t: protobuf.Type) => t.options?.['(k8s.special)'] as string | undefined;

const num = (v: unknown) => (typeof v === 'object' && v !== null ? (v as { toNumber(): number }).toNumber() : Number(v ?? 0));

/** Go's time.Time in RFC 3339 as metav1.Time (seconds) and MicroTime (microseconds) marshal it, in UTC. */
function rfc3339(seconds: number, nanos: number, micro: boolean): string {
  const s = new Date(seconds * 1000).toISOString().slice(0, 19);
  return micro ? `${s}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${s}Z`;
}

/** The JSON of a special type's value; undefined is Go's JSON null. */
function specialToJson(kind: string, m: Obj | undefined): Json {
  switch (kind) {
    case 'time':
    case 'microtime': {
      const seconds = num(m?.seconds);
      const nanos = num(m?.nanos);
      if (seconds === 0 && nanos === 0) return null;
      return rfc3339(seconds, nanos, kind === 'microtime');
    }
    case 'quantity':
      return (m?.string as string | undefined) || '0';
    case 'intorstring':
      return num(m?.type) === 1 ? ((m?.strVal as string | undefined) ?? '') : num(m?.intVal);
    case 'rawjson': {
      const raw = (m?.raw ?? m?.Raw) as Uint8Array | undefined;
      if (!raw?.length) return null;
      return JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString('utf8'));
    }
    case 'items': {
      const items = m?.items as unknown[] | undefined;
      return items?.length ? items : null;
    }
  }
  throw new Error(`unknown special type ${kind}`);
}

const ZERO: Record<string, unknown> = { string: '', bool: false, bytes: null };

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
  const s = p.special;
  if (s === 'quantity')
    return (r) => {
      const end = r.uint32() + r.pos;
      let q = '';
      while (r.pos < end) {
        const tag = r.uint32();
        if (tag >>> 3 === 1) q = r.string();
        else r.skipType(tag & 7);
      }
      return q || '0';
    };
  if (s === 'time' || s === 'microtime') {
    const micro = s === 'microtime';
    return (r) => {
      const end = r.uint32() + r.pos;
      let seconds = 0;
      let nanos = 0;
      while (r.pos < end) {
        const tag = r.uint32();
        if (tag >>> 3 === 1) seconds = num(r.int64());
        else if (tag >>> 3 === 2) nanos = r.int32();
        else r.skipType(tag & 7);
      }
      return seconds === 0 && nanos === 0 ? null : rfc3339(seconds, nanos, micro);
    };
  }
  if (s === 'intorstring')
    return (r) => {
      const end = r.uint32() + r.pos;
      let kind = 0;
      let i = 0;
      let str = '';
      while (r.pos < end) {
        const tag = r.uint32();
        const id = tag >>> 3;
        if (id === 1) kind = num(r.int64());
        else if (id === 2) i = r.int32();
        else if (id === 3) str = r.string();
        else r.skipType(tag & 7);
      }
      return kind === 1 ? str : i;
    };
  if (s) return (r) => specialToJson(s, t.decode(r, r.uint32()) as unknown as Obj);
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
  if (value === undefined) value = p.type ? (p.special ? specialToJson(p.special, {}) : readMessage(p.type, r, r.pos)) : p.zero;
  return [key, value];
}

const PACKABLE = new Set(['int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'bool', 'double']);

/**
 * A message straight from the wire to what Go's encoding/json writes of the struct it unmarshals
 * into, in one pass (no intermediate protobufjs message): each field's value in its JSON form,
 * then Go's zero values and omitempty applied to what the wire left out.
 */
export function readMessage(type: protobuf.Type, r: protobuf.Reader, end: number): Obj {
  return compiledOf(type)(r, end);
}

function compiledOf(type: protobuf.Type): (r: protobuf.Reader, end: number) => Obj {
  let read = compiled.get(type);
  if (!read) {
    read = compile(type);
    compiled.set(type, read);
  }
  return read;
}

const compiled = new WeakMap<protobuf.Type, (r: protobuf.Reader, end: number) => Obj>();

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
function compile(type: protobuf.Type): (r: protobuf.Reader, end: number) => Obj {
  const plans = planOf(type);
  const deps: unknown[] = [];
  const dep = (x: unknown) => `d[${deps.push(x) - 1}]`;
  const vars = plans.map((_, i) => `v${i}`);
  const code: string[] = [];
  if (vars.length) code.push(`var ${vars.join(', ')};`);
  code.push('while (r.pos < end) {', 'var t = r.uint32();', 'switch (t >>> 3) {');
  type.fieldsArray.forEach((f, i) => {
    const p = plans[i]!;
    const v = `v${i}`;
    const read = (!p.type && INLINE_READS[p.scalar]) || `${dep(readerOf(p))}(r)`;
    if (p.kind === 'map')
      code.push(`case ${f.id}: { var e = ${dep(readEntry)}(${dep(p)}, r); (${v} || (${v} = {}))[e[0]] = e[1]; break; }`);
    else if (p.kind === 'repeated') {
      const push = `(${v} || (${v} = [])).push(${read})`;
      if (PACKABLE.has(p.scalar))
        code.push(`case ${f.id}: if ((t & 7) === 2) { var pe = r.uint32() + r.pos; while (r.pos < pe) ${push}; } else ${push}; break;`);
      else code.push(`case ${f.id}: ${push}; break;`);
    } else code.push(`case ${f.id}: ${v} = ${read}; break;`);
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
      const t = p.type;
      const s = p.special;
      const zero = s ? () => specialToJson(s, {}) : (r: protobuf.Reader) => readMessage(t, r, r.pos);
      code.push(`if (${v} === undefined) ${v} = ${dep(zero)}(r);`);
      const set = p.inline && !s ? `Object.assign(o, ${v});` : `o[${key}] = ${v};`;
      code.push(p.omitzero ? `if (${v} !== null) ${set}` : set);
    } else if (p.omitempty) code.push(`if (${v} !== undefined && ${v} !== '' && ${v} !== 0 && ${v} !== false) o[${key}] = ${v};`);
    else code.push(`o[${key}] = ${v} === undefined ? ${JSON.stringify(p.zero)} : ${v};`);
  });
  code.push('return o;');
  return new Function('d', `return function read_${type.name}(r, end) {\n${code.join('\n')}\n};`)(deps);
}

function specialFromJson(kind: string, v: Json): Obj | undefined {
  switch (kind) {
    case 'time':
    case 'microtime': {
      if (typeof v !== 'string') return undefined;
      const ms = Date.parse(v);
      if (Number.isNaN(ms)) throw new Error(`not an RFC 3339 time: ${v}`);
      // metav1.Time goes on the wire in whole seconds (Time.ProtoTime leaves nanos out, as its JSON
      // has only seconds); MicroTime with its fraction.
      if (kind === 'time') return { seconds: Math.floor(ms / 1000) };
      const frac = /\.(\d+)/.exec(v)?.[1] ?? '';
      return { seconds: Math.floor(ms / 1000), nanos: Number(frac.padEnd(9, '0').slice(0, 9)) };
    }
    case 'quantity':
      return { string: typeof v === 'number' ? String(v) : (v as string) };
    case 'intorstring':
      return typeof v === 'string' ? { type: 1, strVal: v } : { type: 0, intVal: v as number };
    case 'rawjson':
      return v === null || v === undefined ? undefined : { raw: Buffer.from(JSON.stringify(v)), Raw: Buffer.from(JSON.stringify(v)) };
    case 'items':
      return { items: v as unknown[] };
  }
  throw new Error(`unknown special type ${kind}`);
}

function valueFromJson(p: Plan, v: Json): unknown {
  if (!p.type) return p.scalar === 'bytes' ? Buffer.from(v as string, 'base64') : v;
  return p.special ? specialFromJson(p.special, v) : fromJson(p.type, v as Obj);
}

/** An object as the JSON path has it to the message protobufjs encodes (proto field names, wire values). */
export function fromJson(type: protobuf.Type, o: Obj): Obj {
  const out: Obj = {};
  for (const p of planOf(type)) {
    const v = p.inline ? o : o[p.json];
    if (v === undefined || v === null) continue;
    if (p.kind === 'repeated') out[p.proto] = (v as unknown[]).map((x) => valueFromJson(p, x));
    else if (p.kind === 'map') {
      const r: Obj = {};
      for (const [k, x] of Object.entries(v as Obj)) r[k] = valueFromJson(p, x);
      out[p.proto] = r;
    } else {
      const x = valueFromJson(p, v);
      if (x !== undefined) out[p.proto] = x;
    }
  }
  return out;
}
