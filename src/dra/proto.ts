// The DRA kubelet plugin services, loaded from proto/ as src/devices/proto.ts loads the device plugin API.
import { fileURLToPath } from 'node:url';
import { grpcServices } from '../grpc/services.ts';
import type { DRAPluginDefinition } from './generated/k8s/io/kubelet/pkg/apis/dra/v1/DRAPlugin.ts';
import type { DRAPluginDefinition as V1Beta1Definition } from './generated/k8s/io/kubelet/pkg/apis/dra/v1beta1/DRAPlugin.ts';
import type { DRAResourceHealthDefinition } from './generated/v1alpha1/DRAResourceHealth.ts';

// proto/ sits at the repo root, two levels above both src/dra/ and dist/dra/.
export const DRA_V1_PROTO = fileURLToPath(new URL('../../proto/dra/v1/api.proto', import.meta.url));
export const DRA_V1BETA1_PROTO = fileURLToPath(new URL('../../proto/dra/v1beta1/api.proto', import.meta.url));
export const DRA_HEALTH_PROTO = fileURLToPath(new URL('../../proto/dra-health/v1alpha1/api.proto', import.meta.url));

/**
 * upstream's servicesSupportedByKubelet, newest first: a plugin names the services it serves as
 * "<gRPC package's last part>.<service>" in the supported versions it registers with.
 */
export const SUPPORTED_SERVICES = ['v1.DRAPlugin', 'v1beta1.DRAPlugin'] as const;
export type DraService = (typeof SUPPORTED_SERVICES)[number];

let loaded: Record<DraService, DRAPluginDefinition | V1Beta1Definition> | undefined;

/** The method definitions of one version of the DRAPlugin service, parsed once per process. */
export function draService(service: DraService): DRAPluginDefinition | V1Beta1Definition {
  // The generated types describe exactly these definitions; grpcServices types them loosely.
  loaded ??= {
    'v1.DRAPlugin': grpcServices(DRA_V1_PROTO)['k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin'] as DRAPluginDefinition,
    'v1beta1.DRAPlugin': grpcServices(DRA_V1BETA1_PROTO)['k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin'] as V1Beta1Definition,
  };
  return loaded[service];
}

let health: DRAResourceHealthDefinition | undefined;

/** The DRAResourceHealth service (v1alpha1), which a plugin may serve beside DRAPlugin. */
export function draHealthService(): DRAResourceHealthDefinition {
  health ??= grpcServices(DRA_HEALTH_PROTO)['v1alpha1.DRAResourceHealth'] as DRAResourceHealthDefinition;
  return health;
}
