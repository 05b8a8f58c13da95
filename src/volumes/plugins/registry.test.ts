import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PersistentVolume, Volume } from 'kubernetes-types/core/v1.js';
import { findPlugin } from './plugin.ts';
import { persistentVolumePlugins, podVolumePlugins } from './registry.ts';
import { pluginDirName } from './names.ts';
import { flexDeviceMountPath, flexPodVolumeDir } from './flexvolume/flex-volumes.ts';

const inline = (v: object) => ({ volume: { name: 'v', ...v } as Volume, readOnly: false });
const bound = (spec: object) => ({
  volume: { name: 'v', persistentVolumeClaim: { claimName: 'c' } } as Volume,
  pv: { metadata: { name: 'pv-1' }, spec } as PersistentVolume,
  readOnly: false,
});

test("which plugin serves a pod's volume (upstream's FindPluginBySpec), and which of them are set up again while the pod runs", () => {
  const cases: [string, ReturnType<typeof inline>, string | undefined, boolean][] = [
    ['emptyDir', inline({ emptyDir: {} }), 'kubernetes.io/empty-dir', false],
    ['emptyDir on memory', inline({ emptyDir: { medium: 'Memory' } }), 'kubernetes.io/empty-dir', false],
    ['hostPath', inline({ hostPath: { path: '/srv' } }), 'kubernetes.io/host-path', false],
    ['configMap', inline({ configMap: { name: 'c' } }), 'kubernetes.io/configmap', true],
    ['secret', inline({ secret: { secretName: 's' } }), 'kubernetes.io/secret', true],
    ['downwardAPI', inline({ downwardAPI: { items: [] } }), 'kubernetes.io/downward-api', true],
    ['projected', inline({ projected: { sources: [] } }), 'kubernetes.io/projected', true],
    ['persistentVolumeClaim', inline({ persistentVolumeClaim: { claimName: 'c' } }), 'kubernetes.io/persistent-claim', false],
    ['generic ephemeral', inline({ ephemeral: { volumeClaimTemplate: { spec: {} } } }), 'kubernetes.io/persistent-claim', false],
    ['image', inline({ image: { reference: 'busybox' } }), 'kubernetes.io/image', false],
    ['nfs: no plugin', inline({ nfs: { server: 's', path: '/' } }), undefined, false],
    ['csi inline (Ephemeral)', inline({ csi: { driver: 'd' } }), 'kubernetes.io/csi', false],
    ['flexVolume', inline({ flexVolume: { driver: 'k8s/dummy' } }), 'kubernetes.io/flexvolume', false],
    ['no source at all', inline({}), undefined, false],
    // The order of the list decides a spec naming several sources, as volumeKind did.
    ['emptyDir before hostPath', inline({ hostPath: { path: '/srv' }, emptyDir: {} }), 'kubernetes.io/empty-dir', false],
  ];
  for (const [name, spec, want, remount] of cases) {
    const p = findPlugin(podVolumePlugins, spec);
    assert.equal(p?.name, want, name);
    assert.equal(!!p?.requiresRemount, remount, `${name}: requiresRemount`);
  }
});

test("which plugin serves a claim's PersistentVolume; of the pod's plugins only the shared hostPath takes a bound spec", () => {
  const cases: [string, ReturnType<typeof bound>, string | undefined][] = [
    ['CSI', bound({ csi: { driver: 'd', volumeHandle: 'h' } }), 'kubernetes.io/csi'],
    ['local', bound({ local: { path: '/mnt/disk1' } }), 'kubernetes.io/local-volume'],
    ['hostPath', bound({ hostPath: { path: '/srv' } }), 'kubernetes.io/host-path'],
    ['flexVolume', bound({ flexVolume: { driver: 'k8s/dummy' } }), 'kubernetes.io/flexvolume'],
    ['nfs: no plugin', bound({ nfs: { server: 's', path: '/' } }), undefined],
    ['CSI before local', bound({ local: { path: '/mnt' }, csi: { driver: 'd', volumeHandle: 'h' } }), 'kubernetes.io/csi'],
  ];
  for (const [name, spec, want] of cases) {
    assert.equal(findPlugin(persistentVolumePlugins, spec)?.name, want, name);
    const byPod = findPlugin(podVolumePlugins, spec)?.name;
    assert.equal(byPod, want === 'kubernetes.io/host-path' ? want : undefined, `${name}: by the pod's plugins`);
  }
  // Nor do the PVs' plugins take a pod's inline volume, but hostPath.
  for (const p of persistentVolumePlugins)
    assert.equal(p.canSupport(inline({ emptyDir: {} })), false, `${p.name} takes no inline emptyDir`);
});

test('every plugin has its own name in its list; the directories are the names escaped, as upstream lays them out', () => {
  for (const list of [podVolumePlugins, persistentVolumePlugins]) assert.equal(new Set(list.map((p) => p.name)).size, list.length);
  // upstream's one CSI plugin is two here (a pod's inline volumes, a PV's), under one name and directory.
  const names = [...new Set([...podVolumePlugins, ...persistentVolumePlugins].map((p) => p.name))];
  const cases: [string, string][] = [
    ['kubernetes.io/empty-dir', 'kubernetes.io~empty-dir'],
    ['kubernetes.io/configmap', 'kubernetes.io~configmap'],
    ['kubernetes.io/secret', 'kubernetes.io~secret'],
    ['kubernetes.io/downward-api', 'kubernetes.io~downward-api'],
    ['kubernetes.io/projected', 'kubernetes.io~projected'],
    ['kubernetes.io/csi', 'kubernetes.io~csi'],
    ['kubernetes.io/local-volume', 'kubernetes.io~local-volume'],
  ];
  for (const [name, dir] of cases) {
    assert.ok(names.includes(name), name);
    assert.equal(pluginDirName(name), dir, name);
  }
  // Not flexVolume's: upstream's flex plugins are named for their drivers, and so are their directories.
  assert.ok(names.includes('kubernetes.io/flexvolume'));
  assert.equal(flexPodVolumeDir('/var/lib/kubelet', 'uid-1', 'k8s/dummy', 'v'), '/var/lib/kubelet/pods/uid-1/volumes/k8s~dummy/v');
  assert.equal(
    flexDeviceMountPath('/var/lib/kubelet', 'k8s/dummy', 'v'),
    '/var/lib/kubelet/plugins/kubernetes.io/flexvolume/k8s/dummy/mounts/v',
  );
});
