// A pod's persistent volumes: which claim a volume names, whether the claim and its
// PersistentVolume may be used, and which volume plugin serves the PV. Pure, with upstream's
// messages (pkg/kubelet/volumemanager/populator createVolumeSpec, getPVCExtractPV, getPVSpec;
// component-helpers storage/ephemeral).
import type { PersistentVolume, PersistentVolumeClaim, Pod, Volume } from 'kubernetes-types/core/v1.js';

/** The volume plugins kubelet-ts serves PersistentVolumes with. */
export type PersistentKind = 'csi' | 'local' | 'hostPath' | 'flexVolume';

export interface ClaimRef {
  claimName: string;
  /** The pod's persistentVolumeClaim.readOnly (an ephemeral volume's is never). */
  readOnly: boolean;
  /** A generic ephemeral volume: the claim must be the pod's own. */
  ephemeral: boolean;
}

/** upstream's createVolumeSpec: the claim a volume names (ephemeral.VolumeClaimName for a generic ephemeral one). */
export function claimOf(pod: Pod, v: Volume): ClaimRef | undefined {
  if (v.persistentVolumeClaim)
    return { claimName: v.persistentVolumeClaim.claimName, readOnly: !!v.persistentVolumeClaim.readOnly, ephemeral: false };
  if (v.ephemeral) return { claimName: `${pod.metadata?.name}-${v.name}`, readOnly: false, ephemeral: true };
  return undefined;
}

const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';

/**
 * upstream's getPVCExtractPV and ephemeral.VolumeIsForPod: why the claim cannot be used, or
 * undefined. A claim being deleted is refused only without its protection finalizer, so that a
 * restarted kubelet keeps the pods that run on it.
 */
export function claimProblem(pod: Pod, pvc: PersistentVolumeClaim, ref: ClaimRef): string | undefined {
  const ns = pod.metadata?.namespace;
  const prefix = `error processing PVC ${ns}/${ref.claimName}: `;
  if (pvc.metadata?.deletionTimestamp && !pvc.metadata.finalizers?.includes(PVC_PROTECTION_FINALIZER))
    return `${prefix}PVC is being deleted`;
  if (pvc.status?.phase !== 'Bound') return `${prefix}PVC is not bound`;
  if (!pvc.spec?.volumeName) return `${prefix}PVC has empty pvc.Spec.VolumeName`;
  if (ref.ephemeral) {
    const owner = pvc.metadata?.ownerReferences?.find((o) => o.controller);
    if (pvc.metadata?.namespace !== ns || owner?.uid !== pod.metadata?.uid)
      return `PVC ${pvc.metadata?.namespace}/${pvc.metadata?.name} was not created for pod ${ns}/${pod.metadata?.name} (pod is not owner)`;
  }
  return undefined;
}

/** upstream's getPVSpec: why the PV does not serve the claim, or undefined. */
export function volumeProblem(pod: Pod, pvc: PersistentVolumeClaim, pv: PersistentVolume, ref: ClaimRef): string | undefined {
  const prefix = `error processing PVC ${pod.metadata?.namespace}/${ref.claimName}: `;
  const name = pv.metadata?.name;
  const claimRef = pv.spec?.claimRef;
  if (!claimRef) return `${prefix}found PV object ${name} but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim`;
  if (claimRef.uid !== pvc.metadata?.uid)
    return `${prefix}found PV object ${name} but its pv.Spec.ClaimRef.UID ${claimRef.uid ?? ''} does not point to claim.UID ${pvc.metadata?.uid ?? ''}`;
  return undefined;
}

/** The names of the pod's volumes its containers mount and those they use as raw block devices (upstream's GetPodVolumeNames). */
export function podVolumeUsage(pod: Pod): { mounts: Set<string>; devices: Set<string> } {
  const mounts = new Set<string>(),
    devices = new Set<string>();
  const spec = pod.spec;
  for (const c of [...(spec?.initContainers ?? []), ...(spec?.containers ?? []), ...(spec?.ephemeralContainers ?? [])]) {
    for (const m of c.volumeMounts ?? []) mounts.add(m.name);
    for (const d of (c as { volumeDevices?: { name: string }[] }).volumeDevices ?? []) devices.add(d.name);
  }
  return { mounts, devices };
}

