// The plugin registration service, loaded from proto/ as src/devices/proto.ts loads the device plugin API.
import { fileURLToPath } from 'node:url';
import { loadSync, type Options } from '@grpc/proto-loader';
import type { RegistrationDefinition } from './generated/pluginregistration/Registration.ts';

// proto/ sits at the repo root, two levels above both src/plugin-manager/ and dist/plugin-manager/.
export const PLUGIN_REGISTRATION_PROTO = fileURLToPath(new URL('../../proto/pluginregistration/v1/api.proto', import.meta.url));

// These must match the flags of the "gen:plugins" script, or the generated types lie.
const LOADER_OPTIONS: Options = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true };

let loaded: RegistrationDefinition | undefined;

/** The Registration service every plugin serves, parsed once per process. */
export function registrationService(): RegistrationDefinition {
  // The generated types describe exactly this definition; proto-loader types it loosely.
  loaded ??= loadSync(PLUGIN_REGISTRATION_PROTO, LOADER_OPTIONS)['pluginregistration.Registration'] as unknown as RegistrationDefinition;
  return loaded;
}
