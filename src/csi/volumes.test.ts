// Stage, publish, unpublish and unstage against a fake driver, in a temporary kubelet root.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import type { PersistentVolume, Pod } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import { CsiDrivers } from './drivers.ts';
import type { CsiError, NodeExpandError } from './errors.ts';
import { fakeDriver, HOSTPATH_NODE_CAPABILITIES } from './testing.ts';
import { kubeletAppliesFsGroup, CsiVolumes } from './volumes.ts';

const quiet: Logger = { info() {}, v() {}, warn() {}, error() {} };
const DRIVER = 'hostpath.csi.k8s.io';
const SHA = 'd2e8363faaac7ae76def3b14091d8eb5755f6b92e9531627aeec833a8731cc49'; // sha256("vol-1")
const ATTACH = 'csi-54a858e57cbeaf4824b4b433d9a396f665a0060a020b01f7e1c1dc9e95cd615b'; // sha256("vol-1" + driver + "kts-w1")

const pv: PersistentVolume = {
  metadata: { name: 'pvc-1' },
  spec: {
    accessModes: ['ReadWriteOnce'],
    mountOptions: ['noatime'],
    csi: {
      driver: DRIVER,
      volumeHandle: 'vol-1',
      fsType: 'ext4',
      volumeAttributes: { kind: 'fast' },
      nodeStageSecretRef: { namespace: 'kube-system', name: 'stage-secret' },
    },
  },
};
const pod: Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'uid-1' }, spec: { serviceAccountName: 'sa', containers: [] } };

async function setUp(
  t: { after(fn: () => void): void },
  answers: Parameters<typeof fakeDriver>[1] = {},
  extra: Partial<ConstructorParameters<typeof CsiVolumes>[0]> = {},
) {
  const root = mkdtempSync(join(tmpdir(), 'csi-volumes-'));
  const socket = join(root, 'csi.sock');
  const driver = await fakeDriver(socket, answers);
  const drivers = new CsiDrivers();
  drivers.set(DRIVER, socket, [1, 0, 0]);
  const secrets: string[] = [];
  const volumes = new CsiVolumes({
    rootDir: root,
    nodeName: 'kts-w1',
    drivers,
    secret: async (ns, name) => {
      secrets.push(`${ns}/${name}`);
      return { data: { password: Buffer.from('s3cret').toString('base64') } };
    },
    log: quiet,
    ...extra,
  });
  t.after(() => {
    drivers.delete(DRIVER);
    driver.stop();
    rmSync(root, { recursive: true, force: true });
  });
  const request = (method: string) => driver.calls.filter((c) => c.method === method).at(-1)?.request;
  return { root, volumes, request, secrets };
}

