// The plugin registration service, loaded from proto/ as src/devices/proto.ts loads the device plugin API.
import { fileURLToPath } from 'node:url';
import { grpcServices } from '../grpc/services.ts';
import type { RegistrationDefinition } from './generated/pluginregistration/Registration.ts';

// proto/ sits at the repo root, two levels above both src/plugin-manager/ and dist/plugin-manager/.
export const PLUGIN_REGISTRATION_PROTO = fileURLToPath(new URL('../../proto/pluginregistration/v1/api.proto', import.meta.url));

let loaded: RegistrationDefinition | undefined;

/** The Registration service every plugin serves, parsed once per process. */
export function registrationService(): RegistrationDefinition {
  // The generated types describe exactly this definition; grpcServices types it loosely.
  loaded ??= grpcServices(PLUGIN_REGISTRATION_PROTO)['pluginregistration.Registration'] as RegistrationDefinition;
  return loaded;
}
