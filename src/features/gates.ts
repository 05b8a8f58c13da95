// The feature gates of the pinned release (v1.36.3) as its kubelet's --feature-gates and
// featureGates know them, as plain data: each gate's default, stage and whether it is locked to
// that default, as upstream's featuregate.VersionedSpecs resolve at version 1.36 (the last spec
// at or below it). The kubelet's gate set is upstream's utilfeature.DefaultMutableFeatureGate:
// pkg/features/kube_features.go's defaultVersionedKubernetesFeatureGates (with the apiextensions,
// generic apiserver, controller-manager and zpages gates it lists), client-go's features
// (AddVersionedFeaturesToExistingFeatureGates in its init), component-base's logs gates
// (logsapi.AddFeatureGates in cmd/kubelet/app/server.go), the metrics' and controller-manager's
// gates its packages register, and featuregate's own AllAlpha/AllBeta. gates.test.ts holds the
// table to upstream's gate set as hack/tools/kube/feature-gates prints it
// (testdata/upstream-feature-gates.json).
//
// Reading a gate goes through featureEnabled: the configured value, else the release's default.
// A gate the release does not know, or a locked one set against its default, is refused as
// upstream's featureGate.SetFromMap refuses it (invalidGates).

export type Stage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

export interface GateSpec {
  /** The release's default. */
  default: boolean;
  stage: Stage;
  /** LockToDefault: upstream refuses setting it to anything but its default. */
  locked?: true;
}

