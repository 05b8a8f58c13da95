// The CSI Identity and Node services, loaded from proto/ as src/devices/proto.ts loads the device plugin API.
import { fileURLToPath } from 'node:url';
import { grpcServices } from '../grpc/services.ts';
import type { IdentityDefinition } from './generated/csi/v1/Identity.ts';
import type { NodeDefinition } from './generated/csi/v1/Node.ts';

// proto/ sits at the repo root, two levels above both src/csi/ and dist/csi/.
export const CSI_PROTO = fileURLToPath(new URL('../../proto/csi/v1/csi.proto', import.meta.url));

export interface CsiServices {
  identity: IdentityDefinition;
  node: NodeDefinition;
}

let loaded: CsiServices | undefined;

/** The method definitions of both services, parsed once per process. */
export function csiServices(): CsiServices {
  if (!loaded) {
    const pkg = grpcServices(CSI_PROTO);
    // The generated types describe exactly these definitions; grpcServices types them loosely.
    loaded = {
      identity: pkg['csi.v1.Identity'] as IdentityDefinition,
      node: pkg['csi.v1.Node'] as NodeDefinition,
    };
  }
  return loaded;
}