test('stage, publish, unpublish, unstage', async (t) => {
  const ops: string[] = [];
  const { root, volumes, request, secrets } = await setUp(t, {}, { observe: (o) => ops.push(`${o.plugin} ${o.operation} ${o.ok}`) });
  const req = {
    pv,
    readOnly: false,
    publishContext: { device: '/dev/loop7' },
    fsGroup: 2000,
    csiDriver: { metadata: { name: DRIVER }, spec: { podInfoOnMount: true } },
  };

  const staging = await volumes.stage(req);
  assert.equal(staging, `${root}/plugins/kubernetes.io/csi/${DRIVER}/${SHA}/globalmount`);
  assert.equal(
    readFileSync(`${root}/plugins/kubernetes.io/csi/${DRIVER}/${SHA}/vol_data.json`, 'utf8'),
    `{"driverName":"${DRIVER}","volumeHandle":"vol-1"}\n`,
  );
  assert.deepEqual(secrets, ['kube-system/stage-secret']);
  assert.deepEqual(request('NodeStageVolume'), {
    volumeId: 'vol-1',
    publishContext: { device: '/dev/loop7' },
    stagingTargetPath: staging,
    volumeCapability: {
      mount: { fsType: 'ext4', mountFlags: ['noatime'], volumeMountGroup: '2000' },
      accessMode: { mode: 'SINGLE_NODE_WRITER' },
      accessType: 'mount',
    },
    secrets: { password: 's3cret' },
    volumeContext: { kind: 'fast' },
  });

  const published = await volumes.publish(pod, req);
  const target = `${root}/pods/uid-1/volumes/kubernetes.io~csi/pvc-1/mount`;
  // The driver applies the fsGroup (VOLUME_MOUNT_GROUP): the kubelet does not.
  assert.deepEqual(published, { path: target, applyFsGroup: false });
  assert.equal(
    readFileSync(`${root}/pods/uid-1/volumes/kubernetes.io~csi/pvc-1/vol_data.json`, 'utf8'),
    `{"attachmentID":"${ATTACH}","driverName":"${DRIVER}","nodeName":"kts-w1","specVolID":"pvc-1","volumeHandle":"vol-1","volumeLifecycleMode":"Persistent"}\n`,
  );
  assert.deepEqual(request('NodePublishVolume'), {
    volumeId: 'vol-1',
    publishContext: { device: '/dev/loop7' },
    stagingTargetPath: staging,
    targetPath: target,
    volumeCapability: {
      mount: { fsType: 'ext4', mountFlags: ['noatime'], volumeMountGroup: '2000' },
      accessMode: { mode: 'SINGLE_NODE_WRITER' },
      accessType: 'mount',
    },
    readonly: false,
    secrets: {},
    volumeContext: {
      kind: 'fast',
      'csi.storage.k8s.io/pod.name': 'p',
      'csi.storage.k8s.io/pod.namespace': 'ns',
      'csi.storage.k8s.io/pod.uid': 'uid-1',
      'csi.storage.k8s.io/serviceAccount.name': 'sa',
      'csi.storage.k8s.io/ephemeral': 'false',
    },
  });

  await volumes.unpublish('uid-1', 'pvc-1');
  assert.deepEqual(request('NodeUnpublishVolume'), { volumeId: 'vol-1', targetPath: target });
  assert.equal(existsSync(`${root}/pods/uid-1/volumes/kubernetes.io~csi/pvc-1`), false);

  await volumes.unstage(staging);
  assert.deepEqual(request('NodeUnstageVolume'), { volumeId: 'vol-1', stagingTargetPath: staging });
  assert.equal(existsSync(`${root}/plugins/kubernetes.io/csi/${DRIVER}/${SHA}`), false);
  // Unstaged already: nothing left to do.
  await volumes.unstage(staging);
  // storage_operation_duration_seconds: the teardowns, under upstream's operation names (the set-ups are the volume manager's).
  assert.deepEqual(ops, [`kubernetes.io/csi:${DRIVER} volume_unmount true`, `kubernetes.io/csi:${DRIVER} unmount_device true`]);
});

test('a driver that does not stage: no stage call, no staging path to publish', async (t) => {
  const { volumes, request, secrets } = await setUp(t, { NodeGetCapabilities: { capabilities: [] } });
  const req = { pv, readOnly: true, publishContext: {}, fsGroup: 2000 };
  assert.equal(await volumes.stage(req), '');
  assert.equal(request('NodeStageVolume'), undefined);
  assert.deepEqual(secrets, [], 'no stage secret for a driver that does not stage');
  const published = await volumes.publish(pod, req);
  assert.equal((request('NodePublishVolume') as { stagingTargetPath: string }).stagingTargetPath, '');
  assert.equal((request('NodePublishVolume') as { readonly: boolean }).readonly, true);
  assert.equal(published.applyFsGroup, false, 'read-only: never');
});

test('a publish that surely failed is cleaned up; one that may be under way is kept', async (t) => {
  const { root, volumes } = await setUp(t, { NodePublishVolume: { code: status.NOT_FOUND, details: 'no volume' } });
  const dir = `${root}/pods/uid-1/volumes/kubernetes.io~csi/pvc-1`;
  await assert.rejects(
    volumes.publish(pod, { pv, readOnly: false, publishContext: {} }),
    (e: unknown) => (e as CsiError).code === status.NOT_FOUND,
  );
  assert.equal(existsSync(dir), false);

  const busy = await setUp(t, { NodePublishVolume: { code: status.ABORTED, details: 'operation pending' } });
  await assert.rejects(
    busy.volumes.publish(pod, { pv, readOnly: false, publishContext: {} }),
    (e: unknown) => (e as CsiError).code === status.ABORTED,
  );
  assert.ok(existsSync(`${busy.root}/pods/uid-1/volumes/kubernetes.io~csi/pvc-1/vol_data.json`), 'kept for the teardown');
});

