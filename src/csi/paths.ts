// Where the CSI volume plugin keeps a volume on the node, exactly as upstream's pkg/volume/csi lays
// it out, so that a kubelet restarted (or swapped for upstream's) finds and tears down what the
// previous one staged and published: the paths are derived from names alone, and each volume's
// vol_data.json beside them says which driver and volume handle they belong to.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { escapeQualifiedName, podVolumeDeviceDir, podVolumeDir, pluginDir, volumeDevicePluginDir } from '../podutil/pod-dirs.ts';

/** upstream's CSIPluginName. */
export const CSI_PLUGIN_NAME = 'kubernetes.io/csi';
const VOL_DATA_FILE = 'vol_data.json';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** upstream's getAttachmentName: the VolumeAttachment of a volume on a node, csi-<sha256(handle, driver, node)>. */
export const attachmentName = (volumeHandle: string, driver: string, nodeName: string) => `csi-${sha256(volumeHandle + driver + nodeName)}`;

/**
 * upstream's makeDeviceMountPath: the staging_target_path of NodeStageVolume for a filesystem
 * volume, ROOT/plugins/kubernetes.io/csi/DRIVER/sha256(HANDLE)/globalmount; its vol_data.json
 * ({driverName, volumeHandle}) sits in the directory above.
 */
export const deviceMountPath = (rootDir: string, driver: string, volumeHandle: string) =>
  join(pluginDir(rootDir, CSI_PLUGIN_NAME), driver, sha256(volumeHandle), 'globalmount');

/**
 * upstream's csiMountMgr.GetPath: the target_path of NodePublishVolume,
 * ROOT/pods/UID/volumes/kubernetes.io~csi/SPEC/mount. SPEC is upstream's volume.Spec.Name(): the
 * PersistentVolume's name for a PV-backed volume, the pod's volume name for an inline one.
 */
export const publishPath = (rootDir: string, podUID: string, specName: string) =>
  join(podVolumeDir(rootDir, podUID, escapeQualifiedName(CSI_PLUGIN_NAME), escapeQualifiedName(specName)), 'mount');

/**
 * upstream's makeVolumeHandle: the volume_id of a pod's inline (Ephemeral) CSI volume,
 * csi-<sha256(podUID + volume name)>; the driver makes the volume up from its attributes.
 */
export const ephemeralVolumeHandle = (podUID: string, specName: string) => `csi-${sha256(podUID + specName)}`;

/** The vol_data.json beside a staging or publish path (upstream: in filepath.Dir of it). */
export const volDataPath = (mountPath: string) => join(mountPath, '..', VOL_DATA_FILE);

// Raw block volumes, upstream's csi_block.go, all below ROOT/plugins/kubernetes.io/csi/volumeDevices.
const volumeDevices = (rootDir: string) => volumeDevicePluginDir(rootDir, CSI_PLUGIN_NAME);

/** upstream's csiBlockMapper.GetStagingPath: volumeDevices/staging/SPEC (SPEC not escaped, as upstream). */
export const blockStagingPath = (rootDir: string, specName: string) => join(volumeDevices(rootDir), 'staging', specName);

/** upstream's csiBlockMapper.getPublishPath: volumeDevices/publish/SPEC/UID, a file the driver creates. */
export const blockPublishPath = (rootDir: string, specName: string, podUID: string) =>
  join(volumeDevices(rootDir), 'publish', specName, podUID);

/** upstream's getVolumeDevicePluginDir (GetGlobalMapPath): volumeDevices/SPEC/dev, where each pod's map file goes. */
export const blockGlobalMapPath = (rootDir: string, specName: string) => join(volumeDevices(rootDir), escapeQualifiedName(specName), 'dev');

/** The block volume's vol_data.json, in upstream's getVolumeDeviceDataDir: volumeDevices/SPEC/data. */
export const blockVolDataPath = (rootDir: string, specName: string) =>
  join(volumeDevices(rootDir), escapeQualifiedName(specName), 'data', VOL_DATA_FILE);

/** upstream's GetPodDeviceMapPath: the pod's symlink to the device, ROOT/pods/UID/volumeDevices/kubernetes.io~csi/SPEC. */
export const podDeviceMapPath = (rootDir: string, podUID: string, specName: string) =>
  join(podVolumeDeviceDir(rootDir, podUID, escapeQualifiedName(CSI_PLUGIN_NAME)), specName);
