// How kubelet-ts stands on each feature gate the pinned release's kubelet reads (the gates of
// k8s.io/kubernetes/pkg/features, and the apiserver's, client-go's and component-base's its gate
// set registers, referenced by the packages cmd/kubelet builds from, whichever module they are
// in: testdata/upstream-kubelet-gates.json, written by hack/tools/kube/kubelet-gates):
//
// - read: featureEnabled(..., 'Name') in src, so either value is in effect;
// - locked: upstream locks it to its default, and invalidGates refuses any other value;
// - refused: kubelet-ts behaves as the gate's default and has no other behaviour, so setting it
//   away from the default stops the start (gatesNotInEffect) rather than being silently ignored;
// - accepted: setting it either way changes nothing on kubelet-ts, as on a Linux upstream
//   kubelet, or kubelet-ts already behaves as the value away from the default; the comment says
//   which. Upstream's kubelet links scheduler and apiserver code (its admission reuses the
//   scheduler's NodeInfo and fit check, its static pods go through the apiserver's validation)
//   whose other gate reads never run in a kubelet.
//
// A gate upstream's kubelet does not read (a scheduler's or controller's only) is set or not as
// upstream allows, and has no effect on either kubelet.

import { FEATURE_GATES, type GateName, type GateSpec } from './gates.ts';

export type Standing = 'read' | 'locked' | 'refused' | 'accepted';

const SCHEDULER = 'accepted'; // read only in the scheduler's queue, plugins, config or metrics, which a kubelet never runs
const API = 'accepted'; // read only in the apiserver's field dropping or in validation of objects a kubelet does not validate
// Read only in the apiserver library's serving, storage, admission or server-options code, which
// the kubelet's binary links (for its authenticator and authorizer packages) and never runs.
const SERVER = 'accepted';
// client-go's informer and transport internals: kubelet-ts's caches and API client are its own,
// and either value changes nothing a kubelet does that a user can see.
const CLIENT = 'accepted';