test('a driver not registered, a driver that refuses persistent volumes', async (t) => {
  const { volumes } = await setUp(t);
  const other: PersistentVolume = { ...pv, spec: { ...pv.spec, csi: { driver: 'other.csi', volumeHandle: 'v' } } };
  await assert.rejects(volumes.stage({ pv: other, readOnly: false, publishContext: {} }), /driver name other\.csi not found/);
  await assert.rejects(
    volumes.publish(pod, {
      pv,
      readOnly: false,
      publishContext: {},
      csiDriver: { metadata: { name: DRIVER }, spec: { volumeLifecycleModes: ['Ephemeral'] } },
    }),
    /volume mode "Persistent" not supported by driver/,
  );
});

test('an inline (Ephemeral) volume: no stage, the made-up volume id, pod info with ephemeral=true, the pod namespace secret', async (t) => {
  const { root, volumes, request, secrets } = await setUp(t);
  const ephemeralDriver = { metadata: { name: DRIVER }, spec: { podInfoOnMount: true, volumeLifecycleModes: ['Persistent', 'Ephemeral'] } };
  const inline = {
    name: 'scratch',
    csi: { driver: DRIVER, fsType: 'ext4', volumeAttributes: { size: '1Mi' }, nodePublishSecretRef: { name: 'pub' } },
  };
  const fsPod: Pod = { ...pod, spec: { ...pod.spec!, securityContext: { fsGroup: 3000 } } };
  // upstream's makeVolumeHandle: csi-sha256(pod UID + volume name).
  const want = `csi-${createHash('sha256').update('uid-1scratch').digest('hex')}`;
  const published = await volumes.publishInline(fsPod, inline, ephemeralDriver);
  const target = `${root}/pods/uid-1/volumes/kubernetes.io~csi/scratch/mount`;
  assert.deepEqual(published, { path: target, applyFsGroup: false }, 'the driver applies fsGroup (VOLUME_MOUNT_GROUP)');
  assert.equal(request('NodeStageVolume'), undefined);
  assert.deepEqual(secrets, ['ns/pub']);
  const attach = `csi-${createHash('sha256').update(`${want}${DRIVER}kts-w1`).digest('hex')}`;
  assert.equal(
    readFileSync(`${root}/pods/uid-1/volumes/kubernetes.io~csi/scratch/vol_data.json`, 'utf8'),
    `{"attachmentID":"${attach}","driverName":"${DRIVER}","nodeName":"kts-w1","specVolID":"scratch","volumeHandle":"${want}","volumeLifecycleMode":"Ephemeral"}\n`,
  );
  assert.deepEqual(request('NodePublishVolume'), {
    volumeId: want,
    publishContext: {},
    stagingTargetPath: '',
    targetPath: target,
    volumeCapability: {
      mount: { fsType: 'ext4', mountFlags: [], volumeMountGroup: '3000' },
      accessMode: { mode: 'SINGLE_NODE_WRITER' },
      accessType: 'mount',
    },
    readonly: false,
    secrets: { password: 's3cret' },
    volumeContext: {
      size: '1Mi',
      'csi.storage.k8s.io/pod.name': 'p',
      'csi.storage.k8s.io/pod.namespace': 'ns',
      'csi.storage.k8s.io/pod.uid': 'uid-1',
      'csi.storage.k8s.io/serviceAccount.name': 'sa',
      'csi.storage.k8s.io/ephemeral': 'true',
    },
  });
  await volumes.unpublish('uid-1', 'scratch');
  assert.deepEqual(request('NodeUnpublishVolume'), { volumeId: want, targetPath: target });
  assert.equal(existsSync(`${root}/pods/uid-1/volumes/kubernetes.io~csi/scratch`), false);
});

