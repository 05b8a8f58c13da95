// What a CSI driver's registration changes in the cluster (upstream's nodeinfomanager), as pure
// functions from the objects as they are to the change, undefined when there is none:
// - the Node: the driver's node ID in the csi.volume.kubernetes.io/nodeid annotation (a JSON map
//   driver -> node ID) and its topology segments as labels;
// - the node's CSINode (storage.k8s.io/v1, owned by the Node): one spec.drivers entry per driver
//   with its node ID, topology keys and allocatable.count (max_volumes_per_node).
// node-info-manager.ts reads and writes the objects.
import type { Node } from 'kubernetes-types/core/v1.js';
import type { CSINode, CSINodeDriver } from 'kubernetes-types/storage/v1.js';
import type { NodeInfo } from './client.ts';

/** upstream's annotationKeyNodeID. */
export const NODE_ID_ANNOTATION = 'csi.volume.kubernetes.io/nodeid';
/** upstream's v1.MigratedPluginsAnnotationKey. */
export const MIGRATED_PLUGINS_ANNOTATION = 'storage.alpha.kubernetes.io/migrated-plugins';
/**
 * The in-tree plugins upstream's kubelet lists as migrated to CSI (all of them, always, since
 * CSIMigration went GA), sorted as sets.List joins them. kubelet-ts has no in-tree cloud plugins.
 */
const MIGRATED_PLUGINS = [
  'kubernetes.io/aws-ebs',
  'kubernetes.io/azure-disk',
  'kubernetes.io/azure-file',
  'kubernetes.io/cinder',
  'kubernetes.io/gce-pd',
  'kubernetes.io/portworx-volume',
  'kubernetes.io/vsphere-volume',
].join(',');
const INT32_MAX = 2 ** 31 - 1;

/** A strategic merge patch of the Node's metadata; null deletes a key. */
export interface NodeMetadataPatch {
  metadata: { annotations?: Record<string, string | null>; labels?: Record<string, string> };
}

/** upstream's buildNodeIDMapFromAnnotation. */
function nodeIDs(node: Node): Record<string, string> {
  const value = node.metadata?.annotations?.[NODE_ID_ANNOTATION];
  if (!value) return {};
  try {
    return (JSON.parse(value) as Record<string, string> | null) ?? {};
  } catch (e) {
    throw new Error(
      `failed to parse node's "${NODE_ID_ANNOTATION}" annotation value (${JSON.stringify(value)}) err=${(e as Error).message}`,
    );
  }
}

// As Go's json.Marshal writes a map: keys sorted.
const sortedJSON = (m: Record<string, string>) =>
  JSON.stringify(Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : 1))));

/**
 * upstream's updateNodeIDInNode and updateTopologyLabels: the Node patch that records a driver's
 * node ID and topology. Throws when the annotation is unreadable or a topology segment contradicts
 * a label the Node already has.
 */
export function nodePatchForDriver(node: Node, driver: string, info: Pick<NodeInfo, 'nodeId' | 'topology'>): NodeMetadataPatch | undefined {
  const patch: NodeMetadataPatch = { metadata: {} };
  const ids = nodeIDs(node);
  if (ids[driver] !== info.nodeId) patch.metadata.annotations = { [NODE_ID_ANNOTATION]: sortedJSON({ ...ids, [driver]: info.nodeId }) };
  const labels = node.metadata?.labels ?? {};
  for (const [k, v] of Object.entries(info.topology)) {
    if (labels[k] === undefined) (patch.metadata.labels ??= {})[k] = v;
    else if (labels[k] !== v)
      throw new Error(`detected topology value collision: driver reported "${k}":"${v}" but existing label is "${k}":"${labels[k]}"`);
  }
  return patch.metadata.annotations || patch.metadata.labels ? patch : undefined;
}

/** upstream's removeNodeIDFromNode: the driver leaves the annotation (the whole of it, if it was the last); labels stay. */
export function nodePatchWithoutDriver(node: Node, driver: string): NodeMetadataPatch | undefined {
  const ids = nodeIDs(node);
  if (!(driver in ids)) return undefined;
  delete ids[driver];
  return { metadata: { annotations: { [NODE_ID_ANNOTATION]: Object.keys(ids).length ? sortedJSON(ids) : null } } };
}