export const KUBELET_GATES = {
  APIResponseCompression: SERVER,
  APIServerIdentity: SERVER,
  APIServerTracing: 'locked',
  APIServingWithRoutine: SERVER,
  AggregatedDiscoveryRemoveBetaType: 'locked',
  // Upstream requests a kubelet-serving certificate only once the node has an IP, unless this is
  // on. kubelet-ts's CSR names the node and whatever IPs it has (src/server/serve.ts): on's
  // behaviour, whichever way it is set.
  AllowDNSOnlyNodeCSR: 'accepted',
  // A client certificate's UID subject attribute (1.3.6.1.4.1.57683.2) is the user's UID (src/server/x509-authn.ts).
  AllowParsingUserUIDFromCertAuth: 'read',
  AllowUnsafeMalformedObjectDeletion: SERVER,
  AnonymousAuthConfigurableEndpoints: 'locked',
  AnyVolumeDataSource: 'locked',
  AtomicFIFO: CLIENT,
  AuthorizeWithSelectors: 'locked',
  BtreeWatchCache: 'locked',
  CBORServingAndStorage: SERVER,
  CPUManagerPolicyAlphaOptions: 'read',
  CPUManagerPolicyBetaOptions: 'read',
  // The CRI's streaming List calls: kubelet-ts lists with the unary ones.
  CRIListStreaming: 'refused',
  CSIVolumeHealth: 'read',
  // The deprecated pre-1.33 handling of containers' statuses across a kubelet restart: not in kubelet-ts.
  ChangeContainerStatusOnKubeletRestart: 'refused',
  ClearingNominatedNodeNameAfterBinding: API,
  // The kubeconfig's CA file read again every 5 min (src/apiserver/ca-reload.ts).
  ClientsAllowCARotation: 'read',
  // kubelet-ts's clients name their content type (contentType: protobuf or JSON), so CBOR is
  // never negotiated, as on upstream's kubelet, whose clients name theirs too.
  ClientsAllowCBOR: 'accepted',
  ClientsAllowTLSCacheGC: CLIENT,
  // As ClientsAllowCBOR: only a client that names no content type would prefer CBOR.
  ClientsPreferCBOR: 'accepted',
  // Projected clusterTrustBundle sources: kubelet-ts has none (a static pod naming one is refused, src/sources/api-references.ts).
  ClusterTrustBundleProjection: 'refused',
  ComponentFlagz: 'read',
  ComponentStatusz: 'read',
  ConcurrentWatchObjectDecode: SERVER,
  ConsistentListFromCache: 'locked',
  ConstrainedImpersonation: SERVER,
  // Off upstream, the kubelet serves no /checkpoint; kubelet-ts serves none either way (the
  // path is only authorized and counted), so false is what kubelet-ts does already.
  ContainerCheckpoint: 'accepted',
  // restartPolicyRules are honoured always (src/runtime/restart-policy.ts).
  ContainerRestartRules: 'refused',
  // lifecycle.stopSignal: kubelet-ts stops with the image's signal only.
  ContainerStopSignals: 'refused',
  // Which logger a call uses (the context's or the global one): the lines written are the same.
  ContextualLogging: 'accepted',
  CrossNamespaceVolumeDataSource: API,
  CustomCPUCFSQuotaPeriod: 'read',
  DRAAdminAccess: 'locked',
  DRAConsumableCapacity: SCHEDULER,
  DRADeviceBindingConditions: SCHEDULER,
  DRADeviceTaintRules: SCHEDULER,
  DRADeviceTaints: SCHEDULER,
  // Extended resources backed by DRA claims (extendedResourceClaimStatus): always on in kubelet-ts (src/dra).
  DRAExtendedResource: 'refused',
  DRAListTypeAttributes: SCHEDULER,
  // Node-allocatable resources from DRA drivers, in admission's fit check: not in kubelet-ts.
  DRANodeAllocatableResources: 'refused',
  DRAPartitionableDevices: SCHEDULER,
  DRAPrioritizedList: SCHEDULER,
  DRAResourceClaimDeviceStatus: SCHEDULER,
  DRASchedulerFilterTimeout: SCHEDULER,
  // Claims of a workload's PodGroup: not in kubelet-ts.
  DRAWorkloadResourceClaims: 'refused',
  DeclarativeValidation: 'locked',
  DeclarativeValidationBeta: SERVER,
  DetectCacheInconsistency: SERVER,
  // On upstream, containers with exclusive CPUs get no CFS quota. kubelet-ts sets the quota from
  // the cpu limit whatever the CPU manager gave (src/runtime/pod-config.ts, src/resources/pod-cgroup.ts):
  // the gate's deprecated false, whichever way it is set.
  DisableCPUQuotaWithExclusiveCPUs: 'accepted',
  DisableNodeKubeProxyVersion: 'locked',
  DynamicResourceAllocation: 'locked',
  EnvFiles: 'read',
  // Read directly by runtimeEventsWanted (src/pleg/cri-events.ts): false relists every second
  // only, upstream's default; unset or true lets the runtime's events wake the relist, as
  // upstream's EventedPLEG does (its own default differs from upstream's, and says why there).
  EventedPLEG: 'accepted',
  ExtendWebSocketsToKubelet: 'read',
  GangScheduling: SCHEDULER,
  GenericWorkload: SCHEDULER,
  GitRepoVolumeDriver: 'locked',
  GracefulNodeShutdown: 'read',
  GracefulNodeShutdownBasedOnPodPriority: 'read',
  HostnameOverride: 'read',
  ImageMaximumGCAge: 'locked',
  ImageVolume: 'locked',
  // The image volume's digest in the container status: not in kubelet-ts.
  ImageVolumeWithDigest: 'refused',
  InOrderInformers: 'locked',
  InOrderInformersBatchProcess: CLIENT,
  // Read through declaredFeatures (src/node/declared-features.ts): off, the Node does not declare
  // it and the apiserver sends it no such resize, as upstream.
  InPlacePodLevelResourcesVerticalScaling: 'read',
  InPlacePodVerticalScaling: 'locked',
  // Resizing exclusive CPUs or NUMA-pinned memory: not in kubelet-ts.
  InPlacePodVerticalScalingExclusiveCPUs: 'refused',
  InPlacePodVerticalScalingExclusiveMemory: 'refused',
  // Read through declaredFeatures, as InPlacePodLevelResourcesVerticalScaling.
  InPlacePodVerticalScalingInitContainers: 'read',
  InformerResourceVersion: CLIENT,
  KMSv1: SERVER,
  KubeletCrashLoopBackOffMax: 'read',
  KubeletEnsureSecretPulledImages: 'read',
  KubeletFineGrainedAuthz: 'locked',
  // A kubelet in a user namespace (errors on sysctls and the like tolerated): not in kubelet-ts.
  KubeletInUserNamespace: 'refused',
  KubeletPSI: 'locked',
  KubeletPodResourcesGet: 'locked',
  // PodResources' List is over the active pods always (src/kubelet/servers.ts).
  KubeletPodResourcesListUseActivePods: 'refused',
  // Registration's get of an existing Node: kubelet-ts registers as upstream's default.
  KubeletRegistrationGetOnExistsOnly: 'refused',
  // A separate container filesystem in stats and eviction: always (src/eviction, withContainerFsThresholds).
  KubeletSeparateDiskGC: 'refused',
  KubeletServiceAccountTokenForCredentialProviders: 'read',
  ListFromCacheSnapshot: SERVER,
  // emptyDir usage from filesystem project quotas: not in kubelet-ts.
  LocalStorageCapacityIsolationFSQuotaMonitoring: 'refused',
  LogarithmicScaleDown: 'locked',
  // logging.options.*.splitStream and infoBufferSize are refused without it, as upstream's
  // validateFormatOptions (and refused as not in effect with it).
  LoggingAlphaOptions: 'read',
  // The json logging format is refused without it ("Log format json is disabled").
  LoggingBetaOptions: 'read',
  ManifestBasedAdmissionControlConfig: SERVER,
  MatchLabelKeysInPodAffinity: 'locked',
  MatchLabelKeysInPodTopologySpread: SCHEDULER,
  MatchLabelKeysInPodTopologySpreadSelectorMerge: API,
  MemoryQoS: 'read',
  MutableCSINodeAllocatableCount: 'locked',
  MutablePVNodeAffinity: API,
  MutatingAdmissionPolicy: SERVER,
  NodeDeclaredFeatures: 'read',
  NodeInclusionPolicyInPodTopologySpread: 'locked',
  // Locked, and read (the enableSystemLogQuery check).
  NodeLogQuery: 'read',
  NodeSwap: 'locked',
  NominatedNodeNameForExpectation: SCHEDULER,
  OpportunisticBatching: SCHEDULER,
  // Upstream's pod worker asks for a relist after a sync that changed something; kubelet-ts has
  // no such request: the runtime's events wake its relist (src/pleg/relist.ts), whichever way it is set.
  PLEGOnDemandRelist: 'accepted',
  // Pod and container stats and /metrics/cadvisor from the CRI alone: kubelet-ts reads the
  // cgroups itself as upstream's default reads them through cAdvisor.
  PodAndContainerStatsFromCRI: 'refused',
  // podCertificate projected volumes: none in kubelet-ts (a static pod naming one is refused).
  PodCertificateRequest: 'refused',
  // Deletion cost is the ReplicaSet controller's; the kubelet links its helpers only.
  PodDeletionCost: API,
  // Pod-level resources in the CPU, memory and topology managers: not in kubelet-ts.
  PodLevelResourceManagers: 'refused',
  // spec.resources is honoured always (pod cgroups, admission, QoS).
  PodLevelResources: 'refused',
  PodLifecycleSleepAction: 'locked',
  PodLifecycleSleepActionAllowZero: 'locked',
  // /containerLogs' stream=Stdout|Stderr: kubelet-ts has no such parameter (src/server/log-options.ts).
  PodLogsQuerySplitStreams: 'refused',
  PodObservedGenerationTracking: 'locked',
  PodReadyToStartContainersCondition: 'read',
  // The kubelet's Pods gRPC API: not in kubelet-ts.
  PodsAPI: 'refused',
  PreferSameTrafficDistribution: 'locked',
  PreventStaticPodAPIReferences: 'read',
  ProcMountType: 'locked',
  QOSReserved: 'read',
  RecoverVolumeExpansionFailure: 'locked',
  RecursiveReadOnlyMounts: 'locked',
  ReduceDefaultCrashLoopBackOffDecay: 'read',
  RelaxedDNSSearchValidation: 'locked',
  RelaxedEnvironmentVariableValidation: 'locked',
  RelaxedServiceNameValidation: API,
  ReloadKubeletServerCertificateFile: 'read',
  RemoteRequestHeaderUID: SERVER,
  ResilientWatchCacheInitialization: 'locked',
  ResourceHealthStatus: 'read',
  // The DRA health message in allocatedResourcesStatus: set always (src/dra/health.ts).
  ResourceHealthStatusMessage: 'refused',
  // Read through declaredFeatures, as InPlacePodLevelResourcesVerticalScaling (the scheduler places
  // pods with RestartAllContainers rules only on nodes that declare it).
  RestartAllContainersOnContainerExits: 'read',
  RetryGenerateName: 'locked',
  // Off, serverTLSBootstrap is refused as upstream's ValidateKubeletConfiguration refuses it (src/config/kubelet-config.ts).
  RotateKubeletServerCertificate: 'read',
  // The runtime handler in the CRI's image calls: kubelet-ts pulls for the default handler.
  RuntimeClassInImageCriApi: 'refused',
  SELinuxChangePolicy: 'locked',
  // Volumes mounted with their SELinux context (-o context): not in kubelet-ts.
  SELinuxMount: 'refused',
  SELinuxMountReadWriteOncePod: 'locked',
  SchedulerAsyncAPICalls: SCHEDULER,
  SchedulerAsyncPreemption: SCHEDULER,
  SchedulerPopFromBackoffQ: SCHEDULER,
  SchedulerQueueingHints: 'locked',
  SeparateCacheWatchRPC: 'locked',
  ShardedListAndWatch: SERVER,
  SidecarContainers: 'locked',
  SizeBasedListCostEstimate: SERVER,
  StorageCapacityScoring: SCHEDULER,
  StorageVersionAPI: SERVER,
  StorageVersionHash: SERVER,
  StreamingCollectionEncodingToJSON: 'locked',
  StreamingCollectionEncodingToProtobuf: 'locked',
  // Read in validation (IPs in pod specs among others); kubelet-ts's static pod checks are its
  // own (names and paths, src/sources/static-file.ts), not upstream's ValidatePodCreate.
  StrictIPCIDRValidation: API,
  StructuredAuthenticationConfiguration: 'locked',
  StructuredAuthenticationConfigurationEgressSelector: SERVER,
  SupplementalGroupsPolicy: 'locked',
  // Gt and Lt tolerations in admission's NoExecute taint check: not in kubelet-ts.
  TaintTolerationComparisonOperators: 'refused',
  TopologyAwareWorkloadScheduling: SCHEDULER,
  // The topology manager's alpha and beta option sets are empty in 1.36 (policy_options.go):
  // both options are GA, so either gate changes nothing upstream or in kubelet-ts.
  TopologyManagerPolicyAlphaOptions: 'accepted',
  TopologyManagerPolicyBetaOptions: 'accepted',
  TopologyManagerPolicyOptions: 'locked',
  UnauthenticatedHTTP2DOSMitigation: SERVER,
  UnknownVersionInteroperabilityProxy: SERVER,
  UnlockWhileProcessingFIFO: CLIENT,
  // Host-network pods in user namespaces: kubelet-ts does not declare it (DECLARABLE's missing).
  UserNamespacesHostNetworkSupport: 'refused',
  UserNamespacesSupport: 'locked',
  VolumeAttributesClass: 'locked',
  VolumeLimitScaling: SCHEDULER,
  WatchList: SERVER,
  // Reflectors' lists as watches' initial events (src/apiserver/reflector.ts).
  WatchListClient: 'read',
  // Windows only (read in *_windows.go files alone): no effect on a Linux node, upstream's either.
  WindowsCPUAndMemoryAffinity: 'accepted',
  WindowsGracefulNodeShutdown: 'accepted',
  WorkloadAwarePreemption: SCHEDULER,
} as const satisfies Partial<Record<GateName, Standing>>;

/**
 * Pure: the gates kubelet-ts does not read set away from upstream's defaults, sorted; the start
 * refuses them in one line, as it refuses the KubeletConfiguration fields it reads nothing of.
 */
export function gatesNotInEffect(gates: Readonly<Record<string, boolean>>): string[] {
  return Object.keys(gates)
    .filter((name) => {
      const standing = (KUBELET_GATES as Record<string, Standing>)[name];
      const spec = (FEATURE_GATES as Record<string, GateSpec>)[name];
      return standing === 'refused' && spec !== undefined && gates[name] !== spec.default;
    })
    .sort();
}
