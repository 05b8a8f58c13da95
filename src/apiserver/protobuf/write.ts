// An object as the JSON path has it straight to the wire (convert.ts's plans): the message Go's
// encoding/json would unmarshal it into, as gogo's generated Marshal of k8s.io/api writes it:
// fields by number, repeated scalars unpacked (proto2), a map as entries of key (1) and value (2).
// What JSON leaves out (null, absent) is not sent; what it has is, zero or not.
import type protobuf from 'protobufjs/minimal.js';
import { type Json, type Obj, type Plan, planOf, specialOmitted, writeSpecial } from './convert.ts';

/** Each scalar's wire type and how a JSON value of it goes on the wire. */
const SCALAR_WRITERS: Record<string, [wire: number, write: (w: protobuf.Writer, v: Json) => void]> = {
  string: [2, (w, v) => w.string(v as string)],
  bool: [0, (w, v) => w.bool(v as boolean)],
  int32: [0, (w, v) => w.int32(v as number)],
  int64: [0, (w, v) => w.int64(v as number)],
  uint32: [0, (w, v) => w.uint32(v as number)],
  uint64: [0, (w, v) => w.uint64(v as number)],
  sint32: [0, (w, v) => w.sint32(v as number)],
  sint64: [0, (w, v) => w.sint64(v as number)],
  double: [1, (w, v) => w.double(v as number)],
  // encoding/json's []byte is base64.
  bytes: [2, (w, v) => w.bytes(Buffer.from(v as string, 'base64'))],
};

/** One value of field p as field number id (a map entry's value is 2): its tag, then the value. */
function writeValue(p: Plan, id: number, v: Json, w: protobuf.Writer): void {
  if (!p.type) {
    const scalar = SCALAR_WRITERS[p.scalar];
    if (!scalar) throw new Error(`unsupported scalar ${p.scalar}`);
    scalar[1](w.uint32((id << 3) | scalar[0]), v);
    return;
  }
  w.uint32((id << 3) | 2).fork();
  if (p.special) writeSpecial(p.special, v, w);
  // A null struct in a slice or a map is Go's zero value: an empty message.
  else if (v !== null && v !== undefined) writeMessage(p.type, v as Obj, w);
  w.ldelim();
}

/** A message of the type of that full name from its JSON form, onto w (returned, as protobufjs's encode does). */
export function writeMessage(type: string, o: Obj, w: protobuf.Writer): protobuf.Writer {
  for (const p of planOf(type)) {
    // An inline struct (Go's embedded field) has its fields in the object itself.
    const v = p.inline ? o : o[p.json];
    if (v === undefined || v === null) continue;
    if (p.kind === 'repeated') for (const x of v as Json[]) writeValue(p, p.id, x, w);
    else if (p.kind === 'map')
      for (const k of Object.keys(v as Obj)) {
        w.uint32((p.id << 3) | 2)
          .fork()
          .uint32(10)
          .string(k);
        writeValue(p, 2, (v as Obj)[k], w);
        w.ldelim();
      }
    else if (!(p.special && specialOmitted(p.special, v))) writeValue(p, p.id, v, w);
  }
  return w;
}
