// What a volume type is to the kubelet: upstream's volume.VolumePlugin (pkg/volume/plugins.go)
// cut to what kubelet-ts uses. A plugin says which volume specs it serves (CanSupport), whether its
// contents follow API objects while the pod runs (RequiresRemount), sets a volume up for a pod
// (NewMounter + SetUp), releases what it holds beyond the pod's volume directory (NewUnmounter +
// TearDown) and, where teardown needs it, finds after a restart what it set up from what is on
// disk (ConstructVolumeSpec). The plugins are listed in registry.ts.
import type { PersistentVolume, Pod, Volume } from 'kubernetes-types/core/v1.js';
import type { VolumePath } from '../mounts.ts';

/** upstream's volume.Spec: a pod's inline volume, or the PersistentVolume its claim is bound to. */
export interface VolumeSpec {
  /** The pod's volume. */
  volume: Volume;
  /** The PersistentVolume the volume's claim is bound to; undefined for an inline volume. */
  pv?: PersistentVolume;
  /** upstream's Spec.ReadOnly: the claim's readOnly (false for an inline volume). */
  readOnly: boolean;
  /** upstream's MounterArgs.IsRemount: set up already, and set up again (RequiresRemount). */
  remount?: boolean;
}

/** A volume as set up for the pod; a Block one is a device to hand to the containers, not a mount. */
export interface PersistentPath extends VolumePath {
  block?: boolean;
  /** Measured by statfs of its path for the Summary (upstream's MetricsStatFS): a flexVolume whose driver supportsMetrics. */
  statfsMetrics?: boolean;
  /**
   * Set up again once a refresh period, as a plugin with requiresRemount is: a CSI volume whose
   * CSIDriver says requiresRepublish (upstream's csiPlugin.RequiresRemount, read at each set-up).
   */
  requiresRemount?: boolean;
}

/** A volume a plugin finds on disk for a pod (upstream's ConstructVolumeSpec from the mount path and what is beside it). */
export interface ReconstructedVolume {
  /** The volume's directory name under the plugin's (upstream's spec name). */
  specName: string;
  driverName: string;
  volumeHandle: string;
  /** A CSI volume's lifecycle (vol_data.json's volumeLifecycleMode): Ephemeral for a pod's inline volume. */
  lifecycleMode?: 'Persistent' | 'Ephemeral';
}

/**
 * A volume type. Host is what its owner (VolumeManager for the pod's volumes, PersistentVolumes
 * for a claim's PV) hands it: the sources, mounts and state it works with.
 */
export interface VolumePlugin<Host> {
  /**
   * upstream's GetPluginName (names.ts); escaped, its directory under ROOT/pods/UID/volumes
   * (but flexVolume's, whose volumes are under their driver's name, VENDOR~DRIVER).
   */
  readonly name: string;
  /** upstream's CanSupport: whether the plugin serves this spec. */
  canSupport(spec: VolumeSpec): boolean;
  /** upstream's RequiresRemount: set up again every refresh period while the pod runs (API-data volumes). */
  readonly requiresRemount?: boolean;
  /** upstream's SetUp: makes the volume ready for the pod's containers; throws with upstream's message. */
  setUp(host: Host, pod: Pod, spec: VolumeSpec): Promise<PersistentPath>;
  /**
   * upstream's TearDown for what outlives ROOT/pods/UID/volumes being unmounted and removed (which
   * the owner does for every plugin): CSI unpublish and unstage. Throws to keep the directory for a retry.
   */
  tearDown?(host: Host, uid: string): Promise<void>;
  /**
   * upstream's UnmountDevice (TearDownDevice for block) of a volume no pod of the node uses any
   * more: for one whose stage may have happened though no publish did (a NodeStageVolume that
   * failed uncertainly, the pod deleted before a retry). Does nothing when another pod has it.
   */
  unmountDevice?(host: Host, pv: PersistentVolume): Promise<void>;
  /**
   * Checked once a resize period while the pod runs: upstream's reconciler's ExpandInUseVolume of
   * a mounted claim whose PersistentVolume grew (online expansion). Throws the failure's reason.
   */
  resize?(host: Host, pod: Pod, spec: VolumeSpec): Promise<void>;
  /**
   * upstream's NodeExpandableVolumePlugin.NodeExpand (RequiresFSResize): expands the volume set up
   * for the pod to newSizeBytes on the node; throws a src/csi NodeExpandError.
   */
  nodeExpand?(host: Host, pod: Pod, spec: VolumeSpec, newSizeBytes: number): Promise<void>;
  /** upstream's ConstructVolumeSpec: the pod's volumes of this plugin found on disk, for a teardown after a restart. */
  reconstruct?(rootDir: string, uid: string): ReconstructedVolume[];
}

/**
 * A set-up that failed in a step other than SetUp, named as upstream's operation generator names
 * it in the FailedMount event (MountVolume.WaitForAttach, MountVolume.MountDevice).
 */
export class VolumeOperationError extends Error {
  readonly operation: string;
  constructor(operation: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.operation = operation;
  }
}

/**
 * Pure: upstream's FindPluginBySpec, the plugin that serves the spec; undefined when none does
 * ("volume type is not supported"). The first in list order: a valid spec has one source, so one plugin.
 */
export function findPlugin<P extends Pick<VolumePlugin<never>, 'canSupport'>>(plugins: readonly P[], spec: VolumeSpec): P | undefined {
  return plugins.find((p) => p.canSupport(spec));
}
