// What the Node object says about this node: pure functions over plain facts, so
// the status loop can compute it every 10 s and send it only when it changed.
import type { Node, NodeAddress, NodeCondition, NodeStatus, ContainerImage, Taint } from 'kubernetes-types/core/v1.js';
import type { HostFacts } from './host.ts';
import { formatBinary, formatCPU, parseQuantity } from '../resources/quantity.ts';
import { rfc3339 } from '../apiserver/time.ts';
import type { RuntimeHandlerInfo } from '../runtime/recursive-read-only.ts';

export interface RuntimeHealth {
  /** Undefined when the runtime could not be asked (it is down). */
  runtimeReady?: boolean;
  networkReady?: boolean;
  /** Reason and message of the runtime's failing condition, as its Status call gives them. */
  reason?: string;
  message?: string;
  /** e.g. "containerd://1.6.20" */
  version?: string;
  /** Set when the pod lifecycle loop is stuck: the text after "PLEG is not healthy: ". */
  plegProblem?: string;
  /** CRI Status's features, when the runtime reports them (containerd 2 does, 1.6 does not). */
  features?: { supplementalGroupsPolicy: boolean };
}

export interface StatusInputs {
  host: HostFacts;
  fs: { capacityBytes: number };
  /**
   * localStorageCapacityIsolation: false leaves ephemeral-storage out of capacity and allocatable,
   * as upstream's containerManager.GetCapacity does (so pods requesting it are refused); undefined: true.
   */
  localStorageCapacityIsolation?: boolean;
  /** The node's IPs (one, or a dual-stack pair, src/network/ips.ts): its InternalIP addresses. */
  nodeIPs: string[];
  hostname: string;
  /** --cloud-provider=external: a cloud controller owns the Node's addresses (nodeAddresses). */
  cloud?: CloudSettings;
  /** The addresses the Node has in the apiserver now (a cloud controller's, with an external provider). */
  existingAddresses?: NodeAddress[];
  kubeletVersion: string;
  kubeletPort: number;
  maxPods: number;
  reserved: Record<string, string>[];
  evictionHard: Record<string, string>;
  runtime: RuntimeHealth;
  images: ContainerImage[];
  now: Date;
  /** The pressure conditions the eviction manager reports True. */
  pressure: string[];
  /** status.declaredFeatures (src/node/declared-features.ts); undefined: the field is left out. */
  declaredFeatures?: string[];
  /**
   * Device plugin resources (src/devices, upstream's GetCapacity): capacity counts healthy and
   * unhealthy devices, allocatable the healthy ones; a removed resource stays at 0.
   */
  devices?: { capacity: Record<string, number>; allocatable: Record<string, number> };
  /** The node shutdown manager's problem (upstream's ShutdownStatus): "node is shutting down" while it does. */
  shutdown?: string;
  /** upstream's GetVolumesInUse (src/volumes/persistent.ts): the attachable volumes the node's pods use; undefined: left out. */
  volumesInUse?: string[];
  /** The runtime's handlers as CRI Status last listed them (upstream's RuntimeHandlers setter); undefined: left out. */
  runtimeHandlers?: readonly RuntimeHandlerInfo[];
}

/** What an external cloud provider changes (upstream's externalCloudProvider, providerID, nodeIPs given). */
export interface CloudSettings {
  /** --cloud-provider=external. */
  external: boolean;
  /** providerID (--provider-id): Node.spec.providerID at registration. */
  providerID: string;
  /** --node-ip was given (not found by the kubelet). */
  nodeIPSpecified: boolean;
}