export const FEATURE_GATES = {
  AllAlpha: { default: false, stage: 'ALPHA' },
  AllBeta: { default: false, stage: 'BETA' },
  APIResponseCompression: { default: true, stage: 'BETA' },
  APIServerIdentity: { default: true, stage: 'BETA' },
  APIServerTracing: { default: true, stage: 'GA', locked: true },
  APIServingWithRoutine: { default: false, stage: 'ALPHA' },
  AggregatedDiscoveryRemoveBetaType: { default: true, stage: 'DEPRECATED', locked: true },
  AllowDNSOnlyNodeCSR: { default: false, stage: 'DEPRECATED' },
  AllowInsecureKubeletCertificateSigningRequests: { default: false, stage: 'DEPRECATED' },
  AllowOverwriteTerminationGracePeriodSeconds: { default: false, stage: 'DEPRECATED', locked: true },
  AllowParsingUserUIDFromCertAuth: { default: true, stage: 'BETA' },
  AllowServiceExternalIPs: { default: true, stage: 'GA' },
  AllowUnsafeMalformedObjectDeletion: { default: false, stage: 'ALPHA' },
  AnonymousAuthConfigurableEndpoints: { default: true, stage: 'GA', locked: true },
  AnyVolumeDataSource: { default: true, stage: 'GA', locked: true },
  AtomicFIFO: { default: true, stage: 'BETA' },
  AuthorizeNodeWithSelectors: { default: true, stage: 'GA', locked: true },
  AuthorizePodWebsocketUpgradeCreatePermission: { default: true, stage: 'BETA' },
  AuthorizeWithSelectors: { default: true, stage: 'GA', locked: true },
  BtreeWatchCache: { default: true, stage: 'GA', locked: true },
  CBORServingAndStorage: { default: false, stage: 'ALPHA' },
  CPUManagerPolicyAlphaOptions: { default: false, stage: 'ALPHA' },
  CPUManagerPolicyBetaOptions: { default: true, stage: 'BETA' },
  CPUManagerPolicyOptions: { default: true, stage: 'GA', locked: true },
  CRDObservedGenerationTracking: { default: true, stage: 'BETA' },
  CRDValidationRatcheting: { default: true, stage: 'GA', locked: true },
  CRIListStreaming: { default: false, stage: 'ALPHA' },
  CSIServiceAccountTokenSecrets: { default: true, stage: 'GA', locked: true },
  CSIVolumeHealth: { default: false, stage: 'ALPHA' },
  ChangeContainerStatusOnKubeletRestart: { default: false, stage: 'DEPRECATED' },
  ClearingNominatedNodeNameAfterBinding: { default: true, stage: 'BETA' },
  ClientsAllowCARotation: { default: true, stage: 'BETA' },
  ClientsAllowCBOR: { default: false, stage: 'ALPHA' },
  ClientsAllowTLSCacheGC: { default: true, stage: 'BETA' },
  ClientsPreferCBOR: { default: false, stage: 'ALPHA' },
  CloudControllerManagerWatchBasedRoutesReconciliation: { default: false, stage: 'ALPHA' },
  CloudControllerManagerWebhook: { default: false, stage: 'ALPHA' },
  ClusterTrustBundle: { default: false, stage: 'BETA' },
  ClusterTrustBundleProjection: { default: false, stage: 'BETA' },
  ComponentFlagz: { default: true, stage: 'BETA' },
  ComponentStatusz: { default: true, stage: 'BETA' },
  ConcurrentWatchObjectDecode: { default: false, stage: 'BETA' },
  ConsistentListFromCache: { default: true, stage: 'GA', locked: true },
  ConstrainedImpersonation: { default: true, stage: 'BETA' },
  ContainerCheckpoint: { default: true, stage: 'BETA' },
  ContainerRestartRules: { default: true, stage: 'BETA' },
  ContainerStopSignals: { default: false, stage: 'ALPHA' },
  ContextualLogging: { default: true, stage: 'BETA' },
  ControllerManagerReleaseLeaderElectionLockOnExit: { default: false, stage: 'ALPHA' },
  CoordinatedLeaderElection: { default: false, stage: 'BETA' },
  CrossNamespaceVolumeDataSource: { default: false, stage: 'ALPHA' },
  CustomCPUCFSQuotaPeriod: { default: true, stage: 'GA' },
  CustomResourceFieldSelectors: { default: true, stage: 'GA', locked: true },
  DRAAdminAccess: { default: true, stage: 'GA', locked: true },
  DRAConsumableCapacity: { default: true, stage: 'BETA' },
  DRADeviceBindingConditions: { default: true, stage: 'BETA' },
  DRADeviceTaintRules: { default: false, stage: 'BETA' },
  DRADeviceTaints: { default: true, stage: 'BETA' },
  DRAExtendedResource: { default: true, stage: 'BETA' },
  DRAListTypeAttributes: { default: false, stage: 'ALPHA' },
  DRANodeAllocatableResources: { default: false, stage: 'ALPHA' },
  DRAPartitionableDevices: { default: true, stage: 'BETA' },
  DRAPrioritizedList: { default: true, stage: 'GA' },
  DRAResourceClaimDeviceStatus: { default: true, stage: 'BETA' },
  DRAResourceClaimGranularStatusAuthorization: { default: true, stage: 'BETA' },
  DRAResourcePoolStatus: { default: false, stage: 'ALPHA' },
  DRASchedulerFilterTimeout: { default: true, stage: 'BETA' },
  DRAWorkloadResourceClaims: { default: false, stage: 'ALPHA' },
  DeclarativeValidation: { default: true, stage: 'GA', locked: true },
  DeclarativeValidationBeta: { default: true, stage: 'BETA' },
  DeclarativeValidationTakeover: { default: false, stage: 'DEPRECATED' },
  DeploymentReplicaSetTerminatingReplicas: { default: true, stage: 'BETA' },
  DetectCacheInconsistency: { default: true, stage: 'BETA' },
  DisableAllocatorDualWrite: { default: true, stage: 'GA', locked: true },
  DisableCPUQuotaWithExclusiveCPUs: { default: true, stage: 'DEPRECATED' },
  DisableNodeKubeProxyVersion: { default: true, stage: 'DEPRECATED', locked: true },
  DynamicResourceAllocation: { default: true, stage: 'GA', locked: true },
  EnvFiles: { default: true, stage: 'BETA' },
  EventedPLEG: { default: false, stage: 'ALPHA' },
  ExecProbeTimeout: { default: true, stage: 'GA', locked: true },
  ExtendWebSocketsToKubelet: { default: true, stage: 'BETA' },
  ExternalServiceAccountTokenSigner: { default: true, stage: 'GA', locked: true },
  GangScheduling: { default: false, stage: 'ALPHA' },
  GenericWorkload: { default: false, stage: 'ALPHA' },
  GitRepoVolumeDriver: { default: false, stage: 'DEPRECATED', locked: true },
  GracefulNodeShutdown: { default: true, stage: 'BETA' },
  GracefulNodeShutdownBasedOnPodPriority: { default: true, stage: 'BETA' },
  HPAConfigurableTolerance: { default: true, stage: 'BETA' },
  HPAScaleToZero: { default: false, stage: 'ALPHA' },
  HostnameOverride: { default: true, stage: 'BETA' },
  ImageMaximumGCAge: { default: true, stage: 'GA', locked: true },
  ImageVolume: { default: true, stage: 'GA', locked: true },
  ImageVolumeWithDigest: { default: false, stage: 'ALPHA' },
  InOrderInformers: { default: true, stage: 'GA', locked: true },
  InOrderInformersBatchProcess: { default: true, stage: 'BETA' },
  InPlacePodLevelResourcesVerticalScaling: { default: true, stage: 'BETA' },
  InPlacePodVerticalScaling: { default: true, stage: 'GA', locked: true },
  InPlacePodVerticalScalingExclusiveCPUs: { default: false, stage: 'ALPHA' },
  InPlacePodVerticalScalingExclusiveMemory: { default: false, stage: 'ALPHA' },
  InPlacePodVerticalScalingInitContainers: { default: true, stage: 'BETA' },
  InformerResourceVersion: { default: true, stage: 'GA' },
  JobBackoffLimitPerIndex: { default: true, stage: 'GA', locked: true },
  JobManagedBy: { default: true, stage: 'GA', locked: true },
  JobPodReplacementPolicy: { default: true, stage: 'GA', locked: true },
  JobSuccessPolicy: { default: true, stage: 'GA', locked: true },
  KMSv1: { default: false, stage: 'DEPRECATED' },
  KubeletCgroupDriverFromCRI: { default: true, stage: 'GA', locked: true },
  KubeletCrashLoopBackOffMax: { default: true, stage: 'BETA' },
  KubeletEnsureSecretPulledImages: { default: true, stage: 'BETA' },
  KubeletFineGrainedAuthz: { default: true, stage: 'GA', locked: true },
  KubeletInUserNamespace: { default: false, stage: 'ALPHA' },
  KubeletPSI: { default: true, stage: 'GA', locked: true },
  KubeletPodResourcesDynamicResources: { default: true, stage: 'GA', locked: true },
  KubeletPodResourcesGet: { default: true, stage: 'GA', locked: true },
  KubeletPodResourcesListUseActivePods: { default: true, stage: 'DEPRECATED' },
  KubeletRegistrationGetOnExistsOnly: { default: false, stage: 'DEPRECATED' },
  KubeletSeparateDiskGC: { default: true, stage: 'BETA' },
  KubeletServiceAccountTokenForCredentialProviders: { default: true, stage: 'BETA' },
  KubeletTracing: { default: true, stage: 'GA', locked: true },
  ListFromCacheSnapshot: { default: true, stage: 'BETA' },
  LocalStorageCapacityIsolationFSQuotaMonitoring: { default: false, stage: 'BETA' },
  LogarithmicScaleDown: { default: true, stage: 'GA', locked: true },
  LoggingAlphaOptions: { default: false, stage: 'ALPHA' },
  LoggingBetaOptions: { default: true, stage: 'BETA' },
  ManifestBasedAdmissionControlConfig: { default: false, stage: 'ALPHA' },
  MatchLabelKeysInPodAffinity: { default: true, stage: 'GA', locked: true },
  MatchLabelKeysInPodTopologySpread: { default: true, stage: 'BETA' },
  MatchLabelKeysInPodTopologySpreadSelectorMerge: { default: true, stage: 'BETA' },
  MaxUnavailableStatefulSet: { default: false, stage: 'BETA' },
  MemoryQoS: { default: false, stage: 'ALPHA' },
  MultiCIDRServiceAllocator: { default: true, stage: 'GA', locked: true },
  MutableCSINodeAllocatableCount: { default: true, stage: 'GA', locked: true },
  MutablePVNodeAffinity: { default: false, stage: 'ALPHA' },
  MutablePodResourcesForSuspendedJobs: { default: true, stage: 'BETA' },
  MutableSchedulingDirectivesForSuspendedJobs: { default: true, stage: 'BETA' },
  MutatingAdmissionPolicy: { default: true, stage: 'GA' },
  NFTablesProxyMode: { default: true, stage: 'GA', locked: true },
  NativeHistograms: { default: false, stage: 'ALPHA' },
  NodeDeclaredFeatures: { default: true, stage: 'BETA' },
  NodeInclusionPolicyInPodTopologySpread: { default: true, stage: 'GA', locked: true },
  NodeLogQuery: { default: true, stage: 'GA', locked: true },
  NodeSwap: { default: true, stage: 'GA', locked: true },
  NominatedNodeNameForExpectation: { default: true, stage: 'BETA' },
  OpenAPIEnums: { default: true, stage: 'BETA' },
  OpportunisticBatching: { default: true, stage: 'BETA' },
  OrderedNamespaceDeletion: { default: true, stage: 'GA', locked: true },
  PLEGOnDemandRelist: { default: true, stage: 'BETA' },
  PersistentVolumeClaimUnusedSinceTime: { default: false, stage: 'ALPHA' },
  PodAndContainerStatsFromCRI: { default: false, stage: 'ALPHA' },
  PodCertificateRequest: { default: false, stage: 'BETA' },
  PodDeletionCost: { default: true, stage: 'BETA' },
  PodLevelResourceManagers: { default: false, stage: 'ALPHA' },
  PodLevelResources: { default: true, stage: 'BETA' },
  PodLifecycleSleepAction: { default: true, stage: 'GA', locked: true },
  PodLifecycleSleepActionAllowZero: { default: true, stage: 'GA', locked: true },
  PodLogsQuerySplitStreams: { default: false, stage: 'ALPHA' },
  PodObservedGenerationTracking: { default: true, stage: 'GA', locked: true },
  PodReadyToStartContainersCondition: { default: true, stage: 'BETA' },
  PodSchedulingReadiness: { default: true, stage: 'GA', locked: true },
  PodTopologyLabelsAdmission: { default: true, stage: 'BETA' },
  PodsAPI: { default: false, stage: 'ALPHA' },
  PortForwardWebsockets: { default: true, stage: 'BETA' },
  PreferSameTrafficDistribution: { default: true, stage: 'GA', locked: true },
  PreventStaticPodAPIReferences: { default: true, stage: 'BETA' },
  ProcMountType: { default: true, stage: 'GA', locked: true },
  QOSReserved: { default: false, stage: 'ALPHA' },
  RecoverVolumeExpansionFailure: { default: true, stage: 'GA', locked: true },
  RecursiveReadOnlyMounts: { default: true, stage: 'GA', locked: true },
  ReduceDefaultCrashLoopBackOffDecay: { default: false, stage: 'ALPHA' },
  RelaxedDNSSearchValidation: { default: true, stage: 'GA', locked: true },
  RelaxedEnvironmentVariableValidation: { default: true, stage: 'GA', locked: true },
  RelaxedServiceNameValidation: { default: true, stage: 'BETA' },
  ReloadKubeletClientCAFile: { default: true, stage: 'BETA' },
  ReloadKubeletServerCertificateFile: { default: true, stage: 'BETA' },
  RemoteRequestHeaderUID: { default: true, stage: 'BETA' },
  ResilientWatchCacheInitialization: { default: true, stage: 'GA', locked: true },
  ResourceHealthStatus: { default: true, stage: 'BETA' },
  ResourceHealthStatusMessage: { default: true, stage: 'BETA' },
  RestartAllContainersOnContainerExits: { default: true, stage: 'BETA' },
  RetryGenerateName: { default: true, stage: 'GA', locked: true },
  RotateKubeletServerCertificate: { default: true, stage: 'BETA' },
  RuntimeClassInImageCriApi: { default: false, stage: 'ALPHA' },
  SELinuxChangePolicy: { default: true, stage: 'GA', locked: true },
  SELinuxMount: { default: false, stage: 'BETA' },
  SELinuxMountReadWriteOncePod: { default: true, stage: 'GA', locked: true },
  SchedulerAsyncAPICalls: { default: false, stage: 'BETA' },
  SchedulerAsyncPreemption: { default: true, stage: 'BETA' },
  SchedulerPopFromBackoffQ: { default: true, stage: 'BETA' },
  SchedulerQueueingHints: { default: true, stage: 'GA', locked: true },
  SeparateCacheWatchRPC: { default: false, stage: 'DEPRECATED', locked: true },
  SeparateTaintEvictionController: { default: true, stage: 'GA', locked: true },
  ServiceAccountNodeAudienceRestriction: { default: true, stage: 'BETA' },
  ServiceAccountTokenJTI: { default: true, stage: 'GA', locked: true },
  ServiceAccountTokenNodeBinding: { default: true, stage: 'GA', locked: true },
  ServiceAccountTokenNodeBindingValidation: { default: true, stage: 'GA', locked: true },
  ServiceAccountTokenPodNodeInfo: { default: true, stage: 'GA', locked: true },
  ServiceCIDRStatusFieldWiping: { default: true, stage: 'DEPRECATED' },
  ShardedListAndWatch: { default: false, stage: 'ALPHA' },
  SidecarContainers: { default: true, stage: 'GA', locked: true },
  SizeBasedListCostEstimate: { default: true, stage: 'BETA' },
  StaleControllerConsistencyDaemonSet: { default: true, stage: 'BETA' },
  StaleControllerConsistencyJob: { default: true, stage: 'BETA' },
  StaleControllerConsistencyReplicaSet: { default: true, stage: 'BETA' },
  StaleControllerConsistencyStatefulSet: { default: true, stage: 'BETA' },
  StatefulSetSemanticRevisionComparison: { default: true, stage: 'BETA' },
  StorageCapacityScoring: { default: false, stage: 'ALPHA' },
  StorageNamespaceIndex: { default: true, stage: 'DEPRECATED' },
  StorageVersionAPI: { default: false, stage: 'ALPHA' },
  StorageVersionHash: { default: true, stage: 'BETA' },
  StorageVersionMigrator: { default: false, stage: 'BETA' },
  StreamingCollectionEncodingToJSON: { default: true, stage: 'GA', locked: true },
  StreamingCollectionEncodingToProtobuf: { default: true, stage: 'GA', locked: true },
  StrictIPCIDRValidation: { default: true, stage: 'BETA' },
  StructuredAuthenticationConfiguration: { default: true, stage: 'GA', locked: true },
  StructuredAuthenticationConfigurationEgressSelector: { default: true, stage: 'BETA' },
  StructuredAuthenticationConfigurationJWKSMetrics: { default: true, stage: 'BETA' },
  SupplementalGroupsPolicy: { default: true, stage: 'GA', locked: true },
  SystemdWatchdog: { default: true, stage: 'GA', locked: true },
  TaintTolerationComparisonOperators: { default: false, stage: 'ALPHA' },
  TokenRequestServiceAccountUIDValidation: { default: true, stage: 'BETA' },
  TopologyAwareWorkloadScheduling: { default: false, stage: 'ALPHA' },
  TopologyManagerPolicyAlphaOptions: { default: false, stage: 'ALPHA' },
  TopologyManagerPolicyBetaOptions: { default: true, stage: 'BETA' },
  TopologyManagerPolicyOptions: { default: true, stage: 'GA', locked: true },
  TranslateStreamCloseWebsocketRequests: { default: true, stage: 'BETA' },
  UnauthenticatedHTTP2DOSMitigation: { default: true, stage: 'BETA' },
  UnknownVersionInteroperabilityProxy: { default: true, stage: 'BETA' },
  UnlockWhileProcessingFIFO: { default: true, stage: 'BETA' },
  UserNamespacesHostNetworkSupport: { default: false, stage: 'ALPHA' },
  UserNamespacesSupport: { default: true, stage: 'GA', locked: true },
  VolumeAttributesClass: { default: true, stage: 'GA', locked: true },
  VolumeLimitScaling: { default: false, stage: 'ALPHA' },
  WatchCacheInitializationPostStartHook: { default: true, stage: 'BETA' },
  WatchList: { default: true, stage: 'BETA' },
  WatchListClient: { default: true, stage: 'BETA' },
  WinDSR: { default: true, stage: 'GA', locked: true },
  WinOverlay: { default: true, stage: 'GA', locked: true },
  WindowsCPUAndMemoryAffinity: { default: false, stage: 'ALPHA' },
  WindowsGracefulNodeShutdown: { default: true, stage: 'BETA' },
  WindowsHostNetwork: { default: false, stage: 'DEPRECATED' },
  WorkloadAwarePreemption: { default: false, stage: 'ALPHA' },
  WorkloadWithJob: { default: false, stage: 'ALPHA' },
} as const satisfies Record<string, GateSpec>;

