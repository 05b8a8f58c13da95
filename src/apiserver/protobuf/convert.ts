// A protobuf message from the wire to the very object the JSON path yields, and back: what Go's
// encoding/json makes of the Go struct the message unmarshals into. Each field's plan comes from
// the schema of proto/k8s (schema.ts): its Go JSON tag ((k8s.json)) and pointer-ness ((k8s.ptr)).
// The types upstream hand-writes (metav1.Time, Quantity, IntOrString, RawExtension...) are
// (k8s.special): their JSON forms are here, read.ts and write.ts walk the rest.
import type protobuf from 'protobufjs/minimal.js';
import { type Label, messageOf, type Special } from './schema.ts';

export type Json = unknown;
export type Obj = Record<string, unknown>;

export interface Plan {
  id: number;
  json: string;
  omitempty: boolean;
  omitzero: boolean;
  inline: boolean;
  ptr: boolean;
  kind: Label;
  /** The message of the value (the element's, a map's value's) by full name, or undefined for a scalar. */
  type?: string;
  /** The type's (k8s.special), when it has one. */
  special?: Special;
  scalar: string;
  /** Go's zero value of a scalar in JSON (the field absent from the wire). */
  zero: Json;
  /** One value read from the wire, in its JSON form (read.ts sets it on first read: types nest each other). */
  read?: (r: protobuf.Reader) => Json;
}

const ZERO: Record<string, unknown> = { string: '', bool: false, bytes: null };

const plans = new Map<string, Plan[]>();

/** The plans of a message's fields, by number; made on the message's first use. */
export function planOf(name: string): Plan[] {
  let p = plans.get(name);
  if (p) return p;
  const spec = messageOf(name);
  if (!spec) throw new Error(`no protobuf definition of ${name}`);
  p = spec.fields.map(([id, , tag, ptr, kind, type]) => {
    const [json, ...opts] = tag.split(',');
    const message = messageOf(type);
    return {
      id,
      json,
      omitempty: opts.includes('omitempty'),
      omitzero: opts.includes('omitzero'),
      inline: opts.includes('inline') || json === '',
      ptr: ptr === 1,
      kind,
      type: message && type,
      special: message?.special,
      scalar: type,
      zero: ZERO[type] ?? 0,
    };
  });
  plans.set(name, p);
  return p;
}

export const num = (v: unknown) => (typeof v === 'object' && v !== null ? (v as { toNumber(): number }).toNumber() : Number(v ?? 0));

/** Go's time.Time in RFC 3339 as metav1.Time (seconds) and MicroTime (microseconds) marshal it, in UTC. */
function rfc3339(seconds: number, nanos: number, micro: boolean): string {
  const s = new Date(seconds * 1000).toISOString().slice(0, 19);
  return micro ? `${s}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${s}Z`;
}

/** The JSON of a special type's zero value (the message absent from the wire); null is Go's JSON null. */
export const SPECIAL_ZERO: Record<Special, Json> = {
  time: null,
  microtime: null,
  quantity: '0',
  intorstring: 0,
  rawjson: null,
  items: null,
};

/** One special value from the wire (its length first) to its JSON form, read directly (no message in between). */
export function specialReader(kind: Special): (r: protobuf.Reader) => Json {
  switch (kind) {
    case 'quantity':
      // resource.Quantity's Unmarshal: its string (1), '0' when empty.
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
    case 'time':
    case 'microtime': {
      // metav1.Time's and MicroTime's Unmarshal: seconds (1) and nanos (2); the zero time is JSON's null.
      const micro = kind === 'microtime';
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
    case 'intorstring':
      // intstr.IntOrString: type (1), intVal (2), strVal (3).
      return (r) => {
        const end = r.uint32() + r.pos;
        let type = 0;
        let i = 0;
        let str = '';
        while (r.pos < end) {
          const tag = r.uint32();
          const id = tag >>> 3;
          if (id === 1) type = num(r.int64());
          else if (id === 2) i = r.int32();
          else if (id === 3) str = r.string();
          else r.skipType(tag & 7);
        }
        return type === 1 ? str : i;
      };
    case 'rawjson':
      // runtime.RawExtension's and metav1.FieldsV1's raw (1): JSON as it is, null when empty.
      return (r) => {
        const end = r.uint32() + r.pos;
        let raw: Uint8Array | undefined;
        while (r.pos < end) {
          const tag = r.uint32();
          if (tag >>> 3 === 1) raw = r.bytes();
          else r.skipType(tag & 7);
        }
        return raw?.length ? JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString('utf8')) : null;
      };
    case 'items':
      // A named string slice (authentication/v1 ExtraValue): its items (1), null when none.
      return (r) => {
        const end = r.uint32() + r.pos;
        const items: string[] = [];
        while (r.pos < end) {
          const tag = r.uint32();
          if (tag >>> 3 === 1) items.push(r.string());
          else r.skipType(tag & 7);
        }
        return items.length ? items : null;
      };
  }
}

/** Whether a field of a special type is left off the wire: a Time that is not a string (Go's nil *Time). */
export const specialOmitted = (kind: Special, v: Json) => (kind === 'time' || kind === 'microtime') && typeof v !== 'string';

/** A special value's message fields from its JSON form (the value's tag and length are the caller's); nothing for null. */
export function writeSpecial(kind: Special, v: Json, w: protobuf.Writer): void {
  if (v === null || v === undefined) return;
  switch (kind) {
    case 'time':
    case 'microtime': {
      if (typeof v !== 'string') return;
      const ms = Date.parse(v);
      if (Number.isNaN(ms)) throw new Error(`not an RFC 3339 time: ${v}`);
      // metav1.Time goes on the wire in whole seconds (Time.ProtoTime leaves nanos out, as its JSON
      // has only seconds); MicroTime with its fraction.
      w.uint32(8).int64(Math.floor(ms / 1000));
      if (kind === 'microtime') w.uint32(16).int32(Number((/\.(\d+)/.exec(v)?.[1] ?? '').padEnd(9, '0').slice(0, 9)));
      return;
    }
    case 'quantity':
      w.uint32(10).string(typeof v === 'number' ? String(v) : (v as string));
      return;
    case 'intorstring':
      if (typeof v === 'string') w.uint32(8).int64(1).uint32(26).string(v);
      else
        w.uint32(8)
          .int64(0)
          .uint32(16)
          .int32(v as number);
      return;
    case 'rawjson':
      w.uint32(10).bytes(Buffer.from(JSON.stringify(v)));
      return;
    case 'items':
      for (const s of v as string[]) w.uint32(10).string(s);
      return;
  }
}
