// GET /configz: the effective KubeletConfiguration (file, then flags), under upstream's
// v1beta1 field names, durations as Go prints them ("1m0s"), empty fields left out as
// upstream's omitempty does. Upstream's document carries no kind/apiVersion; this one
// does, so that `.kubeletconfig` can be saved and used as a --config file as is.
import type { KubeletConfig } from '../config/kubelet-config.ts';
import { goDuration } from '../config/duration.ts';

const isEmpty = (v: unknown) =>
  v === '' ||
  v === undefined ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);

function omitEmpty(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => !isEmpty(v)));
}

/** Pure: the /configz body. */
export function configzDocument(c: KubeletConfig): { kubeletconfig: Record<string, unknown> } {
  return {
    kubeletconfig: omitEmpty({
      kind: 'KubeletConfiguration',
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      staticPodPath: c.staticPodPath,
      staticPodURL: c.staticPodURL,
      staticPodURLHeader: c.staticPodURLHeader,
      syncFrequency: goDuration(c.syncFrequencyMs),
      fileCheckFrequency: goDuration(c.fileCheckFrequencyMs),
      httpCheckFrequency: goDuration(c.httpCheckFrequencyMs),
      featureGates: c.featureGates,
      containerLogMaxSize: c.containerLogMaxSize,
      containerLogMaxFiles: c.containerLogMaxFiles,
      containerLogMaxWorkers: c.containerLogMaxWorkers,
      containerLogMonitorInterval: goDuration(c.containerLogMonitorIntervalMs),
      allowedUnsafeSysctls: c.allowedUnsafeSysctls,
      seccompDefault: c.seccompDefault,
      // Pointers in upstream's v1beta1 type: false is shown too.
      enableSystemLogHandler: c.enableSystemLogHandler,
      enableSystemLogQuery: c.enableSystemLogQuery,
      address: c.address,
      port: c.port,
      // omitempty in upstream's type: 0 (not served) is left out.
      readOnlyPort: c.readOnlyPort || undefined,
      tlsCertFile: c.tlsCertFile,
      tlsPrivateKeyFile: c.tlsPrivateKeyFile,
      serverTLSBootstrap: c.serverTLSBootstrap,
      authentication: {
        x509: omitEmpty({ clientCAFile: c.authentication.x509ClientCAFile }),
        webhook: { enabled: c.authentication.webhookEnabled, cacheTTL: goDuration(c.authentication.webhookCacheTTLMs) },
        anonymous: { enabled: c.authentication.anonymousEnabled },
      },
      authorization: {
        mode: c.authorization.mode,
        webhook: {
          cacheAuthorizedTTL: goDuration(c.authorization.cacheAuthorizedTTLMs),
          cacheUnauthorizedTTL: goDuration(c.authorization.cacheUnauthorizedTTLMs),
        },
      },
      registerNode: c.registerNode,
      registerWithTaints: c.registerWithTaints,
      healthzPort: c.healthzPort,
      healthzBindAddress: c.healthzBindAddress,
      clusterDomain: c.clusterDomain,
      clusterDNS: c.clusterDNS,
      nodeStatusUpdateFrequency: goDuration(c.nodeStatusUpdateFrequencyMs),
      nodeStatusReportFrequency: goDuration(c.nodeStatusReportFrequencyMs),
      nodeLeaseDurationSeconds: c.nodeLeaseDurationSeconds,
      nodeStatusMaxImages: c.nodeStatusMaxImages,
      cgroupRoot: c.cgroupRoot,
      cgroupDriver: c.cgroupDriver,
      runtimeRequestTimeout: goDuration(c.runtimeRequestTimeoutMs),
      maxPods: c.maxPods,
      podPidsLimit: c.podPidsLimit,
      cpuCFSQuota: c.cpuCFSQuota,
      cpuCFSQuotaPeriod: goDuration(c.cpuCFSQuotaPeriodMs),
      oomScoreAdj: c.oomScoreAdj,
      eventRecordQPS: c.eventRecordQPS,
      eventBurst: c.eventBurst,
      registryPullQPS: c.registryPullQPS,
      registryBurst: c.registryBurst,
      kubeAPIQPS: c.kubeAPIQPS,
      kubeAPIBurst: c.kubeAPIBurst,
      serializeImagePulls: c.serializeImagePulls,
      maxParallelImagePulls: c.maxParallelImagePulls,
      singleProcessOOMKill: c.singleProcessOOMKill,
      // omitempty in upstream's type: false is left out.
      protectKernelDefaults: c.protectKernelDefaults || undefined,
      tlsMinVersion: c.tlsMinVersion,
      tlsCipherSuites: c.tlsCipherSuites,
      resolvConf: c.resolvConf,
      evictionHard: c.evictionHard,
      systemReserved: c.systemReserved,
      kubeReserved: c.kubeReserved,
      containerRuntimeEndpoint: c.containerRuntimeEndpoint,
      imageServiceEndpoint: c.imageServiceEndpoint,
      podLogsDir: c.podLogsDir,
    }),
  };
}
