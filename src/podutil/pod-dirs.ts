// Where the kubelet keeps things under its root directory (--root-dir, /var/lib/kubelet), in
// upstream's layout (pkg/kubelet/kubelet_getters.go and the directory names of
// pkg/kubelet/config/defaults.go), so that a kubelet restarted, or swapped for upstream's, finds
// what the previous one left: ROOT/pods/UID/{volumes/PLUGIN/NAME, volume-subpaths, volumeDevices,
// plugins, containers/NAME, etc-hosts, userns}, ROOT/plugins, ROOT/plugins_registry, ... One
// module at the bottom layer, pure (paths only, no I/O), so that every folder reads the same.
import { join } from 'node:path';

// upstream's DefaultKubelet*DirName.
const PODS = 'pods';
const VOLUMES = 'volumes';
const VOLUME_SUBPATHS = 'volume-subpaths';
const VOLUME_DEVICES = 'volumeDevices';
const PLUGINS = 'plugins';
const PLUGINS_REGISTRY = 'plugins_registry';
const CONTAINERS = 'containers';
const DEVICE_PLUGINS = 'device-plugins';
const POD_RESOURCES = 'pod-resources';
const CHECKPOINTS = 'checkpoints';
/** upstream's etc-hosts file of the pod (getEtcHostsPath). */
const ETC_HOSTS = 'etc-hosts';
/** upstream's userns mappingsFile. */
const USERNS_MAPPINGS = 'userns';

/** upstream's utilstrings.EscapeQualifiedName: a plugin name (kubernetes.io/csi) as one path element (kubernetes.io~csi). */
export const escapeQualifiedName = (s: string) => s.replaceAll('/', '~');

/** getPodsDir: ROOT/pods, one directory per pod this kubelet ran. */
export const podsDir = (rootDir: string) => join(rootDir, PODS);

/** getPodDir: ROOT/pods/UID. */
export const podDir = (rootDir: string, uid: string) => join(podsDir(rootDir), uid);

/** getPodVolumesDir: ROOT/pods/UID/volumes, one directory per plugin below. */
export const podVolumesDir = (rootDir: string, uid: string) => join(podDir(rootDir, uid), VOLUMES);

/** getPodVolumeSubpathsDir: ROOT/pods/UID/volume-subpaths, the pod's subPath bind mounts (src/volumes/subpath.ts). */
export const podSubPathsDir = (rootDir: string, uid: string) => join(podDir(rootDir, uid), 'volume-subpaths');

/** The directory of one plugin's volumes in the pod: ROOT/pods/UID/volumes/PLUGIN (pluginDir escaped, kubernetes.io~csi). */
export const podVolumePluginDir = (rootDir: string, uid: string, pluginDir: string) => join(podVolumesDir(rootDir, uid), pluginDir);

/** getPodVolumeDir: ROOT/pods/UID/volumes/PLUGIN/NAME (both already escaped, as upstream's callers pass them). */
export const podVolumeDir = (rootDir: string, uid: string, pluginDir: string, volumeName: string) =>
  join(podVolumePluginDir(rootDir, uid, pluginDir), volumeName);

/** getPodVolumeSubpathsDir: ROOT/pods/UID/volume-subpaths. */
export const podVolumeSubpathsDir = (rootDir: string, uid: string) => join(podDir(rootDir, uid), VOLUME_SUBPATHS);

/** getPodVolumeDevicesDir: ROOT/pods/UID/volumeDevices. */
export const podVolumeDevicesDir = (rootDir: string, uid: string) => join(podDir(rootDir, uid), VOLUME_DEVICES);

/** getPodVolumeDeviceDir: ROOT/pods/UID/volumeDevices/PLUGIN. */
export const podVolumeDeviceDir = (rootDir: string, uid: string, pluginDir: string) => join(podVolumeDevicesDir(rootDir, uid), pluginDir);

/** getPodPluginsDir: ROOT/pods/UID/plugins. */
export const podPluginsDir = (rootDir: string, uid: string) => join(podDir(rootDir, uid), PLUGINS);

/** getPodPluginDir: ROOT/pods/UID/plugins/PLUGIN. */
export const podPluginDir = (rootDir: string, uid: string, pluginName: string) => join(podPluginsDir(rootDir, uid), pluginName);

/** getPodContainerDir: ROOT/pods/UID/containers/NAME, where each instance's termination message file goes. */
export const podContainerDir = (rootDir: string, uid: string, containerName: string) =>
  join(podDir(rootDir, uid), CONTAINERS, containerName);

/** getEtcHostsPath: the pod's managed hosts file, ROOT/pods/UID/etc-hosts. */
export const podEtcHostsPath = (rootDir: string, uid: string) => join(podDir(rootDir, uid), ETC_HOSTS);

/** The userns manager's mappings file of the pod, ROOT/pods/UID/userns. */
export const podUsernsMappingsPath = (rootDir: string, uid: string) => join(podDir(rootDir, uid), USERNS_MAPPINGS);

/** getPluginsDir: ROOT/plugins, where plugins keep what is not per pod. */
export const pluginsDir = (rootDir: string) => join(rootDir, PLUGINS);

/** getPluginDir: ROOT/plugins/PLUGIN (upstream passes the name unescaped: ROOT/plugins/kubernetes.io/csi). */
export const pluginDir = (rootDir: string, pluginName: string) => join(pluginsDir(rootDir), pluginName);

/** getVolumeDevicePluginDir: ROOT/plugins/PLUGIN/volumeDevices. */
export const volumeDevicePluginDir = (rootDir: string, pluginName: string) => join(pluginDir(rootDir, pluginName), VOLUME_DEVICES);

/** getPluginsRegistrationDir: ROOT/plugins_registry, the sockets of plugins that register (CSI, DRA). */
export const pluginsRegistrationDir = (rootDir: string) => join(rootDir, PLUGINS_REGISTRY);

/** The device manager's directory (upstream's DevicePluginPath under the root dir): ROOT/device-plugins. */
export const devicePluginsDir = (rootDir: string) => join(rootDir, DEVICE_PLUGINS);

/** getPodResourcesDir: ROOT/pod-resources, the PodResources API's socket. */
export const podResourcesDir = (rootDir: string) => join(rootDir, POD_RESOURCES);

/** getCheckpointsDir: ROOT/checkpoints. */
export const checkpointsDir = (rootDir: string) => join(rootDir, CHECKPOINTS);
