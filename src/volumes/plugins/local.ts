// local PersistentVolumes (upstream's pkg/volume/local): the node's path bind-mounted into the
// pod's volume directory, owned by fsGroup unless read-only; a Block one is handed to the
// containers as the device itself.
import { podVolumeDir } from '../../podutil/pod-dirs.ts';
import { setVolumeOwnershipUnlessMatching } from '../ownership.ts';
import { LOCAL_VOLUME, pluginDirName } from './names.ts';
import type { VolumePlugin } from './plugin.ts';
import type { PersistentHost } from './persistent-host.ts';

export const localPlugin: VolumePlugin<PersistentHost> = {
  name: LOCAL_VOLUME,
  canSupport: (s) => !!s.pv?.spec?.local,
  // upstream's localVolumeMounter.SetUpAt.
  async setUp(host, pod, { pv, readOnly }) {
    const source = pv!.spec!.local!.path;
    if (pv!.spec?.volumeMode === 'Block') return { path: source, readOnly, block: true };
    const target = podVolumeDir(host.rootDir, pod.metadata!.uid!, pluginDirName(LOCAL_VOLUME), pv!.metadata!.name!);
    await host.bindMount(source, target, readOnly);
    const fsGroup = pod.spec?.securityContext?.fsGroup;
    if (fsGroup !== undefined && !readOnly)
      setVolumeOwnershipUnlessMatching(target, fsGroup, false, pod.spec?.securityContext?.fsGroupChangePolicy);
    return { path: target, readOnly };
  },
};
