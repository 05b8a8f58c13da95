// A pod's inline `csi` volumes, CSI ephemeral volumes (upstream's csiPlugin for a volume.Spec
// of a Volume, csi_plugin.go and csi_mounter.go; KEP 596): published straight into the pod's
// volume directory, never attached nor staged; the driver makes the volume up from the
// volumeAttributes. Teardown unpublishes what the pod's vol_data.json files say is Ephemeral,
// so a restarted kubelet tears down what the previous one published.
import { setVolumeOwnershipUnlessMatching } from '../ownership.ts';
import { requiresRepublish } from '../../csi/service-account-tokens.ts';
import { publishedCsiVolumes } from './csi.ts';
import { CSI } from './names.ts';
import type { VolumePlugin } from './plugin.ts';
import type { PodVolumeHost } from './pod-host.ts';

export const csiInlinePlugin: VolumePlugin<PodVolumeHost> = {
  // upstream's one CSI plugin serves both; a pod's and a PV's volumes share its directory.
  name: CSI,
  canSupport: (s) => !s.pv && !!s.volume.csi,
  async setUp(host, pod, { volume: v, remount }) {
    if (!host.csi) throw new Error('CSI volumes are not enabled');
    const driver = await host.csi.csiDriver(v.csi!.driver);
    const { path, applyFsGroup } = await host.csi.publishInline(pod, v, driver, remount);
    const readOnly = v.csi!.readOnly ?? false;
    const sc = pod.spec?.securityContext;
    if (applyFsGroup) setVolumeOwnershipUnlessMatching(path, sc!.fsGroup!, readOnly, sc?.fsGroupChangePolicy);
    // upstream's RequiresRemount: published again at each pod sync when the CSIDriver says requiresRepublish.
    return { path, readOnly, ...(requiresRepublish(driver) && { requiresRemount: true }) };
  },
  /** upstream's TearDown of the pod's inline CSI volumes: NodeUnpublishVolume each; throws to keep the directory for a retry. */
  async tearDown(host, uid) {
    for (const p of publishedCsiVolumes(host.rootDir, uid)) {
      if (p.lifecycleMode !== 'Ephemeral') continue;
      if (!host.csi) throw new Error(`CSI volume ${p.specName} is published but CSI is not enabled`);
      await host.csi.unpublish(uid, p.specName);
      host.log.info('UnmountVolume.TearDown succeeded', { podUID: uid, volume: p.specName, driver: p.driverName });
    }
  },
  reconstruct: (rootDir, uid) => publishedCsiVolumes(rootDir, uid).filter((p) => p.lifecycleMode === 'Ephemeral'),
};