/** The taint a Node registers with until an external cloud controller has initialised it. */
export const UNINITIALIZED_TAINT: Taint = { key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' };
/** Tells the cloud controller the node IP the kubelet was given. */
export const PROVIDED_NODE_IP = 'alpha.kubernetes.io/provided-node-ip';

/**
 * Pure: the Node's addresses as upstream's NodeAddress setter: InternalIP and Hostname, except
 * with an external cloud provider, whose controller owns them: none sent once the Node has any
 * (undefined: left out of the patch), and the Hostname alone while it has none and no --node-ip
 * was given.
 */
export function nodeAddresses(
  i: Pick<StatusInputs, 'nodeIPs' | 'hostname' | 'cloud'>,
  existing: NodeAddress[] | undefined,
): NodeAddress[] | undefined {
  if (i.cloud?.external) {
    if (existing?.length) return undefined;
    if (!i.cloud.nodeIPSpecified) return [{ type: 'Hostname', address: i.hostname }];
  }
  return [...i.nodeIPs.map((address) => ({ type: 'InternalIP', address })), { type: 'Hostname', address: i.hostname }];
}
const withAddresses = (a: NodeAddress[] | undefined) => (a ? { addresses: a } : {});

/**
 * upstream's ControllerManagedAttachAnnotation: set when enableControllerAttachDetach is true, so
 * that the attach/detach controller attaches the node's volumes; without it the kubelet does.
 */
export const CONTROLLER_MANAGED_ATTACH = 'volumes.kubernetes.io/controller-managed-attach-detach';

/**
 * The Node object to create when registering (upstream's initialNode): with an external cloud
 * provider, its uninitialized taint and the node IP given as an annotation; providerID in the spec.
 */
export function nodeForRegistration(
  name: string,
  arch: string,
  labels: Record<string, string>,
  taints: Taint[],
  cloud?: CloudSettings & { nodeIPs: string[] },
  controllerAttachDetach = true,
): Node {
  const allTaints = cloud?.external ? [...taints, UNINITIALIZED_TAINT] : taints;
  const providedIP: Record<string, string> =
    cloud?.external && cloud.nodeIPSpecified ? { [PROVIDED_NODE_IP]: cloud.nodeIPs.join(',') } : {};
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/arch': arch,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/hostname': name,
        'beta.kubernetes.io/arch': arch,
        'beta.kubernetes.io/os': 'linux',
        ...labels,
      },
      annotations: { ...(controllerAttachDetach && { [CONTROLLER_MANAGED_ATTACH]: 'true' }), ...providedIP },
    },
    spec: {
      ...(allTaints.length ? { taints: allTaints } : {}),
      ...(cloud?.providerID ? { providerID: cloud.providerID } : {}),
    },
  };
}

/**
 * Why the node is not ready, in upstream's words, or undefined when it is ready. shutdown: the
 * node shutdown manager's problem, last as in upstream's ReadyCondition.
 */
export function notReadyReason(r: RuntimeHealth, shutdown?: string): string | undefined {
  const problems: string[] = [];
  if (r.runtimeReady === undefined) problems.push('container runtime is down');
  else if (!r.runtimeReady)
    problems.push(
      `container runtime status check may not have completed yet: RuntimeReady=false reason:${r.reason ?? ''} message:${r.message ?? ''}`,
    );
  else if (!r.networkReady)
    problems.push(
      `container runtime network not ready: NetworkReady=false reason:${r.reason ?? 'NetworkPluginNotReady'} message:${r.message ?? 'network plugin is not ready'}`,
    );
  if (r.plegProblem) problems.push(`PLEG is not healthy: ${r.plegProblem}`);
  if (shutdown) problems.push(shutdown);
  return problems.length ? problems.join(', ') : undefined;
}

export function capacityAndAllocatable(
  i: Pick<StatusInputs, 'host' | 'fs' | 'maxPods' | 'reserved' | 'evictionHard' | 'devices' | 'localStorageCapacityIsolation'>,
) {
  const storage = i.localStorageCapacityIsolation !== false;
  const cap: Record<string, number> = {
    cpu: i.host.cpuCores,
    memory: i.host.memoryBytes,
    ...(storage ? { 'ephemeral-storage': i.fs.capacityBytes } : {}),
    pods: i.maxPods,
    ...i.host.hugepages,
  };
  const alloc = { ...cap };
  for (const reserved of i.reserved) {
    for (const [k, v] of Object.entries(reserved)) if (k in alloc) alloc[k]! -= parseQuantity(v) ?? 0;
  }
  // Hard eviction thresholds are withheld from allocatable, as upstream does.
  const threshold = (signal: string, total: number) => {
    const v = i.evictionHard[signal];
    if (!v) return 0;
    return v.endsWith('%') ? (Number(v.slice(0, -1)) / 100) * total : (parseQuantity(v) ?? 0);
  };
  alloc.memory! -= threshold('memory.available', cap.memory!);
  if (storage) alloc['ephemeral-storage']! -= threshold('nodefs.available', cap['ephemeral-storage']!);
  const fmt = (m: Record<string, number>) =>
    Object.fromEntries(
      Object.entries(m).map(([k, v]) => [k, k === 'cpu' ? formatCPU(v) : k === 'pods' ? String(Math.max(0, v)) : formatBinary(v)]),
    );
  // Device counts are plain integers, set after the reservations as upstream's MachineInfo setter does.
  const counts = (m: Record<string, number> = {}) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, String(v)]));
  return {
    capacity: { ...fmt(cap), ...counts(i.devices?.capacity) },
    allocatable: { ...fmt(alloc), ...counts(i.devices?.allocatable) },
  };
}

