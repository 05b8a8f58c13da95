import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type VolumeOperationDone, qualifiedPluginName, setUpOperation, timedOperation, totalVolumes } from './volume-metrics.ts';

test("qualifiedPluginName: upstream's GetFullQualifiedPluginNameForVolume", () => {
  const cases: [string, Parameters<typeof qualifiedPluginName>, string][] = [
    ['configMap', ['kubernetes.io/configmap', { volume: { name: 'c', configMap: { name: 'x' } } }], 'kubernetes.io/configmap'],
    [
      'inline CSI',
      ['kubernetes.io/csi', { volume: { name: 'c', csi: { driver: 'inline.csi.k8s.io' } } }],
      'kubernetes.io/csi:inline.csi.k8s.io',
    ],
    [
      'a claim bound to a CSI PV',
      [
        'kubernetes.io/csi',
        {
          volume: { name: 'd', persistentVolumeClaim: { claimName: 'x' } },
          pv: { spec: { csi: { driver: 'hostpath.csi.k8s.io', volumeHandle: 'h' } } },
        },
      ],
      'kubernetes.io/csi:hostpath.csi.k8s.io',
    ],
    ['a local PV', ['kubernetes.io/local-volume', { pv: { spec: { local: { path: '/mnt' } } } }], 'kubernetes.io/local-volume'],
    ['no spec', ['kubernetes.io/empty-dir', {}], 'kubernetes.io/empty-dir'],
    // upstream's flex plugins are named for their drivers.
    ['inline flexVolume', ['kubernetes.io/flexvolume', { volume: { name: 'f', flexVolume: { driver: 'k8s/dummy' } } }], 'k8s/dummy'],
    [
      'a claim bound to a flexVolume PV',
      [
        'kubernetes.io/flexvolume',
        { volume: { name: 'd', persistentVolumeClaim: { claimName: 'x' } }, pv: { spec: { flexVolume: { driver: 'k8s/nfs' } } } },
      ],
      'k8s/nfs',
    ],
  ];
  for (const [name, args, want] of cases) assert.equal(qualifiedPluginName(...args), want, name);
});

test("totalVolumes: upstream's totalVolumesCollector, per plugin and state, a volume once per pod", () => {
  const cm = 'kubernetes.io/configmap';
  const csi = 'kubernetes.io/csi:hostpath.csi.k8s.io';
  const cases: [string, Parameters<typeof totalVolumes>[0], ReturnType<typeof totalVolumes>][] = [
    ['no pods', [], []],
    [
      'one pod, one configMap mounted',
      [{ desired: [cm], mounted: [cm] }],
      [
        { plugin_name: cm, state: 'actual_state_of_world', count: 1 },
        { plugin_name: cm, state: 'desired_state_of_world', count: 1 },
      ],
    ],
    [
      'two pods, a CSI volume not mounted yet: desired only',
      [
        { desired: [cm, csi], mounted: [cm] },
        { desired: [cm, cm], mounted: [cm, cm] },
      ],
      [
        { plugin_name: cm, state: 'actual_state_of_world', count: 3 },
        { plugin_name: cm, state: 'desired_state_of_world', count: 3 },
        { plugin_name: csi, state: 'desired_state_of_world', count: 1 },
      ],
    ],
    [
      'a plugin without a name: N/A, as upstream',
      [{ desired: [''], mounted: [] }],
      [{ plugin_name: 'N/A', state: 'desired_state_of_world', count: 1 }],
    ],
  ];
  for (const [name, pods, want] of cases) assert.deepEqual(totalVolumes(pods), want, name);
});

test('setUpOperation: map_volume for a volume some container takes as a device, volume_mount otherwise', () => {
  const cases: [string, Parameters<typeof setUpOperation>[0], string, string][] = [
    ['a mounted volume', { spec: { containers: [{}] } }, 'data', 'volume_mount'],
    ['a device of a container', { spec: { containers: [{ volumeDevices: [{ name: 'raw' }] }] } }, 'raw', 'map_volume'],
    ['a device of an init container', { spec: { initContainers: [{ volumeDevices: [{ name: 'raw' }] }] } }, 'raw', 'map_volume'],
    ['another volume is the device', { spec: { containers: [{ volumeDevices: [{ name: 'raw' }] }] } }, 'data', 'volume_mount'],
    ['no spec', {}, 'data', 'volume_mount'],
  ];
  for (const [name, pod, volume, want] of cases) assert.equal(setUpOperation(pod, volume), want, name);
});

test('timedOperation: reports once, failed or not, and passes the result or the error through', async () => {
  const seen: VolumeOperationDone[] = [];
  const observe = (o: VolumeOperationDone) => seen.push(o);
  assert.equal(await timedOperation(observe, 'kubernetes.io/csi:d', 'volume_unmount', async () => 7), 7);
  await assert.rejects(
    timedOperation(observe, 'kubernetes.io/csi:d', 'unmount_device', async () => {
      throw new Error('boom');
    }),
    { message: 'boom' },
  );
  assert.deepEqual(
    seen.map(({ plugin, operation, ok }) => [plugin, operation, ok]),
    [
      ['kubernetes.io/csi:d', 'volume_unmount', true],
      ['kubernetes.io/csi:d', 'unmount_device', false],
    ],
  );
  assert.ok(seen.every((o) => o.seconds >= 0 && o.seconds < 1));
  assert.equal(await timedOperation(undefined, 'p', 'volume_mount', async () => 'no observer'), 'no observer');
});
