// The volume plugins' names (upstream's pluginName const of each pkg/volume package) and the
// directory each keeps a pod's volumes in (the name escaped, ROOT/pods/UID/volumes/kubernetes.io~csi).
// One list, pure: the plugins name themselves from it and src/stats tells the directories apart by
// it, without importing the plugins.
import { CSI_PLUGIN_NAME } from '../../csi/paths.ts';
import { escapeQualifiedName } from '../../podutil/pod-dirs.ts';

export const EMPTY_DIR = 'kubernetes.io/empty-dir';
export const CONFIG_MAP = 'kubernetes.io/configmap';
export const SECRET = 'kubernetes.io/secret';
export const DOWNWARD_API = 'kubernetes.io/downward-api';
export const PROJECTED = 'kubernetes.io/projected';
export const HOST_PATH = 'kubernetes.io/host-path';
export const LOCAL_VOLUME = 'kubernetes.io/local-volume';
/** upstream's CSIPluginName, from src/csi/paths.ts, which lays out the CSI plugin's directories. */
export const CSI = CSI_PLUGIN_NAME;
export const IMAGE = 'kubernetes.io/image';
/**
 * upstream's flexVolumePluginName: ROOT/plugins/kubernetes.io/flexvolume holds the attachable
 * drivers' device mounts. A pod's flexVolumes are not under it but under each driver's own name
 * (ROOT/pods/UID/volumes/VENDOR~DRIVER): upstream's flex plugins are named for their drivers.
 */
export const FLEX_VOLUME = 'kubernetes.io/flexvolume';
/** Not served by kubelet-ts (upstream's gitRepo, disabled by default); its directories, left by upstream's kubelet, are still measured. */
export const GIT_REPO = 'kubernetes.io/git-repo';
/** The claim of a persistentVolumeClaim or generic ephemeral volume, resolved to its PV's plugin (no directory of its own). */
export const PERSISTENT_CLAIM = 'kubernetes.io/persistent-claim';

/** The plugin's directory under ROOT/pods/UID/volumes (upstream's utilstrings.EscapeQualifiedName of its name). */
export const pluginDirName = (pluginName: string) => escapeQualifiedName(pluginName);