function condition(
  type: string,
  ok: boolean,
  okReason: string,
  okMsg: string,
  badReason: string,
  badMsg: string,
  prev: NodeCondition[] | undefined,
  now: string,
): NodeCondition {
  // Ready is True when ok; the pressure conditions are True when NOT ok.
  const status = type === 'Ready' ? (ok ? 'True' : 'False') : ok ? 'False' : 'True';
  const old = prev?.find((c) => c.type === type);
  return {
    type,
    status,
    reason: ok ? okReason : badReason,
    message: ok ? okMsg : badMsg,
    lastHeartbeatTime: now,
    lastTransitionTime: old && old.status === status ? old.lastTransitionTime : now,
  };
}

/**
 * The body of the kubelet's Node status patch, a strategic merge patch as upstream's PatchNodeStatus
 * sends: conditions merge by type, so that the conditions other components own (NetworkUnavailable,
 * which flannel and the cloud route controllers set; node-problem-detector's) stay; addresses, which
 * NodeStatus wrongly marks merge-by-type, replace the list ($patch: replace, as upstream's
 * fixupPatchForNodeStatusAddresses), so that a removed or reordered address goes.
 */
export function nodeStatusPatch(status: NodeStatus): { status: Record<string, unknown> } {
  const body: Record<string, unknown> = { ...status };
  if (status.addresses) body.addresses = [{ $patch: 'replace' }, ...status.addresses];
  return { status: body };
}

/** The full status; previous conditions keep their lastTransitionTime when unchanged. */
export function nodeStatus(i: StatusInputs, prev?: NodeStatus): NodeStatus {
  const now = rfc3339(i.now);
  const notReady = notReadyReason(i.runtime, i.shutdown);
  const pc = prev?.conditions;
  return {
    ...capacityAndAllocatable(i),
    conditions: [
      condition(
        'MemoryPressure',
        !i.pressure.includes('MemoryPressure'),
        'KubeletHasSufficientMemory',
        'kubelet has sufficient memory available',
        'KubeletHasInsufficientMemory',
        'kubelet has insufficient memory available',
        pc,
        now,
      ),
      condition(
        'DiskPressure',
        !i.pressure.includes('DiskPressure'),
        'KubeletHasNoDiskPressure',
        'kubelet has no disk pressure',
        'KubeletHasDiskPressure',
        'kubelet has disk pressure',
        pc,
        now,
      ),
      condition(
        'PIDPressure',
        !i.pressure.includes('PIDPressure'),
        'KubeletHasSufficientPID',
        'kubelet has sufficient PID available',
        'KubeletHasInsufficientPID',
        'kubelet has insufficient PID available',
        pc,
        now,
      ),
      condition('Ready', !notReady, 'KubeletReady', 'kubelet is posting ready status', 'KubeletNotReady', notReady ?? '', pc, now),
    ],
    ...withAddresses(nodeAddresses(i, i.existingAddresses)),
    daemonEndpoints: { kubeletEndpoint: { Port: i.kubeletPort } },
    nodeInfo: {
      machineID: i.host.machineID,
      systemUUID: i.host.systemUUID,
      bootID: i.host.bootID,
      kernelVersion: i.host.kernelVersion,
      osImage: i.host.osImage,
      containerRuntimeVersion: i.runtime.version ?? '',
      kubeletVersion: i.kubeletVersion,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: i.host.architecture,
      // Upstream's MachineInfo setter: the node's swap, when it has any (not in kubernetes-types yet).
      ...(i.host.swapBytes ? ({ swap: { capacity: i.host.swapBytes } } as object) : {}),
    },
    images: i.images,
    // Always sent once known: a merge patch must be able to empty it.
    ...(i.volumesInUse ? { volumesInUse: i.volumesInUse } : {}),
    ...(i.runtimeHandlers?.length ? { runtimeHandlers: nodeRuntimeHandlers(i.runtimeHandlers) } : {}),
    // Not in kubernetes-types yet (NodeStatus.declaredFeatures, 1.35).
    ...(i.declaredFeatures ? ({ declaredFeatures: i.declaredFeatures } as NodeStatus) : {}),
    // upstream's NodeFeatures setter (SupplementalGroupsPolicy, GA): what the runtime says, only when it
    // says anything (a runtime that is down or reports no features leaves the field as it is).
    ...(i.runtime.features ? ({ features: { supplementalGroupsPolicy: i.runtime.features.supplementalGroupsPolicy } } as NodeStatus) : {}),
  };
}