/** upstream's CreateCSINode: no drivers yet, owned by the Node so that it goes with it. */
export function newCSINode(nodeName: string, nodeUID: string): CSINode {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSINode',
    metadata: {
      name: nodeName,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUID }],
      annotations: { [MIGRATED_PLUGINS_ANNOTATION]: MIGRATED_PLUGINS },
    },
    spec: { drivers: [] },
  };
}

/** upstream's nodeOwnsCSINode: a CSINode left by an earlier Node of the same name is not ours. */
export const ownsCSINode = (csiNode: CSINode, nodeName: string, nodeUID: string) =>
  (csiNode.metadata?.ownerReferences ?? []).some((r) => r.kind === 'Node' && r.name === nodeName && r.uid === nodeUID);

/** upstream's setMigrationAnnotation (the CSINode with the migrated-plugins annotation), or undefined when it has it. */
export function withMigrationAnnotation(csiNode: CSINode): CSINode | undefined {
  const annotations = csiNode.metadata?.annotations ?? {};
  const current = new Set((annotations[MIGRATED_PLUGINS_ANNOTATION] ?? '').split(',').filter(Boolean));
  const wanted = MIGRATED_PLUGINS.split(',');
  if (current.size === wanted.length && wanted.every((p) => current.has(p))) return undefined;
  return {
    ...csiNode,
    metadata: { ...csiNode.metadata, annotations: { ...annotations, [MIGRATED_PLUGINS_ANNOTATION]: MIGRATED_PLUGINS } },
  };
}

/**
 * The CSINode's driver entries. The apiserver serves a CSINode without drivers with
 * `spec.drivers: null` (the Go type's field is a slice without omitempty, which encodes nil as
 * null; kubernetes-types says an array): a kubelet that registered the first driver on a fresh
 * CSINode failed with "Cannot read properties of null" until the real hostpath driver showed it.
 */
const driversOf = (csiNode: CSINode): CSINodeDriver[] => csiNode.spec?.drivers ?? [];

/** upstream's keepAllocatableCount: the entry's allocatable already says maxVolumes (0: none). */
const sameCount = (d: CSINodeDriver, maxVolumes: number) =>
  maxVolumes === 0 ? d.allocatable?.count === undefined : d.allocatable?.count === maxVolumes;

/**
 * upstream's installDriverToCSINode: the CSINode with the driver's entry (re)placed last, or
 * undefined when entry and annotation are already right. A count beyond int32 is cut to it; a
 * negative one is left out.
 */
export function withDriver(csiNode: CSINode, driver: string, info: NodeInfo): CSINode | undefined {
  const topologyKeys = Object.keys(info.topology).sort();
  const drivers = driversOf(csiNode);
  const old = drivers.find((d) => d.name === driver);
  const unchanged =
    old !== undefined &&
    old.nodeID === info.nodeId &&
    [...new Set(old.topologyKeys ?? [])].sort().join('\n') === topologyKeys.join('\n') &&
    sameCount(old, info.maxVolumesPerNode);
  const annotated = withMigrationAnnotation(csiNode);
  if (unchanged && !annotated) return undefined;
  const entry: CSINodeDriver = { name: driver, nodeID: info.nodeId, topologyKeys };
  if (info.maxVolumesPerNode > 0) entry.allocatable = { count: Math.min(info.maxVolumesPerNode, INT32_MAX) };
  const base = annotated ?? csiNode;
  return { ...base, spec: { ...base.spec, drivers: [...drivers.filter((d) => d.name !== driver), entry] } };
}

/** upstream's tryUninstallDriverFromCSINode: the CSINode without the driver's entry, or undefined when it has none. */
export function withoutDriver(csiNode: CSINode, driver: string): CSINode | undefined {
  const drivers = driversOf(csiNode);
  if (!drivers.some((d) => d.name === driver)) return undefined;
  return { ...csiNode, spec: { ...csiNode.spec, drivers: drivers.filter((d) => d.name !== driver) } };
}
