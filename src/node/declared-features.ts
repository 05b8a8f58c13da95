// Node declared features (NodeDeclaredFeatures, beta and on by default in 1.36): the Node lists
// in status.declaredFeatures the features that the apiserver and the scheduler may not assume
// of every kubelet. A pod update that needs one (a resize of pod-level resources or of an init
// container) is accepted, and a pod that needs one (a RestartAllContainers rule) is placed, only
// on a node that declares it. Upstream: discoverNodeDeclaredFeatures in
// pkg/kubelet/kubelet_node_declared_features.go over the registry of
// k8s.io/component-helpers/nodedeclaredfeatures/features (each feature's Discover).
import { featureEnabled, type GateName } from '../features/gates.ts';

interface Declarable {
  /** The feature's name in status.declaredFeatures (its gate's name, as upstream's registry); its default is FEATURE_GATES'. */
  name: GateName;
  /** Why kubelet-ts does not declare it although upstream would; undefined: kubelet-ts implements it. */
  missing?: string;
}

// Upstream's registry of v1.36.3, in its order.
export const DECLARABLE: Declarable[] = [
  { name: 'RestartAllContainersOnContainerExits' },
  { name: 'InPlacePodLevelResourcesVerticalScaling' },
  // Declared, the apiserver hands WebSocket exec, attach and port-forward to the kubelet as they
  // come, and the kubelet translates them to the runtime's SPDY (src/server/stream-translator).
  { name: 'ExtendWebSocketsToKubelet' },
  { name: 'InPlacePodVerticalScalingInitContainers' },
  // A runtime feature (the handler's user namespaces with host networking) behind an alpha gate.
  { name: 'UserNamespacesHostNetworkSupport', missing: 'no user namespaces yet' },
];

/** Pure: the sorted status.declaredFeatures for these featureGates; undefined when NodeDeclaredFeatures is off. */
export function declaredFeatures(gates: Record<string, boolean>): string[] | undefined {
  if (!featureEnabled(gates, 'NodeDeclaredFeatures')) return undefined;
  return DECLARABLE.filter((f) => !f.missing && featureEnabled(gates, f.name))
    .map((f) => f.name)
    .sort();
}
