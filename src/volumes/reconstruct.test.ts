import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Logger } from '../log/log.ts';
import { persistentVolumePlugins, podVolumePlugins } from './plugins/registry.ts';
import {
  hostOnDisk,
  type ReconstructionHost,
  reconstructionError,
  reconstructVolumes,
  type VolumeOnDisk,
  volumesOnDisk,
} from './reconstruct.ts';

const quiet: Logger = { info() {}, v() {}, warn() {}, error() {} };

test("reconstructionError: upstream's reconstructVolume, by plugin and what is beside the volume", () => {
  const host: ReconstructionHost = {
    pluginDirs: new Set(['kubernetes.io~empty-dir', 'kubernetes.io~projected', 'kubernetes.io~csi', 'kubernetes.io~local-volume']),
    flexDriver: (name) => name === 'example.com/lvm',
    constructed: (v) => v.specName !== 'pvc-lost',
  };
  const vol = (pluginDir: string, specName: string, block = false): VolumeOnDisk => ({ podUID: 'u1', pluginDir, specName, block });
  const cases: [string, VolumeOnDisk, string | undefined][] = [
    ['an emptyDir', vol('kubernetes.io~empty-dir', 'scratch'), undefined],
    ["a projected service account token (every pod's kube-api-access)", vol('kubernetes.io~projected', 'kube-api-access-x'), undefined],
    ['a CSI volume with its vol_data.json', vol('kubernetes.io~csi', 'pvc-1'), undefined],
    [
      'a CSI volume without it',
      vol('kubernetes.io~csi', 'pvc-lost'),
      'kubernetes.io/csi: plugin.ConstructVolumeSpec failed loading volume data of "pvc-lost"',
    ],
    ['a plugin kubelet-ts does not have (nfs)', vol('kubernetes.io~nfs', 'share'), 'no volume plugin matched name: kubernetes.io/nfs'],
    ['a flexVolume of an installed driver', vol('example.com~lvm', 'data'), undefined],
    ['a flexVolume of a driver no longer installed', vol('example.com~gone', 'data'), 'no volume plugin matched name: example.com/gone'],
    ['a raw block CSI volume', vol('kubernetes.io~csi', 'pvc-2', true), undefined],
    ['a raw block local volume', vol('kubernetes.io~local-volume', 'pv-3', true), undefined],
    [
      'a raw block volume of a plugin with no block support',
      vol('kubernetes.io~empty-dir', 'x', true),
      'could not find block volume plugin "kubernetes.io/empty-dir" (spec.Name: "x") pod "u1" (UID: "u1")',
    ],
  ];
  for (const [name, v, want] of cases) assert.equal(reconstructionError(v, host), want, name);
});

test('volumesOnDisk and hostOnDisk: the volume directories of every pod, read back by the plugins kubelet-ts has', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-reconstruct-'));
  const pluginDir = mkdtempSync(join(tmpdir(), 'kts-flex-'));
  t.after(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(pluginDir, { recursive: true, force: true });
  });
  const dir = (p: string) => mkdirSync(join(root, p), { recursive: true });
  const file = (p: string, content: string) => {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), content);
  };
  dir('pods/u1/volumes/kubernetes.io~empty-dir/scratch');
  dir('pods/u1/volumes/kubernetes.io~projected/kube-api-access-x');
  file('pods/u1/volumes/kubernetes.io~csi/pvc-1/vol_data.json', JSON.stringify({ driverName: 'hostpath.csi.k8s.io', volumeHandle: 'h1' }));
  dir('pods/u1/volumes/kubernetes.io~csi/pvc-1/mount');
  dir('pods/u2/volumes/kubernetes.io~csi/pvc-lost/mount');
  dir('pods/u2/volumes/example.com~lvm/data');
  dir('pods/u2/volumes/example.com~gone/data');
  dir('pods/u2/volumes/kubernetes.io~nfs/share'); // a plugin kubelet-ts has not
  file('plugins/kubernetes.io/csi/volumeDevices/pvc-2/data/vol_data.json', '{}');
  dir('pods/u2/volumeDevices/kubernetes.io~csi');
  symlinkSync('/dev/null', join(root, 'pods/u2/volumeDevices/kubernetes.io~csi/pvc-2'));
  symlinkSync('/dev/null', join(root, 'pods/u2/volumeDevices/kubernetes.io~csi/pvc-9'));
  dir('pods/u3'); // a pod without volumes
  file('pods/u3/etc-hosts', '');
  mkdirSync(join(pluginDir, 'example.com~lvm'));
  writeFileSync(join(pluginDir, 'example.com~lvm', 'lvm'), '#!/bin/sh\n', { mode: 0o755 });

  const found = volumesOnDisk(root);
  assert.deepEqual(
    found.map((v) => `${v.podUID} ${v.block ? 'block' : 'fs'} ${v.pluginDir}/${v.specName}`),
    [
      'u1 fs kubernetes.io~csi/pvc-1',
      'u1 fs kubernetes.io~empty-dir/scratch',
      'u1 fs kubernetes.io~projected/kube-api-access-x',
      'u2 fs example.com~gone/data',
      'u2 fs example.com~lvm/data',
      'u2 fs kubernetes.io~csi/pvc-lost',
      'u2 fs kubernetes.io~nfs/share',
      'u2 block kubernetes.io~csi/pvc-2',
      'u2 block kubernetes.io~csi/pvc-9',
    ],
  );
  const host = hostOnDisk(root, pluginDir, [...podVolumePlugins, ...persistentVolumePlugins]);
  assert.deepEqual(
    found.filter((v) => reconstructionError(v, host)).map((v) => `${v.podUID} ${v.pluginDir}/${v.specName}`),
    ['u2 example.com~gone/data', 'u2 kubernetes.io~csi/pvc-lost', 'u2 kubernetes.io~nfs/share', 'u2 kubernetes.io~csi/pvc-9'],
  );
});

test("reconstructVolumes: upstream's four counters, each failed volume force cleaned once when its pod's cleanup first ends", () => {
  const counted = { total: 0, failed: 0, cleaned: 0, cleanErrors: 0 };
  const host: ReconstructionHost = { pluginDirs: new Set(['kubernetes.io~empty-dir']), flexDriver: () => false, constructed: () => true };
  const vol = (podUID: string, pluginDir: string, specName: string): VolumeOnDisk => ({ podUID, pluginDir, specName, block: false });
  const r = reconstructVolumes(
    [
      vol('u1', 'kubernetes.io~empty-dir', 'a'),
      vol('u1', 'kubernetes.io~nfs', 'b'),
      vol('u1', 'kubernetes.io~nfs', 'c'),
      vol('u2', 'kubernetes.io~nfs', 'd'),
      vol('u3', 'kubernetes.io~empty-dir', 'e'),
    ],
    host,
    quiet,
    {
      reconstructed(total, failed) {
        counted.total += total;
        counted.failed += failed;
      },
      forceCleaned(ok) {
        counted.cleaned++;
        if (!ok) counted.cleanErrors++;
      },
    },
  );
  assert.deepEqual(counted, { total: 5, failed: 3, cleaned: 0, cleanErrors: 0 });
  r.podCleaned('u3', true); // nothing of it failed
  r.podCleaned('u1', true);
  r.podCleaned('u1', true); // a later pass: counted already
  r.podCleaned('u2', false);
  r.podCleaned('u2', true); // its retry: upstream's cleanOrphanVolumes tries once
  assert.deepEqual(counted, { total: 5, failed: 3, cleaned: 3, cleanErrors: 1 });
});
