import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FIELDS, defaults, parseKubeletConfig, yamlName } from '../config/kubelet-config.ts';
import { configzDocument } from './configz.ts';

test('configz: the effective configuration under upstream field names, empty fields left out', () => {
  const c = parseKubeletConfig(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: /etc/kubernetes/manifests
syncFrequency: 30s
clusterDNS: [10.96.0.10]
authentication:
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
`);
  const { kubeletconfig: k } = configzDocument(c);
  assert.equal(k.kind, 'KubeletConfiguration');
  assert.equal(k.apiVersion, 'kubelet.config.k8s.io/v1beta1');
  assert.equal(k.staticPodPath, '/etc/kubernetes/manifests');
  assert.equal(k.syncFrequency, '30s');
  assert.equal(k.nodeStatusReportFrequency, '5m0s');
  assert.equal(k.runtimeRequestTimeout, '2m0s');
  assert.deepEqual(k.clusterDNS, ['10.96.0.10']);
  assert.deepEqual(k.authentication, {
    x509: { clientCAFile: '/etc/kubernetes/pki/ca.crt' },
    webhook: { enabled: true, cacheTTL: '2m0s' },
    anonymous: { enabled: false },
  });
  assert.deepEqual(k.authorization, { mode: 'Webhook', webhook: { cacheAuthorizedTTL: '5m0s', cacheUnauthorizedTTL: '30s' } });
  assert.deepEqual([k.podPidsLimit, k.oomScoreAdj, k.serializeImagePulls], [-1, -999, true], "upstream's defaults");
  for (const empty of [
    'readOnlyPort',
    'tlsCertFile',
    'systemReserved',
    'registerWithTaints',
    'imageServiceEndpoint',
    'protectKernelDefaults',
    'singleProcessOOMKill',
    'tlsCipherSuites',
  ])
    assert.equal(empty in k, false, empty);
  assert.equal(k.serverTLSBootstrap, false, 'false is a value, not an empty field');
  // What round-trips: the document reads back as the same configuration.
  assert.deepEqual(parseKubeletConfig(JSON.stringify(k)), c);
  assert.deepEqual(parseKubeletConfig(JSON.stringify(configzDocument(defaults).kubeletconfig)), defaults);
  const readOnly = { ...defaults, readOnlyPort: 10255 };
  assert.equal(configzDocument(readOnly).kubeletconfig.readOnlyPort, 10255);
  assert.deepEqual(parseKubeletConfig(JSON.stringify(configzDocument(readOnly).kubeletconfig)), readOnly);
});

// Every mapped field set away from its default (shutdownGracePeriod and
// shutdownGracePeriodCriticalPods stay 0: they exclude shutdownGracePeriodByPodPriority).
const everyField = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: /etc/kubernetes/manifests
podLogsDir: /var/log/other-pods
syncFrequency: 30s
fileCheckFrequency: 10s
httpCheckFrequency: 15s
staticPodURL: http://example.com/pods
staticPodURLHeader: {X-Token: [a, b]}
address: 10.0.0.2
port: 10260
readOnlyPort: 10255
tlsCertFile: /tls.crt
tlsPrivateKeyFile: /tls.key
tlsCipherSuites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]
tlsMinVersion: VersionTLS12
serverTLSBootstrap: true
authentication: {x509: {clientCAFile: /ca.crt}, webhook: {enabled: false, cacheTTL: 1m}, anonymous: {enabled: true}}
authorization: {mode: AlwaysAllow, webhook: {cacheAuthorizedTTL: 1m, cacheUnauthorizedTTL: 10s}}
registryPullQPS: 0
registryBurst: 20
imagePullCredentialsVerificationPolicy: NeverVerifyAllowlistedImages
preloadedImagesVerificationAllowlist: [registry.k8s.io/pause, quay.io/org/*]
eventRecordQPS: 0
eventBurst: 50
healthzPort: 0
healthzBindAddress: 0.0.0.0
oomScoreAdj: -500
clusterDomain: cluster.local
clusterDNS: [10.96.0.10]
nodeStatusUpdateFrequency: 20s
nodeStatusReportFrequency: 1m
nodeLeaseDurationSeconds: 60
imageMinimumGCAge: 5m
imageGCHighThresholdPercent: 90
imageGCLowThresholdPercent: 70
kubeletCgroups: /kubelet.slice
systemCgroups: /system.slice
cgroupRoot: /custom
cgroupDriver: systemd
singleProcessOOMKill: true
runtimeRequestTimeout: 5m
maxPods: 250
podPidsLimit: 4096
resolvConf: /run/systemd/resolve/resolv.conf
cpuCFSQuota: false
cpuCFSQuotaPeriod: 50ms
nodeStatusMaxImages: -1
kubeAPIQPS: 25
kubeAPIBurst: 30
serializeImagePulls: false
maxParallelImagePulls: 3
evictionHard: {memory.available: 200Mi}
evictionSoft: {memory.available: 500Mi}
evictionSoftGracePeriod: {memory.available: 1m30s}
evictionPressureTransitionPeriod: 1m
evictionMaxPodGracePeriod: 30
evictionMinimumReclaim: {memory.available: 100Mi}
podsPerCore: 10
protectKernelDefaults: true
featureGates: {EventedPLEG: false, CSIVolumeHealth: true}
failSwapOn: false
memorySwap: {swapBehavior: LimitedSwap}
containerLogMaxSize: 50Mi
containerLogMaxFiles: 3
containerLogMaxWorkers: 2
containerLogMonitorInterval: 30s
configMapAndSecretChangeDetectionStrategy: Cache
systemReserved: {cpu: 500m, memory: 1Gi}
kubeReserved: {cpu: 250m}
showHiddenMetricsForVersion: "1.35"
enforceNodeAllocatable: [none]
enableServer: false
rotateCertificates: true
enableDebuggingHandlers: false
enableContentionProfiling: true
streamingConnectionIdleTimeout: 1h
volumeStatsAggPeriod: 2m
cgroupsPerQOS: false
cpuManagerPolicy: static
cpuManagerPolicyOptions: {full-pcpus-only: "true"}
cpuManagerReconcilePeriod: 20s
memoryManagerPolicy: Static
topologyManagerPolicy: best-effort
topologyManagerScope: pod
topologyManagerPolicyOptions: {prefer-closest-numa-nodes: "true"}
qosReserved: {memory: 50%}
hairpinMode: hairpin-veth
podCIDR: 10.244.0.0/24
maxOpenFiles: 4096
contentType: application/json
enableControllerAttachDetach: false
makeIPTablesUtilChains: false
volumePluginDir: /plugins
providerID: aws:///i-1
kernelMemcgNotification: true
logging: {format: text, flushFrequency: 10s, verbosity: 2}
reservedMemory: [{numaNode: 0, limits: {memory: 1Gi}}]
tracing: {endpoint: "otel:4317", samplingRatePerMillion: 100}
localStorageCapacityIsolation: false
failCgroupV1: false
userNamespaces: {idsPerPod: 131072}
systemReservedCgroup: /system.slice
kubeReservedCgroup: /kube.slice
allowedUnsafeSysctls: [net.core.*]
enableSystemLogHandler: true
enableSystemLogQuery: true
shutdownGracePeriodByPodPriority: [{priority: 100000, shutdownGracePeriodSeconds: 30}, {priority: 0, shutdownGracePeriodSeconds: 10}]
seccompDefault: true
memoryThrottlingFactor: 0.8
registerWithTaints: [{key: dedicated, value: infra, effect: NoSchedule}]
registerNode: false
containerRuntimeEndpoint: unix:///run/crio/crio.sock
imageServiceEndpoint: unix:///run/images.sock
tlsCurvePreferences: [23, 29]
imageMaximumGCAge: 168h
crashLoopBackOff: {maxContainerRestartPeriod: 1m}
memoryReservationPolicy: None
`;

test('configz: every mapped field, in upstream forms; parse -> configz -> parse gives the same configuration', () => {
  const c = parseKubeletConfig(everyField);
  const { kubeletconfig: k } = configzDocument(c);
  const names = Object.entries(FIELDS).map(([key, f]) => yamlName(key, f as never));
  assert.deepEqual(
    Object.keys(k),
    ['kind', 'apiVersion', ...names.filter((n) => n !== 'reservedSystemCPUs')],
    "every field, in upstream's struct order",
  );
  // reservedSystemCPUs cannot be set with systemReservedCgroup (CROSS_CHECKS): empty, it is left out.
  for (const name of names.filter((n) => n !== 'reservedSystemCPUs')) assert.equal(name in k, true, name);
  // Upstream's forms: durations as Go prints them, nested sections under their v1beta1 names.
  assert.deepEqual(
    [k.syncFrequency, k.cpuCFSQuotaPeriod, k.runtimeRequestTimeout, k.shutdownGracePeriod, k.evictionPressureTransitionPeriod],
    ['30s', '50ms', '5m0s', '0s', '1m0s'],
  );
  assert.deepEqual(k.authentication, {
    x509: { clientCAFile: '/ca.crt' },
    webhook: { enabled: false, cacheTTL: '1m0s' },
    anonymous: { enabled: true },
  });
  assert.deepEqual(k.memorySwap, { swapBehavior: 'LimitedSwap' });
  assert.deepEqual([k.registerNode, k.cgroupDriver, k.singleProcessOOMKill, k.maxParallelImagePulls], [false, 'systemd', true, 3]);
  assert.deepEqual(parseKubeletConfig(JSON.stringify(k)), c);
  assert.deepEqual(configzDocument(parseKubeletConfig(JSON.stringify(k))).kubeletconfig, k);
});

test('configz: an emptied field whose default is not empty is shown, so it reads back the same', () => {
  const c = parseKubeletConfig(
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionHard: {}\nenforceNodeAllocatable: []\n',
  );
  const { kubeletconfig: k } = configzDocument(c);
  assert.deepEqual([k.evictionHard, k.enforceNodeAllocatable], [{}, []]);
  assert.deepEqual(parseKubeletConfig(JSON.stringify(k)), c);
  // Empty with an empty default: left out, as omitempty does; 0 and false where upstream's field is no pointer.
  const d = configzDocument(defaults).kubeletconfig;
  for (const empty of ['evictionSoft', 'memorySwap', 'podsPerCore', 'evictionMaxPodGracePeriod', 'featureGates', 'clusterDomain'])
    assert.equal(empty in d, false, empty);
  assert.deepEqual([d.healthzPort, d.eventRecordQPS, d.shutdownGracePeriod], [10248, 50, '0s']);
});
