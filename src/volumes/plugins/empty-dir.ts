// emptyDir (upstream's pkg/volume/emptydir): a directory of the pod's, a tmpfs for medium Memory,
// owned by the pod's fsGroup.
import { setVolumeOwnershipUnlessMatching } from '../ownership.ts';
import { EMPTY_DIR } from './names.ts';
import type { VolumePlugin } from './plugin.ts';
import type { PodVolumeHost } from './pod-host.ts';
import { wrappedVolumeDir } from './wrapped-dir.ts';

export const emptyDirPlugin: VolumePlugin<PodVolumeHost> = {
  name: EMPTY_DIR,
  canSupport: (s) => !s.pv && !!s.volume.emptyDir,
  async setUp(host, pod, { volume: v }) {
    const dir = await wrappedVolumeDir(host, pod, v, EMPTY_DIR, v.emptyDir?.medium === 'Memory');
    const fsGroup = pod.spec?.securityContext?.fsGroup;
    if (fsGroup !== undefined) setVolumeOwnershipUnlessMatching(dir, fsGroup, false, pod.spec?.securityContext?.fsGroupChangePolicy);
    return { path: dir, readOnly: false };
  },
};
