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

const byNumber = new WeakMap<protobuf.Type, { plans: Plan[]; index: (number | undefined)[] }>();

function numbered(type: protobuf.Type) {
  let n = byNumber.get(type);
  if (!n) {
    const plans = planOf(type);
    const index: (number | undefined)[] = [];
    type.fieldsArray.forEach((f, i) => {
      index[f.id] = i;
    });
    n = { plans, index };
    byNumber.set(type, n);
  }
  return n;
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
  const s = p.special;
  if (s === 'time' || s === 'microtime' || s === 'quantity' || s === 'intorstring' || s === 'rawjson')
    // Their few fields read straight into the object specialToJson takes.
    return (r) => {
      const end = r.uint32() + r.pos;
      const m: Obj = {};
      while (r.pos < end) {
        const tag = r.uint32();
        const id = tag >>> 3;
        if (s === 'quantity' && id === 1) m.string = r.string();
        else if (s === 'rawjson' && id === 1) m.raw = r.bytes();
        else if (s === 'intorstring' && id === 3) m.strVal = r.string();
        else if (id === 1)
          m.seconds = r.int64(); // time's seconds, intorstring's type
        else if (id === 2)
          m.nanos = r.int32(); // time's nanos, intorstring's intVal
        else r.skipType(tag & 7);
      }
      if (s === 'intorstring') return num(m.seconds) === 1 ? ((m.strVal as string | undefined) ?? '') : num(m.nanos);
      return specialToJson(s, m);
    };
  if (s) return (r) => specialToJson(s, t.decode(r, r.uint32()) as unknown as Obj);
  return (r) => {
    const len = r.uint32();
    return readMessage(t, r, r.pos + len);
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
  const { plans, index } = numbered(type);
  const vals: unknown[] = new Array(plans.length);
  while (r.pos < end) {
    const tag = r.uint32();
    const i = index[tag >>> 3];
    if (i === undefined) {
      r.skipType(tag & 7);
      continue;
    }
    const p = plans[i]!;
    if (p.kind === 'map') {
      const [k, v] = readEntry(p, r);
      ((vals[i] as Obj | undefined) ?? ((vals[i] = {}) as Obj))[k] = v;
    } else if (p.kind === 'repeated') {
      const a = (vals[i] as unknown[] | undefined) ?? (vals[i] = []);
      if ((tag & 7) === 2 && PACKABLE.has(p.scalar)) {
        const packedEnd = r.uint32() + r.pos;
        while (r.pos < packedEnd) (a as unknown[]).push(readValue(p, r));
      } else (a as unknown[]).push(readValue(p, r));
    } else vals[i] = readValue(p, r);
  }
  const out: Obj = {};
  for (let i = 0; i < plans.length; i++) {
    const p = plans[i]!;
    const v = vals[i];
    if (v === undefined) {
      // Absent: a nil slice, map or pointer (null unless omitempty), or a zero struct or scalar.
      if (p.kind !== 'one' || p.ptr) {
        if (!p.omitempty) out[p.json] = null;
      } else if (p.type) {
        const j = p.special ? specialToJson(p.special, {}) : readMessage(p.type, r, r.pos);
        if (p.omitzero && j === null) continue;
        if (p.inline && !p.special) Object.assign(out, j as Obj);
        else out[p.json] = j;
      } else if (!p.omitempty) out[p.json] = p.zero;
      continue;
    }
    if (p.kind === 'one' && !p.ptr) {
      // encoding/json never omits a struct for omitempty; omitzero drops a zero Time.
      if (p.type) {
        if (p.omitzero && v === null) continue;
        if (p.inline && !p.special) {
          Object.assign(out, v as Obj);
          continue;
        }
      } else if (p.omitempty && (v === '' || v === 0 || v === false)) continue;
    }
    out[p.json] = v;
  }
  return out;
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
