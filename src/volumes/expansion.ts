// Node expansion of a mounted claim (upstream's online and offline NodeExpandVolume, with
// RecoverVolumeExpansionFailure, GA): whether the kubelet expands the volume on this node now,
// and the PVC status patches it sends around the driver's NodeExpandVolume. Pure: the decision
// mirrors actualStateOfWorld.volumeNeedsExpansion, operationGenerator.nodeExpandVolume /
// checkForRecoveryFromExpansion and NodeExpander.runPreCheck (node_expander.go); the patches
// mirror pkg/volume/util/resize_util.go's MarkNodeExpansionInProgress,
// MarkNodeExpansionFinishedWithRecovery (= MarkFSResizeFinished with the gate on),
// MarkNodeExpansionInfeasible and MarkNodeExpansionFailedCondition, written as the strategic
// merge patches upstream's CreateTwoWayMergePatch makes of them.
import type { PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimCondition } from 'kubernetes-types/core/v1.js';
import { parseQuantity } from '../resources/quantity.ts';

/** upstream's volumetypes.NodeExpansionNotRequired. */
export const NODE_EXPANSION_NOT_REQUIRED = 'volume.kubernetes.io/node-expansion-not-required';
/** upstream's knownResizeConditions: the conditions a finished expansion clears. */
const RESIZE_CONDITIONS = new Set(['FileSystemResizePending', 'Resizing', 'ControllerResizeError', 'NodeResizeError']);

export interface ExpansionInput {
  pvc: PersistentVolumeClaim;
  pv: PersistentVolume;
  /** The pod's claim readOnly (upstream's volumeSpec.ReadOnly): never resized. */
  readOnly: boolean;
  /** The size this node last expanded the volume to, in bytes (upstream's ASW persistentVolumeSize after MarkVolumeAsResized). */
  nodeSize?: number;
  /** A NodeExpandVolume of this volume failed with a final error (upstream's volumesWithFinalExpansionErrors). */
  finalError?: boolean;
  /** The driver said FailedPrecondition: no online expansion of this volume until it is mounted again (MarkForInUseExpansionError). */
  inUseError?: boolean;
}

export type ExpansionDecision =
  /** Nothing to expand (sizes equal, read-only, not a size we know). */
  | { action: 'none' }
  /** The resize controller has not handed the expansion to the node (allocatedResourceStatuses). */
  | { action: 'wait'; resizeStatus: string }
  /** The PVC says it is done already (expanded elsewhere, or by the controller alone): no call. */
  | { action: 'assumeDone'; newSize: number }
  | {
      action: 'expand';
      newSize: number;
      oldSize: number;
      /** upstream's checkForRecoveryFromExpansion: the resizer sets allocatedResources / allocatedResourceStatuses. */
      recovery: boolean;
      /** The PVC's status.capacity is already the new size: no PVC update after (an RWX volume on a second node). */
      pvcAlreadyUpdated: boolean;
      /** A final failure marks the expansion infeasible (the user changed the request since a failure). */
      infeasibleOnFailure: boolean;
    };

const storage = (m: { [k: string]: string | number } | undefined) => {
  const q = m?.storage;
  return q === undefined ? undefined : parseQuantity(q);
};