/** An event on the Node object. */
export interface NodeEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

// The events of the pressure setters (MemoryPressureCondition and its siblings): [True, False].
const PRESSURE_EVENTS: Record<string, [string, string]> = {
  MemoryPressure: ['NodeHasInsufficientMemory', 'NodeHasSufficientMemory'],
  DiskPressure: ['NodeHasDiskPressure', 'NodeHasNoDiskPressure'],
  PIDPressure: ['NodeHasInsufficientPID', 'NodeHasSufficientPID'],
};

/**
 * Pure: the events upstream's node status setters record against the Node as the apiserver last
 * showed it (seen): a pressure condition that is new or changed, a Ready condition that changed
 * (not a new one), each as recordNodeStatusEvent words it ("Node vm status is now: NodeReady");
 * a boot ID other than the Node's (MachineInfo's Rebooted); spec.unschedulable changed from the
 * last sync's (recordNodeSchedulableEvent, which starts from false).
 */
export function nodeStatusEvents(
  nodeName: string,
  seen: { status?: NodeStatus; unschedulable?: boolean } | undefined,
  next: NodeStatus,
  lastUnschedulable: boolean,
): NodeEvent[] {
  const events: NodeEvent[] = [];
  const now = (reason: string): NodeEvent => ({ type: 'Normal', reason, message: `Node ${nodeName} status is now: ${reason}` });
  for (const c of next.conditions ?? []) {
    const old = seen?.status?.conditions?.find((x) => x.type === c.type);
    const pressure = PRESSURE_EVENTS[c.type];
    if (pressure && old?.status !== c.status) events.push(now(c.status === 'True' ? pressure[0] : pressure[1]));
    if (c.type === 'Ready' && old && old.status !== c.status) events.push(now(c.status === 'True' ? 'NodeReady' : 'NodeNotReady'));
  }
  const bootID = seen?.status?.nodeInfo?.bootID;
  if (bootID && next.nodeInfo?.bootID && bootID !== next.nodeInfo.bootID)
    events.push({ type: 'Warning', reason: 'Rebooted', message: `Node ${nodeName} has been rebooted, boot id: ${next.nodeInfo.bootID}` });
  const unschedulable = !!seen?.unschedulable;
  if (unschedulable !== lastUnschedulable) events.push(now(unschedulable ? 'NodeNotSchedulable' : 'NodeSchedulable'));
  return events;
}

/** upstream's RuntimeHandlers setter: each handler with both features, false when the runtime does not say. */
export function nodeRuntimeHandlers(handlers: readonly RuntimeHandlerInfo[]): NonNullable<NodeStatus['runtimeHandlers']> {
  return handlers.map((h) => ({
    name: h.name,
    features: {
      recursiveReadOnlyMounts: h.features?.recursiveReadOnlyMounts === true,
      userNamespaces: h.features?.userNamespaces === true,
    },
  }));
}

/** Whether two statuses differ in anything but heartbeat times: the rule for sending early. */
export function statusChanged(a: NodeStatus | undefined, b: NodeStatus): boolean {
  if (!a) return true;
  const strip = (s: NodeStatus) => ({ ...s, conditions: s.conditions?.map(({ lastHeartbeatTime: _h, ...c }) => c) });
  return JSON.stringify(strip(a)) !== JSON.stringify(strip(b));
}

/**
 * Whether someone else changed a condition the kubelet sent (the node lifecycle controller sets
 * Ready and the pressures Unknown when the Lease lapses): then the status must be sent again,
 * as upstream's tryUpdateNodeStatus, which compares with the Node the apiserver holds.
 */
export function conditionsOverwritten(sent: NodeStatus | undefined, seen: NodeStatus | undefined): boolean {
  if (!sent?.conditions) return false;
  return sent.conditions.some((c) => {
    const now = seen?.conditions?.find((x) => x.type === c.type);
    return !now || now.status !== c.status || now.reason !== c.reason;
  });
}

/** The images for the Node's status: biggest first, at most max, at most 5 names each (upstream's limits). */
export function nodeImages(images: { repoTags: string[]; repoDigests: string[]; size: number }[], max: number): ContainerImage[] {
  return images
    .map((im) => ({ names: [...im.repoDigests, ...im.repoTags].slice(0, 5), sizeBytes: im.size }))
    .filter((im) => im.names.length > 0)
    .sort((a, b) => b.sizeBytes - a.sizeBytes)
    .slice(0, max < 0 ? undefined : max);
}
