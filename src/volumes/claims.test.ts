import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PersistentVolume, PersistentVolumeClaim, Pod, Volume } from 'kubernetes-types/core/v1.js';
import {
  claimMount,
  claimOf,
  claimProblem,
  persistentKind,
  podVolumeUsage,
  usedVolumes,
  readWriteOncePodProblem,
  uniqueVolumeName,
  volumeModeProblem,
  volumeProblem,
} from './claims.ts';

const pod: Pod = { metadata: { name: 'web-0', namespace: 'ns', uid: 'pod-uid' }, spec: { containers: [] } };
const bound = (over: Partial<PersistentVolumeClaim['metadata']> = {}): PersistentVolumeClaim => ({
  metadata: { name: 'data', namespace: 'ns', uid: 'claim-uid', ...over },
  spec: { volumeName: 'pv-1' },
  status: { phase: 'Bound' },
});
const plain = { claimName: 'data', readOnly: false, ephemeral: false };

test('claimOf: a persistentVolumeClaim names its claim; a generic ephemeral volume the pod-volume one', () => {
  assert.deepEqual(claimOf(pod, { name: 'v', persistentVolumeClaim: { claimName: 'data', readOnly: true } }), {
    claimName: 'data',
    readOnly: true,
    ephemeral: false,
  });
  assert.deepEqual(claimOf(pod, { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } }), {
    claimName: 'web-0-scratch',
    readOnly: false,
    ephemeral: true,
  });
  assert.equal(claimOf(pod, { name: 'e', emptyDir: {} }), undefined);
});

test('claimProblem: upstream getPVCExtractPV and ephemeral.VolumeIsForPod', () => {
  const prefix = 'error processing PVC ns/data: ';
  const cases: [string, PersistentVolumeClaim, typeof plain, string | undefined][] = [
    ['bound', bound(), plain, undefined],
    ['pending', { ...bound(), status: { phase: 'Pending' } }, plain, `${prefix}PVC is not bound`],
    ['no volume name', { ...bound(), spec: {} }, plain, `${prefix}PVC has empty pvc.Spec.VolumeName`],
    ['deleted, unprotected', bound({ deletionTimestamp: '2026-11-25T00:00:00Z' }), plain, `${prefix}PVC is being deleted`],
    [
      'deleted, protected: a running pod keeps it',
      bound({ deletionTimestamp: '2026-11-25T00:00:00Z', finalizers: ['kubernetes.io/pvc-protection'] }),
      plain,
      undefined,
    ],
    [
      'ephemeral, owned by the pod',
      bound({ ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web-0', uid: 'pod-uid', controller: true }] }),
      { ...plain, ephemeral: true },
      undefined,
    ],
    [
      "ephemeral, not the pod's",
      bound({ ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'other', uid: 'other', controller: true }] }),
      { ...plain, ephemeral: true },
      'PVC ns/data was not created for pod ns/web-0 (pod is not owner)',
    ],
  ];
  for (const [name, pvc, ref, want] of cases) assert.equal(claimProblem(pod, pvc, ref), want, name);
});

test('volumeProblem: the PV must be bound to this claim (upstream getPVSpec)', () => {
  const pv = (claimUID?: string): PersistentVolume => ({
    metadata: { name: 'pv-1' },
    spec: claimUID === undefined ? {} : { claimRef: { uid: claimUID } },
  });
  assert.equal(volumeProblem(pod, bound(), pv('claim-uid'), plain), undefined);
  assert.equal(
    volumeProblem(pod, bound(), pv(), plain),
    'error processing PVC ns/data: found PV object pv-1 but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim',
  );
  assert.equal(
    volumeProblem(pod, bound(), pv('stale'), plain),
    'error processing PVC ns/data: found PV object pv-1 but its pv.Spec.ClaimRef.UID stale does not point to claim.UID claim-uid',
  );
});

test('volumeModeProblem: Block only as volumeDevices, Filesystem only as volumeMounts', () => {
  const usage = podVolumeUsage({
    spec: {
      initContainers: [{ name: 'i', volumeMounts: [{ name: 'fs', mountPath: '/fs' }] }],
      containers: [{ name: 'c', volumeDevices: [{ name: 'raw', devicePath: '/dev/xvda' }] }],
    },
  });
  assert.deepEqual([...usage.mounts], ['fs']);
  assert.deepEqual([...usage.devices], ['raw']);
  const block: PersistentVolume = { spec: { volumeMode: 'Block' } };
  const fs: PersistentVolume = { spec: {} };
  assert.equal(volumeModeProblem('raw', block, usage), undefined);
  assert.equal(volumeModeProblem('fs', fs, usage), undefined);
  assert.equal(volumeModeProblem('fs', block, usage), 'volume fs has volumeMode Block, but is specified in volumeMounts');
  assert.equal(volumeModeProblem('raw', fs, usage), 'volume raw has volumeMode Filesystem, but is specified in volumeDevices');
});

test('usedVolumes: the volumes a container mounts or maps, in spec order; an unused claim is left out', () => {
  const pod = (containers: object[], ephemeralContainers: object[] = []) =>
    ({
      spec: {
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'c' } }, { name: 'raw' }, { name: 'unused' }],
        containers,
        ephemeralContainers,
      },
    }) as Pod;
  const rows: [string, Pod, string[]][] = [
    ['none used', pod([{ name: 'c' }]), []],
    ['a mount and a device', pod([{ name: 'c', volumeDevices: [{ name: 'raw' }], volumeMounts: [{ name: 'data' }] }]), ['data', 'raw']],
    ['an ephemeral container counts', pod([{ name: 'c' }], [{ name: 'e', volumeMounts: [{ name: 'unused' }] }]), ['unused']],
  ];
  for (const [name, p, want] of rows)
    assert.deepEqual(
      usedVolumes(p).map((v) => v.name),
      want,
      name,
    );
});