/** Pure: what to do about the size of a mounted claim on this node. */
export function nodeExpansionDecision(i: ExpansionInput): ExpansionDecision {
  const { pvc, pv } = i;
  const pvSize = storage(pv.spec?.capacity);
  const pvcStatusSize = storage(pvc.status?.capacity);
  // checkVolumeFSResize: read-only claims are not resized; volumeNeedsExpansion: both sizes known,
  // the desired (the PV's) larger than the node's.
  if (i.readOnly || i.inUseError) return { action: 'none' };
  const current = i.nodeSize ?? pvcStatusSize;
  if (!pvSize || !current || pvSize <= current) return { action: 'none' };
  const resizeStatus = pvc.status?.allocatedResourceStatuses?.storage ?? '';
  const allocated = pvc.status?.allocatedResources;
  if (!resizeStatus && allocated === undefined)
    // An older resizer (legacyCallNodeExpandOnPlugin): expand to the PV's size.
    return {
      action: 'expand',
      newSize: pvSize,
      oldSize: current,
      recovery: false,
      pvcAlreadyUpdated: (pvcStatusSize ?? 0) >= pvSize,
      infeasibleOnFailure: false,
    };
  const newSize = storage(allocated) ?? 0;
  const specSize = storage(pvc.spec?.resources?.requests);
  const infeasibleOnFailure = specSize !== newSize && !!i.finalError;
  const pvcAlreadyUpdated = (pvcStatusSize ?? 0) >= newSize && !resizeStatus;
  const rwxElsewhere =
    pvcAlreadyUpdated &&
    !!pvc.spec?.accessModes?.includes('ReadWriteMany') &&
    !(NODE_EXPANSION_NOT_REQUIRED in (pvc.metadata?.annotations ?? {}));
  const handedToNode = resizeStatus === 'NodeResizePending' || resizeStatus === 'NodeResizeInProgress';
  if (!rwxElsewhere && !handedToNode) return pvcAlreadyUpdated ? { action: 'assumeDone', newSize } : { action: 'wait', resizeStatus };
  return { action: 'expand', newSize, oldSize: current, recovery: true, pvcAlreadyUpdated, infeasibleOnFailure };
}

/** A strategic merge patch of a PVC's status, with the resourceVersion check upstream's PatchPVCStatus adds. */
export type ClaimStatusPatch = { metadata?: { resourceVersion?: string }; status: Record<string, unknown> };

const withVersion = (pvc: PersistentVolumeClaim, status: Record<string, unknown>): ClaimStatusPatch => ({
  metadata: { resourceVersion: pvc.metadata?.resourceVersion },
  status,
});

/** upstream's MarkNodeExpansionInProgress: allocatedResourceStatuses[storage] = NodeResizeInProgress. */
export function markInProgressPatch(pvc: PersistentVolumeClaim): ClaimStatusPatch {
  return withVersion(pvc, { allocatedResourceStatuses: { storage: 'NodeResizeInProgress' } });
}

/**
 * upstream's MarkNodeExpansionFinishedWithRecovery: capacity[storage] = the new size, the storage
 * entry of allocatedResourceStatuses gone (the map with it when it empties), every resize condition gone.
 */
export function markFinishedPatch(pvc: PersistentVolumeClaim, newSize: string): ClaimStatusPatch {
  const status: Record<string, unknown> = { capacity: { storage: newSize } };
  const statuses = pvc.status?.allocatedResourceStatuses;
  if (statuses && 'storage' in statuses) status.allocatedResourceStatuses = Object.keys(statuses).length === 1 ? null : { storage: null };
  const conditions = pvc.status?.conditions ?? [];
  const removed = conditions.filter((c) => RESIZE_CONDITIONS.has(c.type));
  if (removed.length)
    status.conditions = removed.length === conditions.length ? null : removed.map((c) => ({ $patch: 'delete', type: c.type }));
  return withVersion(pvc, status);
}

/**
 * upstream's MarkNodeExpansionInfeasible (infeasible: allocatedResourceStatuses[storage] =
 * NodeResizeInfeasible) and MarkNodeExpansionFailedCondition: the NodeResizeError condition, the
 * other resize conditions kept. No resourceVersion check, as upstream.
 */
export function markFailedPatch(pvc: PersistentVolumeClaim, err: string, infeasible: boolean, now: string): ClaimStatusPatch {
  const old = pvc.status?.conditions?.find((c) => c.type === 'NodeResizeError');
  const condition: PersistentVolumeClaimCondition = {
    type: 'NodeResizeError',
    status: 'True',
    lastTransitionTime: now,
    message: `failed to expand pvc with ${err}`,
  };
  const status: Record<string, unknown> = {};
  if (infeasible) status.allocatedResourceStatuses = { storage: 'NodeResizeInfeasible' };
  // MergeResizeConditionOnPVC keeps an old condition of the same type and status as it was.
  if (old?.status !== 'True') status.conditions = [condition];
  return { status };
}
