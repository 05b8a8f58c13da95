// The protobuf definitions of the built-in API types (proto/k8s, written by hack/tools/kube/kube-proto),
// parsed once, on first use: only a kubelet whose contentType is protobuf pays for them.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

// proto/ sits at the repo root, three levels above both src/apiserver/protobuf/ and dist/apiserver/protobuf/.
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

let loaded: protobuf.Root | undefined;

export function k8sRoot(): protobuf.Root {
  loaded ??= loadRoot(K8S_PROTO_DIR, protoFiles());
  return loaded;
}
