// The runtime side of a pod's sync (upstream's kuberuntime manager and what it is given): the
// CRI executor, image pulls, the containers' environment, in-place resize, and the node-wide
// settings every container follows.
import { featureEnabled } from '../features/gates.ts';
import { join } from 'node:path';
import type { ApiClient } from '../apiserver/client.ts';
import { TokenBucket } from '../backoff/token-bucket.ts';
import type { ImageClient } from '../cri/image-client.ts';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import type { Recorder } from '../events/recorder.ts';
import { apiSecretGetter } from '../images/pull-secrets.ts';
import { ImagePuller } from '../images/puller.ts';
import { NodeKeyring } from '../images/node-credentials.ts';
import { apiPath } from '../apiserver/paths.ts';
import { TokenManager } from '../volumes/tokens.ts';
import type { ServiceAccount } from 'kubernetes-types/core/v1.js';
import type { TokenRequest } from 'kubernetes-types/authentication/v1.js';
import { PullSlots, pullLimit } from '../images/pull-slots.ts';
import { logger } from '../log/log.ts';
import type { StartupLatencyTracker } from '../pods/startup-latency.ts';
import {
  credentialProviderMetrics,
  deferredAcceptedResizeMetrics,
  infeasibleResizeMetrics,
  pullMetrics,
  syncMetrics,
} from './observers.ts';
import { credentialProviders } from '../images/credential-provider/plugins.ts';
import type { PulledImages } from '../images/pulled/manager.ts';
import { readResolvConf } from '../network/resolv-conf.ts';
import type { CurrentNode } from '../node/current-node.ts';
import { thermalThrottlePaths } from '../node/host.ts';
import type { PodManager } from '../pods/pod-manager.ts';
import { PodResizer } from '../resize/pod-resizer.ts';
import { hugePageSizes } from '../resources/pod-cgroup.ts';
import { parseQuantity } from '../resources/quantity.ts';
import type { RuntimeView } from '../runtime/cri-runtime.ts';
import { withEnvFiles } from '../runtime/env-file-source.ts';
import { apiEnvSource } from '../runtime/env-sources.ts';
import { apiRuntimeHandler } from '../runtime/runtime-class.ts';
import { crashLoopBackOffPeriods } from '../runtime/crash-backoff.ts';
import type { RuntimeState } from '../runtime/runtime-state.ts';
import { serviceCache } from '../runtime/service-cache.ts';
import { PodSyncer } from '../pods/sync-pod.ts';
import type { VolumeManager } from '../volumes/volume-manager.ts';
import type { ContainerManager } from './container-manager.ts';
import type { Host } from './node.ts';
import type { KubeletOptions } from './options.ts';

/** What a pod's sync is built from: the connections, the host and its Node, the pods, the container manager, the volumes. */
export interface PodSyncDeps {
  api: ApiClient;
  cri: RuntimeClient;
  images: ImageClient;
  view: RuntimeView;
  runtimeState: RuntimeState;
  events: Recorder;
  host: Host;
  node: CurrentNode;
  pods: PodManager;
  cm: ContainerManager;
  volumes: VolumeManager;
  /** KEP-2535's records of pulled images (src/images/pulled); undefined with KubeletEnsureSecretPulledImages off. */
  pulledImages?: PulledImages;
}

export function podRuntime(
  o: KubeletOptions,
  d: PodSyncDeps & {
    startup: StartupLatencyTracker;
    /** Syncs a pod again (the pod workers'). */
    wake: (uid: string) => void;
  },
) {
  const { config, rootDir } = o;
  const log = logger('runtime');
  // Token mode's service accounts and tokens (upstream hands the plugins its token manager).
  const pullTokens = new TokenManager((namespace, name, req) =>
    d.api.create<TokenRequest>(apiPath({ resource: 'serviceaccounts', namespace, name, subresource: 'token' }), req),
  );
  // Built as upstream's NewKubeGenericRuntimeManager registers them, with the token manager.
  const providers =
    o.credentialProviders &&
    credentialProviders(o.credentialProviders, {
      serviceAccounts: {
        getServiceAccount: (namespace, name) => d.api.get<ServiceAccount>(apiPath({ resource: 'serviceaccounts', namespace, name })),
        token: (k) => pullTokens.token({ ...k }),
      },
      observe: credentialProviderMetrics,
      log: logger('credential-provider'),
    });
  if (providers) credentialProviderMetrics.configHash(providers.hash);
  // The cluster's Services, listed and watched, for containers' service link variables.
  const services = serviceCache(d.api, logger('services'));
  const resizer = new PodResizer({
    cri: d.cri,
    view: d.view,
    events: d.events,
    log,
    allocatable: () => d.node.allocatable(),
    checkpointFile: join(rootDir, 'allocated_pods_state'),
    cgroups: d.cm.settings.cgroups,
    podCgroupIO: d.cm.cgroups.manager,
    cfs: d.cm.settings.cfs,
    cpuManagerPolicy: config.cpuManagerPolicy,
    activePods: () => d.pods.active(),
    infeasible: infeasibleResizeMetrics,
    // Deferred resizes tried again on upstream's triggers (src/resize/retry.ts).
    deferredAccepted: deferredAcceptedResizeMetrics,
    podOf: (uid) => d.pods.get(uid)?.pod,
    wake: d.wake,
    sourcesReady: () => d.pods.sourcesReady(),
  });
  const syncer = new PodSyncer({
    runtime: d.cri,
    podCgroups: d.cm.podCgroups,
    view: d.view,
    events: d.events,
    log,
    images: new ImagePuller(d.images, {
      secrets: apiSecretGetter(d.api),
      log: logger('images'),
      observe: pullMetrics(d.startup),
      slots: new PullSlots(pullLimit(config.serializeImagePulls, config.maxParallelImagePulls)),
      limit: new TokenBucket(config.registryPullQPS, config.registryBurst),
      nodeKeyring: new NodeKeyring({ rootDir, log: logger('images') }),
      providers,
      pulled: d.pulledImages,
      tokens: pullTokens,
    }),
    node: {
      ...d.cm.settings,
      podLogsDir: config.podLogsDir,
      clusterDomain: config.clusterDomain,
      hostnameOverride: featureEnabled(config.featureGates, 'HostnameOverride'),
      clusterDNS: config.clusterDNS,
      hostDNS: readResolvConf(config.resolvConf),
      nodeIPs: d.host.nodeIPs,
      seccompDefault: config.seccompDefault,
      seccompProfileRoot: join(rootDir, 'seccomp'),
      hostMaskedPaths: thermalThrottlePaths(),
      memoryCapacity: () => parseQuantity(d.node.capacity()?.memory ?? ''),
      hugePageSizes: hugePageSizes(),
    },
    // EnvFiles: fileKeyRef reads files of the pod's volumes as set up.
    env: withEnvFiles(
      apiEnvSource(d.api, () => d.node.get(), services),
      (uid, name) => d.volumes.hostPath(uid, name),
      config.featureGates,
      log,
    ),
    volumes: d.volumes,
    resizer,
    runtimeHandler: apiRuntimeHandler(d.api),
    runtimeState: d.runtimeState,
    observe: syncMetrics,
    devices: { containerOptions: d.cm.containerOptions },
    claims: d.cm.dra,
    userns: d.cm.userns,
    crashLoopBackOff: crashLoopBackOffPeriods(config),
  });
  return {
    syncer,
    resizer,
    stop: () => {
      services.stop();
      resizer.stop();
    },
  };
}