test('an inline volume: refused without a CSIDriver listing Ephemeral; read-only and fsGroup by the kubelet without VOLUME_MOUNT_GROUP', async (t) => {
  const { volumes, request } = await setUp(t, { NodeGetCapabilities: { capabilities: [] } });
  const inline = { name: 'scratch', csi: { driver: DRIVER } };
  await assert.rejects(
    volumes.publishInline(pod, inline, undefined),
    /volume mode "Ephemeral" not supported by driver hostpath\.csi\.k8s\.io \(no CSIDriver object\)/,
  );
  await assert.rejects(
    volumes.publishInline(pod, inline, { metadata: { name: DRIVER }, spec: {} }),
    /volume mode "Ephemeral" not supported by driver hostpath\.csi\.k8s\.io \(only supports \["Persistent"\]\)/,
  );
  assert.equal(request('NodePublishVolume'), undefined);
  const eph = { metadata: { name: DRIVER }, spec: { volumeLifecycleModes: ['Ephemeral'] } };
  const fsPod: Pod = { ...pod, spec: { ...pod.spec!, securityContext: { fsGroup: 3000 } } };
  const r = await volumes.publishInline(fsPod, { name: 'scratch', csi: { driver: DRIVER, fsType: 'ext4' } }, eph);
  assert.equal(r.applyFsGroup, true, 'an inline volume counts as ReadWriteOnce');
  assert.deepEqual((request('NodePublishVolume') as { volumeContext: object }).volumeContext, {}, 'no podInfoOnMount: no pod info');
  const ro = await volumes.publishInline(fsPod, { name: 'ro', csi: { driver: DRIVER, fsType: 'ext4', readOnly: true } }, eph);
  assert.equal(ro.applyFsGroup, false);
  assert.equal((request('NodePublishVolume') as { readonly: boolean }).readonly, true);
});

test('nodeExpand: NodeExpandVolume of the target path with the staging path, by the EXPAND_VOLUME capability; failures classified as upstream', async (t) => {
  const caps = HOSTPATH_NODE_CAPABILITIES;
  const { root, volumes, request } = await setUp(t, { NodeGetCapabilities: caps });
  const target = `${root}/pods/uid-1/volumes/kubernetes.io~csi/pvc-1/mount`;
  const withSecret: PersistentVolume = {
    ...pv,
    spec: { ...pv.spec, csi: { ...pv.spec!.csi!, nodeExpandSecretRef: { namespace: 'kube-system', name: 'x' } } },
  };
  await volumes.nodeExpand({ pv: withSecret, volumePath: target, newSizeBytes: 2 * 2 ** 30 });
  assert.deepEqual(request('NodeExpandVolume'), {
    volumeId: 'vol-1',
    volumePath: target,
    capacityRange: { requiredBytes: String(2 * 2 ** 30), limitBytes: '0' },
    stagingTargetPath: `${root}/plugins/kubernetes.io/csi/${DRIVER}/${SHA}/globalmount`,
    volumeCapability: {
      mount: { fsType: 'ext4', mountFlags: ['noatime'], volumeMountGroup: '' },
      // RWO with SINGLE_NODE_MULTI_WRITER, as the real driver advertises (asSingleNodeMultiWriterCapableCSIAccessModeV1).
      accessMode: { mode: 'SINGLE_NODE_MULTI_WRITER' },
      accessType: 'mount',
    },
    secrets: { password: 's3cret' },
  });

  const none = await setUp(t, { NodeGetCapabilities: { capabilities: [] } });
  await assert.rejects(
    none.volumes.nodeExpand({ pv, volumePath: target, newSizeBytes: 1 }),
    (e: NodeExpandError) => e.kind === 'notSupported' && /NodeExpand is not supported by the CSI driver/.test(e.message),
  );
  assert.equal(none.request('NodeExpandVolume'), undefined);

  const cases: [number, string][] = [
    [status.FAILED_PRECONDITION, 'inUse'],
    [status.OUT_OF_RANGE, 'infeasible'],
    [status.INVALID_ARGUMENT, 'infeasible'],
    [status.NOT_FOUND, 'infeasible'],
    [status.INTERNAL, 'final'],
  ];
  for (const [code, kind] of cases) {
    const f = await setUp(t, { NodeGetCapabilities: caps, NodeExpandVolume: { code, details: 'nope' } });
    await assert.rejects(
      f.volumes.nodeExpand({ pv, volumePath: target, newSizeBytes: 1 }),
      (e: NodeExpandError) => e.kind === kind,
      `code ${code}`,
    );
  }
  const other: PersistentVolume = { ...pv, spec: { ...pv.spec, csi: { driver: 'other.csi', volumeHandle: 'v' } } };
  await assert.rejects(
    volumes.nodeExpand({ pv: other, volumePath: target, newSizeBytes: 1 }),
    (e: NodeExpandError) => e.kind === 'transient',
  );
});

