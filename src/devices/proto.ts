// The device plugin and PodResources services, loaded from proto/ as src/cri/proto.ts loads the CRI.
import { fileURLToPath } from 'node:url';
import { loadSync, type Options } from '@grpc/proto-loader';
import type { PodResourcesListerDefinition } from './generated/v1/PodResourcesLister.ts';
import type { DevicePluginDefinition } from './generated/v1beta1/DevicePlugin.ts';
import type { RegistrationDefinition } from './generated/v1beta1/Registration.ts';

// proto/ sits at the repo root, two levels above both src/devices/ and dist/devices/.
export const DEVICE_PLUGIN_PROTO = fileURLToPath(new URL('../../proto/deviceplugin/v1beta1/api.proto', import.meta.url));
export const POD_RESOURCES_PROTO = fileURLToPath(new URL('../../proto/podresources/v1/api.proto', import.meta.url));

// These must match the flags of the "gen:devices" script, or the generated types lie.
const LOADER_OPTIONS: Options = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true };

export interface DeviceServices {
  registration: RegistrationDefinition;
  devicePlugin: DevicePluginDefinition;
  podResources: PodResourcesListerDefinition;
}

let loaded: DeviceServices | undefined;

/** The method definitions of the three services, parsed once per process. */
export function deviceServices(): DeviceServices {
  if (!loaded) {
    const plugin = loadSync(DEVICE_PLUGIN_PROTO, LOADER_OPTIONS);
    const podResources = loadSync(POD_RESOURCES_PROTO, LOADER_OPTIONS);
    // The generated types describe exactly these definitions; proto-loader types them loosely.
    loaded = {
      registration: plugin['v1beta1.Registration'] as unknown as RegistrationDefinition,
      devicePlugin: plugin['v1beta1.DevicePlugin'] as unknown as DevicePluginDefinition,
      podResources: podResources['v1.PodResourcesLister'] as unknown as PodResourcesListerDefinition,
    };
  }
  return loaded;
}
