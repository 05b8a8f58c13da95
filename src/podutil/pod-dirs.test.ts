import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as dirs from './pod-dirs.ts';

test("the kubelet's directories as upstream's kubelet_getters.go lays them out", () => {
  const R = '/var/lib/kubelet';
  const cases: [string, string, string][] = [
    ['getPodsDir', dirs.podsDir(R), '/var/lib/kubelet/pods'],
    ['getPodDir', dirs.podDir(R, 'uid-1'), '/var/lib/kubelet/pods/uid-1'],
    ['getPodVolumesDir', dirs.podVolumesDir(R, 'uid-1'), '/var/lib/kubelet/pods/uid-1/volumes'],
    [
      'a plugin of the pod',
      dirs.podVolumePluginDir(R, 'uid-1', 'kubernetes.io~csi'),
      '/var/lib/kubelet/pods/uid-1/volumes/kubernetes.io~csi',
    ],
    [
      'getPodVolumeDir',
      dirs.podVolumeDir(R, 'uid-1', 'kubernetes.io~empty-dir', 'cache'),
      '/var/lib/kubelet/pods/uid-1/volumes/kubernetes.io~empty-dir/cache',
    ],
    ['getPodVolumeSubpathsDir', dirs.podVolumeSubpathsDir(R, 'uid-1'), '/var/lib/kubelet/pods/uid-1/volume-subpaths'],
    ['getPodVolumeDevicesDir', dirs.podVolumeDevicesDir(R, 'uid-1'), '/var/lib/kubelet/pods/uid-1/volumeDevices'],
    [
      'getPodVolumeDeviceDir',
      dirs.podVolumeDeviceDir(R, 'uid-1', 'kubernetes.io~csi'),
      '/var/lib/kubelet/pods/uid-1/volumeDevices/kubernetes.io~csi',
    ],
    ['getPodPluginsDir', dirs.podPluginsDir(R, 'uid-1'), '/var/lib/kubelet/pods/uid-1/plugins'],
    ['getPodPluginDir', dirs.podPluginDir(R, 'uid-1', 'kubernetes.io~csi'), '/var/lib/kubelet/pods/uid-1/plugins/kubernetes.io~csi'],
    ['getPodContainerDir', dirs.podContainerDir(R, 'uid-1', 'app'), '/var/lib/kubelet/pods/uid-1/containers/app'],
    ['getEtcHostsPath', dirs.podEtcHostsPath(R, 'uid-1'), '/var/lib/kubelet/pods/uid-1/etc-hosts'],
    ['the userns mappings file', dirs.podUsernsMappingsPath(R, 'uid-1'), '/var/lib/kubelet/pods/uid-1/userns'],
    ['getPluginsDir', dirs.pluginsDir(R), '/var/lib/kubelet/plugins'],
    ['getPluginDir, the name unescaped', dirs.pluginDir(R, 'kubernetes.io/csi'), '/var/lib/kubelet/plugins/kubernetes.io/csi'],
    [
      'getVolumeDevicePluginDir',
      dirs.volumeDevicePluginDir(R, 'kubernetes.io/csi'),
      '/var/lib/kubelet/plugins/kubernetes.io/csi/volumeDevices',
    ],
    ['getPluginsRegistrationDir', dirs.pluginsRegistrationDir(R), '/var/lib/kubelet/plugins_registry'],
    ['the device manager', dirs.devicePluginsDir(R), '/var/lib/kubelet/device-plugins'],
    ['getPodResourcesDir', dirs.podResourcesDir(R), '/var/lib/kubelet/pod-resources'],
    ['getCheckpointsDir', dirs.checkpointsDir(R), '/var/lib/kubelet/checkpoints'],
    ['a relative root stays relative', dirs.podVolumesDir('root', 'u'), 'root/pods/u/volumes'],
    ['a trailing slash on the root is dropped', dirs.podDir('/r/', 'u'), '/r/pods/u'],
  ];
  for (const [name, got, want] of cases) assert.equal(got, want, name);
});

test('EscapeQualifiedName: a plugin name as one path element', () => {
  const cases: [string, string][] = [
    ['kubernetes.io/empty-dir', 'kubernetes.io~empty-dir'],
    ['kubernetes.io/csi', 'kubernetes.io~csi'],
    ['example.com/a/b', 'example.com~a~b'],
    ['plain', 'plain'],
  ];
  for (const [name, want] of cases) assert.equal(dirs.escapeQualifiedName(name), want, name);
});
