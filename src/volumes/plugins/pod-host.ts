// What VolumeManager hands the plugins of a pod's volumes (upstream's VolumeHost, cut down):
// where the pods' directories are, the API objects, the token cache, the tmpfs mount and, for
// claims, the PersistentVolumes; for inline CSI volumes, the CSI calls.
import type { Logger } from '../../log/log.ts';
import type { Pod, Volume } from 'kubernetes-types/core/v1.js';
import type { CSIDriver } from 'kubernetes-types/storage/v1.js';
import type { CsiVolumes } from '../../csi/volumes.ts';
import type { PersistentPath } from './plugin.ts';
import type { VolumeSources } from '../sources.ts';
import type { TokenManager } from '../tokens.ts';
import type { FlexVolumeOps } from './flexvolume/flex-volumes.ts';

export interface PodVolumeHost {
  rootDir: string;
  sources: VolumeSources;
  tokens: TokenManager;
  log: Logger;
  /** The node's allocatable resources (defaults of resourceFieldRef limits and tmpfs sizes). */
  allocatable(): Record<string, string> | undefined;
  mountTmpfs(dir: string, sizeBytes?: number): Promise<void>;
  /** persistentVolumeClaim and ephemeral volumes; undefined: refused as unsupported. */
  persistent?: {
    setUp(pod: Pod, v: Volume, o?: { remount?: boolean }): Promise<PersistentPath>;
    release(uid: string): Promise<void>;
    /** Online node expansion of the set-up claim volume (persistent.ts). */
    resize?(pod: Pod, v: Volume): Promise<void>;
    /** The qualified plugin name of the claim's PV once resolved (volume_manager_total_volumes). */
    pluginName?(uid: string, volume: string): string | undefined;
  };
  /** A pod's inline `csi` volumes (plugins/csi-inline.ts); undefined: refused as unsupported. */
  csi?: InlineCsi;
  /** A pod's `flexVolume` volumes, and the teardown of its PVs' (plugins/flexvolume); undefined: refused. */
  flex?: FlexVolumeOps;
}

/** What the inline CSI plugin needs: the driver's CSIDriver object, and the publish calls of src/csi/volumes.ts. */
export interface InlineCsi extends Pick<CsiVolumes, 'publishInline' | 'unpublish'> {
  /** undefined when the driver has no CSIDriver object. */
  csiDriver(name: string): Promise<CSIDriver | undefined>;
}
