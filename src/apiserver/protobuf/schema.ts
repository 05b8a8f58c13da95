// The messages of the built-in API types as plain data: proto/k8s/schema.json, which `npm run
// gen:k8s` (schema-gen.ts) writes from proto/k8s (hack/tools/kube/kube-proto's). Read on first
// use, so only a kubelet whose contentType is protobuf pays for it; a JSON file rather than a
// parsed .proto (protobufjs's Root keeps megabytes) or a generated module (V8 keeps a module's
// source text beside what it builds).
import { readFileSync } from 'node:fs';

/** A type upstream hand-writes whose JSON form is not its message's (convert.ts's readers and writers). */
export type Special = 'time' | 'microtime' | 'quantity' | 'intorstring' | 'rawjson' | 'items';

/** How many values a field holds: one (proto2 optional), a repeated field's, a map's (string keys). */
export type Label = 'one' | 'repeated' | 'map';

/**
 * One field: its number, its proto name, the Go field's JSON tag ((k8s.json), the proto name when
 * none), whether the Go field is a pointer ((k8s.ptr)), its label, and its type: a scalar's proto
 * name (string, int64...) or a message's full name (a map's: its value's).
 */
export type FieldSpec = [id: number, name: string, json: string, ptr: 0 | 1, label: Label, type: string];

export interface MessageSpec {
  /** The message's (k8s.special), when it has one. */
  special?: Special;
  /** By number, as proto/k8s declares them and gogo's generated Marshal writes them. */
  fields: FieldSpec[];
}

/** Every message by its full name (k8s.io.api.core.v1.Pod). */
export type Schema = Record<string, MessageSpec>;

// proto/ sits at the repo root, three levels above both src/apiserver/protobuf/ and dist/apiserver/protobuf/.
export const SCHEMA_FILE = new URL('../../../proto/k8s/schema.json', import.meta.url);

let loaded: Schema | undefined;

/** The message of that full name, or undefined when proto/k8s defines none. */
export function messageOf(name: string): MessageSpec | undefined {
  loaded ??= JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as Schema;
  return Object.hasOwn(loaded, name) ? loaded[name] : undefined;
}
