import { fileURLToPath } from 'node:url';
import { grpcServices } from '../grpc/services.ts';
import type { ImageServiceDefinition } from './generated/runtime/v1/ImageService.ts';
import type { RuntimeServiceDefinition } from './generated/runtime/v1/RuntimeService.ts';

// proto/ sits at the repo root, two levels above both src/cri/ and dist/cri/.
export const CRI_PROTO = fileURLToPath(new URL('../../proto/runtime/v1/api.proto', import.meta.url));

export interface CriServices {
  runtime: RuntimeServiceDefinition;
  image: ImageServiceDefinition;
}

let loaded: CriServices | undefined;

/** The method definitions of both CRI services, parsed once per process. */
export function criServices(): CriServices {
  if (!loaded) {
    const services = grpcServices(CRI_PROTO);
    // The generated types describe exactly these definitions; grpcServices types them loosely.
    loaded = {
      runtime: services['runtime.v1.RuntimeService'] as RuntimeServiceDefinition,
      image: services['runtime.v1.ImageService'] as ImageServiceDefinition,
    };
  }
  return loaded;
}
