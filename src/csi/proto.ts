// The CSI Identity and Node services, loaded from proto/ as src/devices/proto.ts loads the device plugin API.
import { fileURLToPath } from 'node:url';
import { loadSync, type Options } from '@grpc/proto-loader';
import type { IdentityDefinition } from './generated/csi/v1/Identity.ts';
import type { NodeDefinition } from './generated/csi/v1/Node.ts';

// proto/ sits at the repo root, two levels above both src/csi/ and dist/csi/.
export const CSI_PROTO = fileURLToPath(new URL('../../proto/csi/v1/csi.proto', import.meta.url));

// These must match the flags of the "gen:csi" script, or the generated types lie.
const LOADER_OPTIONS: Options = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true };

export interface CsiServices {
  identity: IdentityDefinition;
  node: NodeDefinition;
}

let loaded: CsiServices | undefined;

/** The method definitions of both services, parsed once per process. */
export function csiServices(): CsiServices {
  if (!loaded) {
    const pkg = loadSync(CSI_PROTO, LOADER_OPTIONS);
    // The generated types describe exactly these definitions; proto-loader types them loosely.
    loaded = {
      identity: pkg['csi.v1.Identity'] as unknown as IdentityDefinition,
      node: pkg['csi.v1.Node'] as unknown as NodeDefinition,
    };
  }
  return loaded;
}