/** upstream's createVolumeSpec volumeMode check: a Block PV only as volumeDevices, a Filesystem one only as volumeMounts. */
export function volumeModeProblem(
  volume: string,
  pv: PersistentVolume,
  usage: { mounts: Set<string>; devices: Set<string> },
): string | undefined {
  const mode = pv.spec?.volumeMode ?? 'Filesystem';
  if (usage.mounts.has(volume) && mode !== 'Filesystem') return `volume ${volume} has volumeMode ${mode}, but is specified in volumeMounts`;
  if (usage.devices.has(volume) && mode !== 'Block') return `volume ${volume} has volumeMode ${mode}, but is specified in volumeDevices`;
  return undefined;
}

/** The plugin that serves the PV; undefined for a source kubelet-ts has no plugin for. */
export function persistentKind(pv: PersistentVolume): PersistentKind | undefined {
  if (pv.spec?.csi) return 'csi';
  if (pv.spec?.local) return 'local';
  if (pv.spec?.hostPath) return 'hostPath';
  if (pv.spec?.flexVolume) return 'flexVolume';
  return undefined;
}

/**
 * upstream's GetUniqueVolumeNameFromSpec for the plugins that report a volume in
 * node.status.volumesInUse (attachable or device-mountable: CSI and local): PLUGIN/NAME, where a
 * CSI volume's name is DRIVER^HANDLE. hostPath volumes are neither, and are not reported.
 */
export function uniqueVolumeName(pv: PersistentVolume): string | undefined {
  if (pv.spec?.csi) return `kubernetes.io/csi/${pv.spec.csi.driver}^${pv.spec.csi.volumeHandle}`;
  if (pv.spec?.local) return `kubernetes.io/local-volume/${pv.metadata?.name}`;
  return undefined;
}

/** A claim volume as set up for a pod: what its stats are measured by and reported under (src/stats/claim-volumes.ts). */
export interface ClaimMount {
  pod: { name: string; namespace: string; uid: string };
  /** The pod's name for the volume. */
  volume: string;
  /** upstream's PVCReference: the claim, in the pod's namespace. */
  pvc: { name: string; namespace: string };
  kind: PersistentKind;
  /** The mount the pod has (local: the bind mount; CSI: the publish target), a Block volume's device (CSI: GLOBALMAP/PODUID), a hostPath PV's path. */
  path: string;
  block: boolean;
  /** CSI: NodeGetVolumeStats's driver and volume_id. */
  csi?: { driver: string; volumeHandle: string };
  /** flexVolume: its driver supportsMetrics, so it is measured by statfs (else not at all, upstream's MetricsNil). */
  statfs?: boolean;
}

/**
 * Pure: upstream's calcAndStoreStats pvcRef (the claim of a persistentVolumeClaim volume,
 * ephemeral.VolumeClaimName of a generic ephemeral one) with what the PV's plugin measures: the
 * claim volume v of the pod, set up from pv at path; undefined for other volumes and for a PV
 * without a plugin.
 */
export function claimMount(pod: Pod, v: Volume, pv: PersistentVolume, path: string, statfs = false): ClaimMount | undefined {
  const ref = claimOf(pod, v);
  const kind = persistentKind(pv);
  if (!ref || !kind) return undefined;
  const namespace = pod.metadata?.namespace ?? '';
  const csi = pv.spec?.csi;
  return {
    pod: { name: pod.metadata?.name ?? '', namespace, uid: pod.metadata?.uid ?? '' },
    volume: v.name,
    pvc: { name: ref.claimName, namespace },
    kind,
    path,
    block: pv.spec?.volumeMode === 'Block',
    csi: csi && { driver: csi.driver, volumeHandle: csi.volumeHandle },
    ...(statfs && { statfs }),
  };
}

/**
 * Pure: upstream's ReadWriteOncePod check of MountVolume / MapVolume (operation_generator.go): a
 * PersistentVolume whose only access mode is ReadWriteOncePod, mounted by another pod of this
 * node, is refused (the scheduler checks it too; the kubelet is the last line).
 */
export function readWriteOncePodProblem(pv: PersistentVolume, mountedByOtherPod: boolean): string | undefined {
  const modes = pv.spec?.accessModes ?? [];
  if (!mountedByOtherPod || modes.length !== 1 || modes[0] !== 'ReadWriteOncePod') return undefined;
  return 'volume uses the ReadWriteOncePod access mode and is already in use by another pod';
}

/** The pod's volumes its containers mount or map: upstream's volume manager sets up these only. */
export function usedVolumes(pod: Pod): Volume[] {
  const { mounts, devices } = podVolumeUsage(pod);
  return (pod.spec?.volumes ?? []).filter((v) => mounts.has(v.name) || devices.has(v.name));
}