test('persistentKind and uniqueVolumeName: CSI and local are reported in use, hostPath is not', () => {
  const csi: PersistentVolume = { metadata: { name: 'pv-a' }, spec: { csi: { driver: 'hostpath.csi.k8s.io', volumeHandle: 'h-1' } } };
  const local: PersistentVolume = { metadata: { name: 'pv-b' }, spec: { local: { path: '/mnt/disk' } } };
  const hostPath: PersistentVolume = { metadata: { name: 'pv-c' }, spec: { hostPath: { path: '/data' } } };
  const nfs: PersistentVolume = { metadata: { name: 'pv-d' }, spec: { nfs: { server: 's', path: '/' } } };
  const flex: PersistentVolume = { metadata: { name: 'pv-e' }, spec: { flexVolume: { driver: 'k8s/dummy' } } };
  assert.deepEqual([csi, local, hostPath, nfs, flex].map(persistentKind), ['csi', 'local', 'hostPath', undefined, 'flexVolume']);
  // An attachable flexVolume's use is reported by the flexVolume plugin itself (plugins/flexvolume), whose driver says whether it attaches.
  assert.deepEqual([csi, local, hostPath, flex].map(uniqueVolumeName), [
    'kubernetes.io/csi/hostpath.csi.k8s.io^h-1',
    'kubernetes.io/local-volume/pv-b',
    undefined,
    undefined,
  ]);
});

test("claimMount: the claim volumes with upstream's pvcRef and what their PV's plugin measures", () => {
  const csi: PersistentVolume = { metadata: { name: 'pv-a' }, spec: { csi: { driver: 'hostpath.csi.k8s.io', volumeHandle: 'h-1' } } };
  const local: PersistentVolume = { metadata: { name: 'pv-b' }, spec: { local: { path: '/mnt/disk' } } };
  const block: PersistentVolume = { metadata: { name: 'pv-c' }, spec: { local: { path: '/dev/loop7' }, volumeMode: 'Block' } };
  const nfs: PersistentVolume = { metadata: { name: 'pv-d' }, spec: { nfs: { server: 's', path: '/' } } };
  const claim: Volume = { name: 'data', persistentVolumeClaim: { claimName: 'data-web-0' } };
  const generic: Volume = { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } };
  const podRef = { name: 'web-0', namespace: 'ns', uid: 'pod-uid' };
  const cases: [string, Volume, PersistentVolume, string, unknown][] = [
    [
      'persistentVolumeClaim on CSI',
      claim,
      csi,
      '/r/pods/pod-uid/volumes/kubernetes.io~csi/pv-a/mount',
      {
        pod: podRef,
        volume: 'data',
        pvc: { name: 'data-web-0', namespace: 'ns' },
        kind: 'csi',
        path: '/r/pods/pod-uid/volumes/kubernetes.io~csi/pv-a/mount',
        block: false,
        csi: { driver: 'hostpath.csi.k8s.io', volumeHandle: 'h-1' },
      },
    ],
    [
      'generic ephemeral on local: the claim is POD-VOLUME',
      generic,
      local,
      '/r/pods/pod-uid/volumes/kubernetes.io~local-volume/pv-b',
      {
        pod: podRef,
        volume: 'scratch',
        pvc: { name: 'web-0-scratch', namespace: 'ns' },
        kind: 'local',
        path: '/r/pods/pod-uid/volumes/kubernetes.io~local-volume/pv-b',
        block: false,
        csi: undefined,
      },
    ],
    [
      'a Block local PV: its device',
      claim,
      block,
      '/dev/loop7',
      {
        pod: podRef,
        volume: 'data',
        pvc: { name: 'data-web-0', namespace: 'ns' },
        kind: 'local',
        path: '/dev/loop7',
        block: true,
        csi: undefined,
      },
    ],
    ['not a claim', { name: 'cache', emptyDir: {} }, local, '/x', undefined],
    ['a PV without a plugin', claim, nfs, '/x', undefined],
  ];
  for (const [name, v, pv, path, want] of cases) assert.deepEqual(claimMount(pod, v, pv, path), want, name);
});

test('readWriteOncePodProblem: only a PV whose only access mode is ReadWriteOncePod, mounted by another pod', () => {
  const pv = (accessModes: string[]) => ({ spec: { accessModes } });
  const msg = 'volume uses the ReadWriteOncePod access mode and is already in use by another pod';
  const rows: [string, string[], boolean, string | undefined][] = [
    ['RWOP, used elsewhere', ['ReadWriteOncePod'], true, msg],
    ['RWOP, not used elsewhere', ['ReadWriteOncePod'], false, undefined],
    ['RWOP among others: the pod may mean another', ['ReadWriteOncePod', 'ReadWriteOnce'], true, undefined],
    ['RWO', ['ReadWriteOnce'], true, undefined],
    ['no modes', [], true, undefined],
  ];
  for (const [name, modes, elsewhere, want] of rows) assert.equal(readWriteOncePodProblem(pv(modes), elsewhere), want, name);
});
