// What PersistentVolumes hands the plugins of a claim's PersistentVolume (upstream's VolumeHost
// and the attach state of its actual state of world, cut down).
import type { CsiVolumes } from '../../csi/volumes.ts';
import type { Logger } from '../../log/log.ts';
import type { BlockDeviceOps } from '../../mount/block-device.ts';
import type { ClaimSources } from '../sources.ts';
import type { FlexVolumeOps } from './flexvolume/flex-volumes.ts';
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';

export interface PersistentHost {
  rootDir: string;
  nodeName: string;
  sources: ClaimSources;
  /** undefined: no CSI (tests of the other plugins). */
  csi?: Pick<
    CsiVolumes,
    'stage' | 'publish' | 'unpublish' | 'unstage' | 'nodeExpand' | 'stageBlock' | 'publishBlock' | 'unpublishBlock' | 'unstageBlock'
  >;
  /** The bind mounts and loop devices of raw block volumes (src/mount/block-device.ts). */
  blockDevices: BlockDeviceOps;
  /**
   * enableControllerAttachDetach: the attach/detach controller attaches (the kubelet waits for it);
   * false: the kubelet makes and deletes the VolumeAttachments itself (csi.ts attach and detach).
   */
  controllerAttachDetach: boolean;
  /** The Node's status.volumesAttached names, as the attach/detach controller set them. */
  volumesAttached(): string[];
  /** Whether the last node status sent carried the volume in volumesInUse (upstream's MarkVolumesAsReportedInUse). */
  reportedInUse(unique: string): boolean;
  bindMount(source: string, target: string, readOnly: boolean): Promise<void>;
  /**
   * upstream's VerifyExhaustedResource: told of a VolumeAttachment that failed; refreshes the
   * driver's CSINode allocatable count when it failed with ResourceExhausted (src/csi/node-updater.ts).
   */
  resourceExhausted?(csiDriver: CSIDriver | undefined, va: VolumeAttachment): boolean;
  /** flexVolume PersistentVolumes (plugins/flexvolume); undefined: refused. */
  flex?: FlexVolumeOps;
  log: Logger;
}