test('raw block: vol_data.json in volumeDevices/PV/data, NodeStageVolume and NodePublishVolume with a block capability, unpublish, unstage and cleanup', async (t) => {
  const ops: string[] = [];
  const { root, volumes, request } = await setUp(t, {}, { observe: (o) => ops.push(`${o.plugin} ${o.operation} ${o.ok}`) });
  const block: PersistentVolume = { ...pv, spec: { ...pv.spec, volumeMode: 'Block' } };
  const dev = `${root}/plugins/kubernetes.io/csi/volumeDevices`;
  const req = { pv: block, readOnly: false, publishContext: { device: '/dev/loop7' } };
  assert.equal(await volumes.stageBlock(req), `${dev}/staging/pvc-1`);
  assert.equal(
    readFileSync(`${dev}/pvc-1/data/vol_data.json`, 'utf8'),
    `{"attachmentID":"${ATTACH}","driverName":"${DRIVER}","nodeName":"kts-w1","specVolID":"pvc-1","volumeHandle":"vol-1"}\n`,
  );
  const blockCap = { block: {}, accessMode: { mode: 'SINGLE_NODE_WRITER' }, accessType: 'block' };
  assert.deepEqual(request('NodeStageVolume'), {
    volumeId: 'vol-1',
    publishContext: { device: '/dev/loop7' },
    stagingTargetPath: `${dev}/staging/pvc-1`,
    volumeCapability: blockCap,
    secrets: { password: 's3cret' },
    volumeContext: { kind: 'fast' },
  });
  assert.equal(await volumes.publishBlock(pod, req), `${dev}/publish/pvc-1/uid-1`);
  assert.deepEqual(request('NodePublishVolume'), {
    volumeId: 'vol-1',
    publishContext: { device: '/dev/loop7' },
    stagingTargetPath: `${dev}/staging/pvc-1`,
    targetPath: `${dev}/publish/pvc-1/uid-1`,
    volumeCapability: blockCap,
    readonly: false,
    secrets: {},
    volumeContext: { kind: 'fast' },
  });
  await volumes.unpublishBlock('uid-1', 'pvc-1');
  assert.deepEqual(request('NodeUnpublishVolume'), { volumeId: 'vol-1', targetPath: `${dev}/publish/pvc-1/uid-1` });
  await volumes.unstageBlock('pvc-1');
  assert.deepEqual(request('NodeUnstageVolume'), { volumeId: 'vol-1', stagingTargetPath: `${dev}/staging/pvc-1` });
  for (const d of ['staging/pvc-1', 'publish/pvc-1', 'pvc-1']) assert.equal(existsSync(`${dev}/${d}`), false, d);
  await volumes.unstageBlock('pvc-1');
  assert.deepEqual(ops, [`kubernetes.io/csi:${DRIVER} unmap_volume true`, `kubernetes.io/csi:${DRIVER} unmap_device true`]);
});

test('kubeletAppliesFsGroup', () => {
  const rwo = { fsGroup: 2000, readOnly: false, fsType: 'ext4', accessModes: ['ReadWriteOnce'] };
  const cases: [string, Parameters<typeof kubeletAppliesFsGroup>[0], boolean][] = [
    ['default policy, RWO with an fsType', rwo, true],
    ['default policy, RWOP', { ...rwo, accessModes: ['ReadWriteOncePod'] }, true],
    ['default policy, RWX only', { ...rwo, accessModes: ['ReadWriteMany'] }, false],
    ['default policy, no fsType', { ...rwo, fsType: '' }, false],
    ['default policy, no access modes', { ...rwo, accessModes: undefined }, false],
    ['File: always', { ...rwo, fsGroupPolicy: 'File', fsType: '', accessModes: ['ReadWriteMany'] }, true],
    ['None: never', { ...rwo, fsGroupPolicy: 'None' }, false],
    ['no fsGroup', { ...rwo, fsGroup: undefined }, false],
    ['read-only', { ...rwo, readOnly: true, fsGroupPolicy: 'File' }, false],
  ];
  for (const [name, input, want] of cases) assert.equal(kubeletAppliesFsGroup(input), want, name);
});

