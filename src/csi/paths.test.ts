// The on-disk layout must be upstream's to the byte: a restarted kubelet reconstructs volumes from it.
// The hashes were computed with sha256sum, not with the code under test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  attachmentName,
  blockGlobalMapPath,
  blockPublishPath,
  blockStagingPath,
  blockVolDataPath,
  deviceMountPath,
  podDeviceMapPath,
  publishPath,
  volDataPath,
} from './paths.ts';

const R = '/var/lib/kubelet';
const UID = '5f0b6a52-9c1f-4f0e-9a55-0d5a3a7b2c11';
const PV = 'pvc-0a1b2c3d';

const cases: [string, string, string][] = [
  [
    'staging path: sha256 of the volume handle',
    deviceMountPath(R, 'hostpath.csi.k8s.io', 'vol-1'),
    `${R}/plugins/kubernetes.io/csi/hostpath.csi.k8s.io/d2e8363faaac7ae76def3b14091d8eb5755f6b92e9531627aeec833a8731cc49/globalmount`,
  ],
  [
    'a handle with slashes stays one path element',
    deviceMountPath(R, 'pd.csi.storage.gke.io', 'projects/p/zones/z/disks/d'),
    `${R}/plugins/kubernetes.io/csi/pd.csi.storage.gke.io/7f456511da37b81f19daddc79d6e2f8203e2d7b9e890b93b3321495ad564d649/globalmount`,
  ],
  [
    'staging vol_data.json, beside globalmount',
    volDataPath(deviceMountPath(R, 'hostpath.csi.k8s.io', 'vol-1')),
    `${R}/plugins/kubernetes.io/csi/hostpath.csi.k8s.io/d2e8363faaac7ae76def3b14091d8eb5755f6b92e9531627aeec833a8731cc49/vol_data.json`,
  ],
  ['publish path', publishPath(R, UID, PV), `${R}/pods/${UID}/volumes/kubernetes.io~csi/${PV}/mount`],
  [
    'publish vol_data.json, beside mount',
    volDataPath(publishPath(R, UID, PV)),
    `${R}/pods/${UID}/volumes/kubernetes.io~csi/${PV}/vol_data.json`,
  ],
  ['a spec name with a slash is escaped', publishPath(R, UID, 'a/b'), `${R}/pods/${UID}/volumes/kubernetes.io~csi/a~b/mount`],
  [
    'attachment name: sha256 of handle, driver and node',
    attachmentName('vol-1', 'hostpath.csi.k8s.io', 'kts-w1'),
    'csi-54a858e57cbeaf4824b4b433d9a396f665a0060a020b01f7e1c1dc9e95cd615b',
  ],
  ['block staging path', blockStagingPath(R, PV), `${R}/plugins/kubernetes.io/csi/volumeDevices/staging/${PV}`],
  ['block publish path', blockPublishPath(R, PV, UID), `${R}/plugins/kubernetes.io/csi/volumeDevices/publish/${PV}/${UID}`],
  ['block global map path', blockGlobalMapPath(R, PV), `${R}/plugins/kubernetes.io/csi/volumeDevices/${PV}/dev`],
  ['block vol_data.json', blockVolDataPath(R, PV), `${R}/plugins/kubernetes.io/csi/volumeDevices/${PV}/data/vol_data.json`],
  ['pod device map path', podDeviceMapPath(R, UID, PV), `${R}/pods/${UID}/volumeDevices/kubernetes.io~csi/${PV}`],
];

for (const [name, got, want] of cases) test(name, () => assert.equal(got, want));
