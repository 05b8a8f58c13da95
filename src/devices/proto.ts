// The device plugin and PodResources services, loaded from proto/ as src/cri/proto.ts loads the CRI.
import { fileURLToPath } from 'node:url';
import { grpcServices } from '../grpc/services.ts';
import type { PodResourcesListerDefinition } from './generated/v1/PodResourcesLister.ts';
import type { DevicePluginDefinition } from './generated/v1beta1/DevicePlugin.ts';
import type { RegistrationDefinition } from './generated/v1beta1/Registration.ts';

// proto/ sits at the repo root, two levels above both src/devices/ and dist/devices/.
export const DEVICE_PLUGIN_PROTO = fileURLToPath(new URL('../../proto/deviceplugin/v1beta1/api.proto', import.meta.url));
export const POD_RESOURCES_PROTO = fileURLToPath(new URL('../../proto/podresources/v1/api.proto', import.meta.url));

export interface DeviceServices {
  registration: RegistrationDefinition;
  devicePlugin: DevicePluginDefinition;
  podResources: PodResourcesListerDefinition;
}

let loaded: DeviceServices | undefined;

/** The method definitions of the three services, parsed once per process. */
export function deviceServices(): DeviceServices {
  if (!loaded) {
    const plugin = grpcServices(DEVICE_PLUGIN_PROTO);
    const podResources = grpcServices(POD_RESOURCES_PROTO);
    // The generated types describe exactly these definitions; grpcServices types them loosely.
    loaded = {
      registration: plugin['v1beta1.Registration'] as RegistrationDefinition,
      devicePlugin: plugin['v1beta1.DevicePlugin'] as DevicePluginDefinition,
      podResources: podResources['v1.PodResourcesLister'] as PodResourcesListerDefinition,
    };
  }
  return loaded;
}
