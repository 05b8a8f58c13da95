// client.ts against a fake CSI driver: Identity and Node served by grpc-js on a unix socket.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { csiClient } from './client.ts';
import { CsiError, isFinalError } from './errors.ts';
import { fakeDriver } from './testing.ts';

test('Identity and Node calls against a fake driver', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'csi-client-'));
  const socket = join(dir, 'csi.sock');
  const driver = await fakeDriver(socket, {
    NodePublishVolume: { code: status.NOT_FOUND, details: 'volume vol-1 not found' },
    NodeUnpublishVolume: { code: status.ABORTED, details: 'an operation with the given volume ID already exists' },
    NodeUnstageVolume: 'hang',
  });
  const c = csiClient('hostpath.csi.k8s.io', socket);
  t.after(() => {
    c.close();
    driver.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  assert.equal((await c.getPluginInfo()).name, 'hostpath.csi.k8s.io');
  assert.deepEqual((await c.probe()).ready, { value: true });
  assert.deepEqual((await c.getPluginCapabilities()).capabilities[0]?.service?.type, 'CONTROLLER_SERVICE');

  assert.deepEqual(await c.nodeGetInfo(), {
    nodeId: 'kts-w1',
    maxVolumesPerNode: 100,
    topology: { 'topology.hostpath.csi/node': 'kts-w1' },
  });
  assert.deepEqual(await c.nodeGetCapabilities(), new Set(['STAGE_UNSTAGE_VOLUME', 'VOLUME_MOUNT_GROUP']));

  await c.nodeStageVolume({
    volumeId: 'vol-1',
    publishContext: { device: '/dev/loop7' },
    stagingTargetPath: '/var/lib/kubelet/plugins/kubernetes.io/csi/hostpath.csi.k8s.io/abc/globalmount',
    volumeCapability: {
      mount: { fsType: 'ext4', mountFlags: ['noatime'], volumeMountGroup: '2000' },
      accessMode: { mode: 'SINGLE_NODE_WRITER' },
    },
    secrets: { password: 's3cret' },
    volumeContext: { storage: 'fast' },
  });
  const stage = driver.calls.find((x) => x.method === 'NodeStageVolume')!.request;
  assert.deepEqual(stage, {
    volumeId: 'vol-1',
    publishContext: { device: '/dev/loop7' },
    stagingTargetPath: '/var/lib/kubelet/plugins/kubernetes.io/csi/hostpath.csi.k8s.io/abc/globalmount',
    volumeCapability: {
      mount: { fsType: 'ext4', mountFlags: ['noatime'], volumeMountGroup: '2000' },
      accessMode: { mode: 'SINGLE_NODE_WRITER' },
      accessType: 'mount',
    },
    secrets: { password: 's3cret' },
    volumeContext: { storage: 'fast' },
  });

  assert.deepEqual((await c.nodeGetVolumeStats({ volumeId: 'vol-1', volumePath: '/p' })).usage[0], {
    unit: 'BYTES',
    total: '1024',
    used: '24',
    available: '1000',
  });
  assert.equal(
    (await c.nodeExpandVolume({ volumeId: 'vol-1', volumePath: '/p', capacityRange: { requiredBytes: 2048 } })).capacityBytes,
    '2048',
  );

  // A driver's error keeps its code: NotFound surely did nothing, Aborted may still be running.
  const notFound = await c.nodePublishVolume({ volumeId: 'vol-1', targetPath: '/t' }).catch((e: unknown) => e);
  assert.ok(notFound instanceof CsiError);
  assert.equal(notFound.code, status.NOT_FOUND);
  assert.equal(notFound.method, 'NodePublishVolume');
  assert.match(notFound.message, /NodePublishVolume of driver hostpath\.csi\.k8s\.io failed: code 5 NOT_FOUND: volume vol-1 not found/);
  assert.equal(isFinalError(notFound), true);
  const aborted = await c.nodeUnpublishVolume({ volumeId: 'vol-1', targetPath: '/t' }).catch((e: unknown) => e);
  assert.equal((aborted as CsiError).code, status.ABORTED);
  assert.equal(isFinalError(aborted), false);

  // A driver that does not answer runs into the deadline.
  const late = await c.nodeUnstageVolume({ volumeId: 'vol-1', stagingTargetPath: '/s' }, 200).catch((e: unknown) => e);
  assert.equal((late as CsiError).code, status.DEADLINE_EXCEEDED);
  assert.equal(isFinalError(late), false);
});

test('a driver that is not there is Unavailable, which is not final', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'csi-client-'));
  const c = csiClient('gone.csi.k8s.io', join(dir, 'nothing.sock'));
  try {
    const e = await c.nodeGetInfo(2000).catch((err: unknown) => err);
    assert.ok(e instanceof CsiError);
    assert.equal(e.code, status.UNAVAILABLE);
    assert.equal(isFinalError(e), false);
  } finally {
    c.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
