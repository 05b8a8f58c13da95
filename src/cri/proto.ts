import { fileURLToPath } from 'node:url';
import { loadSync, type Options } from '@grpc/proto-loader';
import type { ImageServiceDefinition } from './generated/runtime/v1/ImageService.ts';
import type { RuntimeServiceDefinition } from './generated/runtime/v1/RuntimeService.ts';

// proto/ sits at the repo root, two levels above both src/cri/ and dist/cri/.
export const CRI_PROTO = fileURLToPath(new URL('../../proto/runtime/v1/api.proto', import.meta.url));

// These must match the flags of the "gen:cri" script, or the generated types lie.
// longs as String: nanosecond timestamps (~1.7e18) exceed 2^53 and would lose digits
// as Numbers. enums as String: readable in logs. defaults: every field present.
const LOADER_OPTIONS: Options = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true };

export interface CriServices {
  runtime: RuntimeServiceDefinition;
  image: ImageServiceDefinition;
}

let loaded: CriServices | undefined;

/** The method definitions of both CRI services, parsed once per process. */
export function criServices(): CriServices {
  if (!loaded) {
    const definition = loadSync(CRI_PROTO, LOADER_OPTIONS);
    // The generated types describe exactly these definitions; proto-loader types them loosely.
    loaded = {
      runtime: definition['runtime.v1.RuntimeService'] as unknown as RuntimeServiceDefinition,
      image: definition['runtime.v1.ImageService'] as unknown as ImageServiceDefinition,
    };
  }
  return loaded;
}
