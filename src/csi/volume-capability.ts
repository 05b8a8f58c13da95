// The VolumeCapability the kubelet sends with NodeStageVolume, NodePublishVolume and
// NodeExpandVolume (upstream builds it inside csiDriverClient): raw block or a mount with its
// filesystem, flags and fsGroup, and the PersistentVolume's access mode in CSI's terms.
import type { VolumeCapability } from './generated/csi/v1/VolumeCapability.ts';

/** upstream's fsTypeBlockName: the fsType that asks for a raw block volume. */
const FS_TYPE_BLOCK = 'block';

type Mode = NonNullable<NonNullable<VolumeCapability['accessMode']>['mode']>;

/**
 * upstream's asCSIAccessModeV1, or asSingleNodeMultiWriterCapableCSIAccessModeV1 for a driver with
 * the SINGLE_NODE_MULTI_WRITER capability: without it ReadWriteOncePod is sent as ReadWriteOnce.
 */
export function csiAccessMode(mode: string | undefined, singleNodeMultiWriter: boolean): Mode {
  switch (mode) {
    case 'ReadWriteOnce':
      return singleNodeMultiWriter ? 'SINGLE_NODE_MULTI_WRITER' : 'SINGLE_NODE_WRITER';
    case 'ReadOnlyMany':
      return 'MULTI_NODE_READER_ONLY';
    case 'ReadWriteMany':
      return 'MULTI_NODE_MULTI_WRITER';
    case 'ReadWriteOncePod':
      return singleNodeMultiWriter ? 'SINGLE_NODE_SINGLE_WRITER' : 'SINGLE_NODE_WRITER';
  }
  return 'UNKNOWN';
}

export interface CapabilityInput {
  /** FS_TYPE_BLOCK for a raw block volume; '' lets the driver choose. */
  fsType: string;
  /** The PersistentVolume's first access mode (upstream: ReadWriteOnce when it has none). */
  accessMode: string;
  singleNodeMultiWriter: boolean;
  mountFlags?: string[];
  /** Only for a driver with VOLUME_MOUNT_GROUP: it applies the pod's fsGroup itself. */
  fsGroup?: number;
}

export function volumeCapability(c: CapabilityInput): VolumeCapability {
  const accessMode = { mode: csiAccessMode(c.accessMode, c.singleNodeMultiWriter) };
  if (c.fsType === FS_TYPE_BLOCK) return { block: {}, accessMode };
  return {
    mount: {
      fsType: c.fsType,
      mountFlags: c.mountFlags ?? [],
      ...(c.fsGroup === undefined ? {} : { volumeMountGroup: String(c.fsGroup) }),
    },
    accessMode,
  };
}