const TOKENS_KEY = 'csi.storage.k8s.io/serviceAccount.tokens';
const tokenGetter = (asked: unknown[], fail?: string) => ({
  serviceAccountToken: async (q: { audience: string }) => {
    asked.push(q);
    if (fail) throw new Error(fail);
    return { token: `tok-${q.audience}`, expirationTimestamp: '2026-12-03T09:00:00Z' };
  },
});

test('publish: CSIDriver tokenRequests, one token per audience (upstream podServiceAccountTokenAttrs)', async (t) => {
  const tokenRequests = [{ audience: 'vault', expirationSeconds: 600 }, { audience: '' }];
  const want =
    '{"":{"token":"tok-","expirationTimestamp":"2026-12-03T09:00:00Z"},"vault":{"token":"tok-vault","expirationTimestamp":"2026-12-03T09:00:00Z"}}';
  for (const inSecrets of [false, true]) {
    const asked: unknown[] = [];
    const { volumes, request } = await setUp(t, {}, tokenGetter(asked));
    await volumes.publish(pod, {
      pv,
      readOnly: false,
      publishContext: {},
      csiDriver: { metadata: { name: DRIVER }, spec: { tokenRequests, serviceAccountTokenInSecrets: inSecrets } as never },
    });
    assert.deepEqual(asked, [
      {
        audience: 'vault',
        namespace: 'ns',
        serviceAccount: 'sa',
        audiences: ['vault'],
        expirationSeconds: 600,
        podName: 'p',
        podUID: 'uid-1',
      },
      { audience: '', namespace: 'ns', serviceAccount: 'sa', audiences: [], podName: 'p', podUID: 'uid-1' },
    ]);
    const call = request('NodePublishVolume') as { volumeContext: Record<string, string>; secrets: Record<string, string> };
    if (inSecrets) {
      assert.deepEqual(call.volumeContext, { kind: 'fast' });
      assert.deepEqual(call.secrets, { [TOKENS_KEY]: want });
    } else {
      assert.deepEqual(call.volumeContext, { kind: 'fast', [TOKENS_KEY]: want });
      assert.deepEqual(call.secrets, {});
    }
  }
});

test('publish: a failed token request fails the publish before NodePublishVolume; no tokenRequests asks none', async (t) => {
  const asked: unknown[] = [];
  const { volumes, request } = await setUp(t, {}, tokenGetter(asked, 'serviceaccounts "sa" not found'));
  const csiDriver = { metadata: { name: DRIVER }, spec: { tokenRequests: [{ audience: 'vault' }] } };
  await assert.rejects(volumes.publish(pod, { pv, readOnly: false, publishContext: {}, csiDriver }), {
    message: 'mounter.SetUpAt failed to get service accoount token attributes: serviceaccounts "sa" not found',
  });
  assert.equal(request('NodePublishVolume'), undefined);
  asked.length = 0;
  await volumes.publish(pod, { pv, readOnly: false, publishContext: {}, csiDriver: { metadata: { name: DRIVER }, spec: {} } });
  assert.deepEqual(asked, []);
  assert.deepEqual((request('NodePublishVolume') as { volumeContext: object }).volumeContext, { kind: 'fast' });
});

test('publish: a failed republish (remount) leaves the target directory; a failed first publish removes it', async (t) => {
  const { root, volumes } = await setUp(t, { NodePublishVolume: { code: status.INVALID_ARGUMENT, details: 'bad' } });
  const dir = `${root}/pods/uid-1/volumes/kubernetes.io~csi/pvc-1`;
  for (const remount of [true, false]) {
    await assert.rejects(volumes.publish(pod, { pv, readOnly: false, publishContext: {}, remount }));
    assert.equal(existsSync(`${dir}/vol_data.json`), remount, `remount ${remount}`);
  }
});