export type GateName = keyof typeof FEATURE_GATES;

/**
 * Whether the gate is on: the configured value, else the release's default (upstream's
 * featureGate.Enabled). The one way src reads featureGates, so that a gate's default lives in
 * FEATURE_GATES alone.
 */
export function featureEnabled(gates: Readonly<Record<string, boolean>>, name: GateName): boolean {
  return gates[name] ?? FEATURE_GATES[name].default;
}

/**
 * Pure: upstream's featureGate.AddMetrics, every gate of the release with its stage (GA's is
 * empty, as featuregate's GA constant) and whether it is on, for kubernetes_feature_enabled.
 */
export function featureSeries(gates: Readonly<Record<string, boolean>>): { name: GateName; stage: string; enabled: boolean }[] {
  return (Object.keys(FEATURE_GATES) as GateName[]).map((name) => {
    const stage: Stage = FEATURE_GATES[name].stage;
    return { name, stage: stage === 'GA' ? '' : stage, enabled: featureEnabled(gates, name) };
  });
}

/** Pure: upstream's featureGate.SetFromMap errors for these settings (the first, in name order), or undefined. */
export function invalidGates(gates: Readonly<Record<string, boolean>>): string | undefined {
  for (const name of Object.keys(gates).sort()) {
    const spec = (FEATURE_GATES as Record<string, GateSpec>)[name];
    if (!spec) return `unrecognized feature gate: ${name}`;
    if (spec.locked && gates[name] !== spec.default)
      return `cannot set feature gate ${name} to ${gates[name]}, feature is locked to ${spec.default}`;
  }
  return undefined;
}
