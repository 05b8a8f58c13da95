// The volume plugins kubelet-ts has (upstream's ProbeVolumePlugins of cmd/kubelet/app/plugins.go),
// in two lists by what they are handed: a pod's volumes (VolumeManager), and the PersistentVolume
// a claim is bound to (PersistentVolumes). The first plugin whose canSupport takes a spec serves it
// (findPlugin); a valid spec names one source, so the order only matters for one that names several.
//
// To add a volume type: write src/volumes/plugins/<type>.ts exporting a VolumePlugin (its name,
// a canSupport that takes only its specs, setUp; tearDown and reconstruct if it holds something
// outside ROOT/pods/UID/volumes, which is unmounted and removed whole), and add it below to the
// list of the host it needs: one file and one line. Its name goes to names.ts only if src/stats
// must tell its directories apart. Add its spec to registry.test.ts's table. (flexVolume, with its
// driver calls and the prober of volumePluginDir, is a folder of its own: flexvolume/.)
import { claimPlugin } from './claim.ts';
import { configMapPlugin } from './config-map.ts';
import { csiPlugin } from './csi.ts';
import { csiInlinePlugin } from './csi-inline.ts';
import { downwardAPIPlugin } from './downward-api.ts';
import { emptyDirPlugin } from './empty-dir.ts';
import { flexPersistentPlugin, flexPodPlugin } from './flexvolume/plugins.ts';
import { hostPathPlugin } from './host-path.ts';
import { imagePlugin } from './image.ts';
import { localPlugin } from './local.ts';
import type { VolumePlugin } from './plugin.ts';
import type { PersistentHost } from './persistent-host.ts';
import type { PodVolumeHost } from './pod-host.ts';
import { projectedPlugin } from './projected.ts';
import { secretPlugin } from './secret.ts';

/** The plugins of a pod's spec.volumes. */
export const podVolumePlugins: readonly VolumePlugin<PodVolumeHost>[] = [
  emptyDirPlugin,
  hostPathPlugin,
  configMapPlugin,
  secretPlugin,
  downwardAPIPlugin,
  projectedPlugin,
  claimPlugin,
  imagePlugin,
  csiInlinePlugin,
  flexPodPlugin,
];

/** The plugins of the PersistentVolume bound to a pod's claim. */
export const persistentVolumePlugins: readonly VolumePlugin<PersistentHost>[] = [
  csiPlugin,
  localPlugin,
  hostPathPlugin,
  flexPersistentPlugin,
];
