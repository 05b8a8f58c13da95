// `npm run gen:k8s`: proto/k8s (hack/tools/kube/kube-proto's) through protobufjs to the schema the
// kubelet reads at run time (schema.ts), so protobufjs's reflection runs only here and in tests.
// Left out of dist/ (tsconfig.build.json).
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { type FieldSpec, type Label, SCHEMA_FILE, type Schema, type Special } from './schema.ts';

// proto/ sits at the repo root, three levels above src/apiserver/protobuf/.
export const K8S_PROTO_DIR = fileURLToPath(new URL('../../../proto/k8s', import.meta.url));

/** Every .proto file under proto/k8s, relative to it (k8s.io/api/core/v1/types.proto...). */
export function protoFiles(dir = K8S_PROTO_DIR): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.proto')).sort();
}

/** A Root of the given files, their imports resolved under dir. */
export function loadRoot(dir: string, files: string[]): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(dir, target);
  root.loadSync(files, { keepCase: true });
  root.resolveAll();
  return root;
}

const fullName = (obj: protobuf.ReflectionObject) => obj.fullName.slice(1);

/** One field as the schema has it; kubelet-ts reads only maps of string keys. */
export function fieldSpec(f: protobuf.Field): FieldSpec {
  f.resolve();
  if (f instanceof protobuf.MapField && f.keyType !== 'string') throw new Error(`${fullName(f)}: a map of ${f.keyType} keys`);
  if (f.resolvedType instanceof protobuf.Enum) throw new Error(`${fullName(f)}: an enum`);
  const label: Label = f.map ? 'map' : f.repeated ? 'repeated' : 'one';
  const type = f.resolvedType ? fullName(f.resolvedType) : f.type;
  return [f.id, f.name, String(f.options?.['(k8s.json)'] ?? f.name), f.options?.['(k8s.ptr)'] === true ? 1 : 0, label, type];
}

/** Every message of root, by full name, its fields by number. */
export function schemaOf(root: protobuf.Root): Schema {
  const schema: Schema = {};
  const walk = (ns: protobuf.NamespaceBase) => {
    for (const obj of ns.nestedArray) {
      if (obj instanceof protobuf.Type) {
        const fields = obj.fieldsArray.map(fieldSpec).sort((a, b) => a[0] - b[0]);
        const special = obj.options?.['(k8s.special)'] as Special | undefined;
        schema[fullName(obj)] = special ? { special, fields } : { fields };
      }
      if (obj instanceof protobuf.Namespace || obj instanceof protobuf.Type) walk(obj);
    }
  };
  walk(root);
  return schema;
}

if (import.meta.main) writeFileSync(SCHEMA_FILE, `${JSON.stringify(schemaOf(loadRoot(K8S_PROTO_DIR, protoFiles())))}\n`);
