// FlexVolume as the volume manager's plugins (upstream's flexVolumePlugin, one per probed driver,
// pkg/volume/flexvolume): a pod's inline `flexVolume`, and a claim's PersistentVolume with
// `spec.flexVolume`. Both are served by FlexVolumes (flex-volumes.ts) through their host; which
// driver a volume names is looked up when it is set up (upstream's FindPluginBySpec finds no plugin
// for a driver not installed: its message is the FailedMount's).
import { FLEX_VOLUME } from '../names.ts';
import type { VolumePlugin } from '../plugin.ts';
import type { PersistentHost } from '../persistent-host.ts';
import type { PodVolumeHost } from '../pod-host.ts';
import { type FlexVolumeOps, flexVolumesOnDisk } from './flex-volumes.ts';

function enabled(flex: FlexVolumeOps | undefined): FlexVolumeOps {
  if (!flex) throw new Error('flexVolume volumes are not enabled');
  return flex;
}

export const flexPodPlugin: VolumePlugin<PodVolumeHost> = {
  name: FLEX_VOLUME,
  canSupport: (s) => !s.pv && !!s.volume.flexVolume,
  setUp: (host, pod, spec) => enabled(host.flex).setUp(pod, spec),
  /**
   * The pod's flexVolumes, its PersistentVolumes' too: on disk they are alike (upstream
   * reconstructs each as an inline spec of its driver), and the pod's teardown runs this one.
   */
  async tearDown(host, uid) {
    if (host.flex) await host.flex.tearDown(uid);
    else if (flexVolumesOnDisk(host.rootDir, uid).length) enabled(host.flex);
  },
  reconstruct: flexVolumesOnDisk,
};

export const flexPersistentPlugin: VolumePlugin<PersistentHost> = {
  name: FLEX_VOLUME,
  canSupport: (s) => !!s.pv?.spec?.flexVolume,
  setUp: (host, pod, spec) => enabled(host.flex).setUp(pod, spec),
};
