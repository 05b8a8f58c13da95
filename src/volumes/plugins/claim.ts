// persistentVolumeClaim and generic ephemeral volumes: the claim is resolved to its bound
// PersistentVolume, which is set up by its own plugin (persistent.ts, registry.ts's
// persistentVolumePlugins). Upstream resolves the claim in the volume manager's populator.
import { PERSISTENT_CLAIM } from './names.ts';
import type { VolumePlugin } from './plugin.ts';
import type { PodVolumeHost } from './pod-host.ts';

export const claimPlugin: VolumePlugin<PodVolumeHost> = {
  name: PERSISTENT_CLAIM,
  canSupport: (s) => !s.pv && !!(s.volume.persistentVolumeClaim || s.volume.ephemeral),
  async setUp(host, pod, { volume: v, remount }) {
    if (!host.persistent) throw new Error('volume type is not supported by kubelet-ts');
    return host.persistent.setUp(pod, v, { remount });
  },
  resize: async (host, pod, { volume: v }) => host.persistent?.resize?.(pod, v),
  // The PVs' plugins release what they hold (CSI unpublish and unstage), and the node's volumesInUse.
  tearDown: async (host, uid) => host.persistent?.release(uid),
};
