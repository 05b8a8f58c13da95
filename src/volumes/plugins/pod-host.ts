// What VolumeManager hands the plugins of a pod's volumes (upstream's VolumeHost, cut down):
// where the pods' directories are, the API objects, the token cache, the tmpfs mount and, for
// claims, the PersistentVolumes.
import type { Logger } from '../../log/log.ts';
import type { Pod, Volume } from 'kubernetes-types/core/v1.js';
import type { PersistentPath } from './plugin.ts';
import type { VolumeSources } from '../sources.ts';
import type { TokenManager } from '../tokens.ts';

export interface PodVolumeHost {
  rootDir: string;
  sources: VolumeSources;
  tokens: TokenManager;
  log: Logger;
  /** The node's allocatable resources (defaults of resourceFieldRef limits and tmpfs sizes). */
  allocatable(): Record<string, string> | undefined;
  mountTmpfs(dir: string, sizeBytes?: number): Promise<void>;
  /** persistentVolumeClaim and ephemeral volumes; undefined: refused as unsupported. */
  persistent?: { setUp(pod: Pod, v: Volume): Promise<PersistentPath>; release(uid: string): Promise<void> };
}
