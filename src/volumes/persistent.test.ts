import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import { attachmentName, blockPublishPath, deviceMountPath } from '../csi/paths.ts';
import { NodeExpandError } from '../csi/errors.ts';
import { AttachLimitExceededError } from '../csi/node-updater.ts';
import type { CsiVolumeRequest } from '../csi/volumes.ts';
const silentLogger = { info() {}, v() {}, warn() {}, error() {} };
import { PersistentVolumes, reportedInUse } from './persistent.ts';
import type { ClaimSources } from './sources.ts';

const NODE = 'node-1';
const DRIVER = 'hostpath.csi.k8s.io';

function pod(volumes: Pod['spec'] extends infer S ? (S extends { volumes?: infer V } ? V : never) : never): Pod {
  return {
    metadata: { name: 'web-0', namespace: 'ns', uid: 'pod-1' },
    spec: { containers: [{ name: 'c', volumeMounts: [{ name: 'data', mountPath: '/data' }] }], volumes },
  };
}
const claimVolume = (readOnly = false) => pod([{ name: 'data', persistentVolumeClaim: { claimName: 'data', readOnly } }]);

function harness(
  pv: PersistentVolume,
  opts: {
    driver?: CSIDriver;
    attachment?: VolumeAttachment;
    rootDir?: string;
    expand?: (bytes: number) => Promise<void>;
    stageError?: () => Error | undefined;
    resourceExhausted?: (driver: CSIDriver | undefined, va: VolumeAttachment) => boolean;
    controllerAttachDetach?: boolean;
  } = {},
) {
  const claim: PersistentVolumeClaim = {
    metadata: { name: 'data', namespace: 'ns', uid: 'claim-1' },
    spec: { volumeName: pv.metadata!.name },
    status: { phase: 'Bound' },
  };
  pv.spec!.claimRef = { uid: 'claim-1' };
  const calls: string[] = [];
  const requests: CsiVolumeRequest[] = [];
  const patches: unknown[] = [];
  const events: string[] = [];
  const operations: string[] = [];
  let attached: string[] = [];
  let attachment = opts.attachment;
  const sources: ClaimSources = {
    claim: async () => claim,
    volume: async () => pv,
    csiDriver: async () => opts.driver,
    volumeAttachment: async (name) => (attachment?.metadata?.name === name ? attachment : undefined),
    patchClaimStatus: async (_ns, _name, patch) => {
      patches.push(patch);
      return claim;
    },
    createVolumeAttachment: async (va) => {
      calls.push(`create ${JSON.stringify(va)}`);
      attachment = va;
    },
    deleteVolumeAttachment: async (name) => {
      calls.push(`delete ${name}`);
      return true;
    },
  };
  let changed = 0;
  const rootDir = opts.rootDir ?? '/nonexistent';
  const volumes = new PersistentVolumes({
    rootDir,
    nodeName: NODE,
    sources,
    csi: {
      stage: async (req) => {
        calls.push('stage');
        const e = opts.stageError?.();
        if (e) throw e;
        requests.push(req);
        return 'staged';
      },
      publish: async (p, req) => {
        calls.push(`publish ${p.metadata!.uid}`);
        requests.push(req);
        return { path: `/pods/${p.metadata!.uid}/mount`, applyFsGroup: false };
      },
      unpublish: async (uid, spec) => void calls.push(`unpublish ${uid} ${spec}`),
      unstage: async (path) => void calls.push(`unstage ${path}`),
      nodeExpand: async (r) => {
        calls.push(`expand ${r.volumePath} ${r.newSizeBytes}`);
        await opts.expand?.(r.newSizeBytes);
      },
      stageBlock: async () => {
        calls.push('stageBlock');
        return 'staging';
      },
      publishBlock: async (p, req) => {
        calls.push(`publishBlock ${p.metadata!.uid}`);
        // The driver makes the device file at the publish path.
        const path = blockPublishPath(rootDir, req.pv.metadata!.name!, p.metadata!.uid!);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, '');
        return path;
      },
      unpublishBlock: async (uid, name) => void calls.push(`unpublishBlock ${uid} ${name}`),
      unstageBlock: async (name) => void calls.push(`unstageBlock ${name}`),
    },
    blockDevices: {
      bindMountFile: async (source, target) => {
        calls.push(`bindFile ${source} ${target}`);
        writeFileSync(target, '');
      },
      unmountFile: async (target) => {
        if (existsSync(target)) calls.push(`unmountFile ${target}`);
        rmSync(target, { force: true });
      },
      attachLoop: async (path) => {
        calls.push(`losetup ${path}`);
        return '/dev/loop3';
      },
      detachLoop: async (path) => void (existsSync(path) && calls.push(`losetup -d ${path}`)),
    },
    events: { event: (o, type, reason, message) => void events.push(`${o.kind} ${type} ${reason} ${message}`) },
    now: () => new Date('2026-12-03T04:00:00.123Z'),
    volumesAttached: () => attached,
    inUseChanged: () => changed++,
    bindMount: async (source, target, ro) => void calls.push(`bind ${source} ${target} ${ro}`),
    resourceExhausted: opts.resourceExhausted,
    ...(opts.controllerAttachDetach !== undefined && { controllerAttachDetach: opts.controllerAttachDetach }),
    log: silentLogger,
    observe: (o) => void operations.push(`${o.plugin} ${o.operation} ${o.ok}`),
  });
  return {
    volumes,
    claim,
    patches,
    events,
    operations,
    calls,
    requests,
    changed: () => changed,
    attach: (names: string[], va?: VolumeAttachment) => {
      attached = names;
      attachment = va;
    },
  };
}

test('a claim that is not bound waits with upstream message', async () => {
  const p = claimVolume();
  const pending = new PersistentVolumes({
    rootDir: '/nonexistent',
    nodeName: NODE,
    sources: {
      claim: async () => ({ metadata: { name: 'data', namespace: 'ns', uid: 'c' }, spec: {}, status: { phase: 'Pending' } }),
      volume: async () => assert.fail('no PV is read for an unbound claim'),
      csiDriver: async () => undefined,
      volumeAttachment: async () => undefined,
    },
    volumesAttached: () => [],
    inUseChanged: () => {},
    bindMount: async () => {},
    log: silentLogger,
  });
  await assert.rejects(pending.setUp(p, p.spec!.volumes![0]!), { message: 'error processing PVC ns/data: PVC is not bound' });
});

test("a hostPath PV is its path; the claim's readOnly holds; it is not reported in use", async () => {
  const h = harness({ metadata: { name: 'pv-1' }, spec: { hostPath: { path: '/srv/data' } } });
  const p = claimVolume(true);
  assert.deepEqual(await h.volumes.setUp(p, p.spec!.volumes![0]!), { path: '/srv/data', readOnly: true, block: false });
  assert.deepEqual(h.volumes.volumesInUse(), []);
  // volume_manager_total_volumes names the claim by its PV's plugin.
  assert.equal(h.volumes.pluginName(p.metadata!.uid!, p.spec!.volumes![0]!.name), 'kubernetes.io/host-path');
});

test("a local PV is bind-mounted into the pod's volume dir, not reported in use (not attachable); a Block one is handed as a device", async () => {
  const h = harness({ metadata: { name: 'pv-1' }, spec: { local: { path: '/mnt/disk1' } } });
  const p = claimVolume();
  assert.deepEqual(await h.volumes.setUp(p, p.spec!.volumes![0]!), {
    path: '/nonexistent/pods/pod-1/volumes/kubernetes.io~local-volume/pv-1',
    readOnly: false,
  });
  assert.deepEqual(h.calls, ['bind /mnt/disk1 /nonexistent/pods/pod-1/volumes/kubernetes.io~local-volume/pv-1 false']);
  assert.deepEqual(h.volumes.volumesInUse(), [], "upstream's GetVolumesInUse reports attachable volumes only");
  assert.deepEqual(
    h.volumes.claimMounts('pod-1').map((m) => [m.volume, m.pvc.name, m.kind, m.path]),
    [['data', 'data', 'local', '/nonexistent/pods/pod-1/volumes/kubernetes.io~local-volume/pv-1']],
    'the claim volume as set up, for its stats',
  );

  const b = harness({ metadata: { name: 'pv-2' }, spec: { local: { path: '/dev/loop7' }, volumeMode: 'Block' } });
  const raw: Pod = {
    metadata: { name: 'raw', namespace: 'ns', uid: 'pod-2' },
    spec: {
      containers: [{ name: 'c', volumeDevices: [{ name: 'data', devicePath: '/dev/xvda' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
    },
  };
  assert.deepEqual(await b.volumes.setUp(raw, raw.spec!.volumes![0]!), { path: '/dev/loop7', readOnly: false, block: true });
  assert.deepEqual(b.calls, [], 'nothing is mounted for a raw block volume');
});

test("CSI with attach: in use reported, attached on the Node, then the VolumeAttachment's metadata is the publish context", async () => {
  const pv: PersistentVolume = { metadata: { name: 'pv-1' }, spec: { csi: { driver: DRIVER, volumeHandle: 'vol-1' } } };
  const h = harness(pv);
  const p = claimVolume();
  const v = p.spec!.volumes![0]!;
  const unique = `kubernetes.io/csi/${DRIVER}^vol-1`;
  await assert.rejects(h.volumes.setUp(p, v), {
    message: "Volume has not been added to the list of VolumesInUse in the node's volume status",
  });
  assert.deepEqual(h.volumes.volumesInUse(), [unique]);
  assert.equal(h.changed(), 1, 'the node status is poked');
  h.volumes.markReportedInUse([unique]);
  await assert.rejects(h.volumes.setUp(p, v), { message: 'Volume not attached according to node status' });
  const name = attachmentName('vol-1', DRIVER, NODE);
  h.attach([unique], { metadata: { name }, spec: {} as VolumeAttachment['spec'], status: { attached: false } });
  await assert.rejects(h.volumes.setUp(p, v), { message: `volume vol-1 is not attached yet (VolumeAttachment ${name})` });
  h.attach([unique], {
    metadata: { name },
    spec: {} as VolumeAttachment['spec'],
    status: { attached: true, attachmentMetadata: { dev: '/dev/sdb' } },
  });
  assert.deepEqual(await h.volumes.setUp(p, v), { path: '/pods/pod-1/mount', readOnly: false });
  assert.deepEqual(h.calls, ['stage', 'publish pod-1']);
  assert.deepEqual(h.requests[0]!.publishContext, { dev: '/dev/sdb' });
  assert.equal(h.changed(), 1, 'the same volume again does not change the set');
});

test('enableControllerAttachDetach false: the kubelet makes the VolumeAttachment, waits for it, and deletes it once unstaged', async () => {
  const pv: PersistentVolume = { metadata: { name: 'pv-1' }, spec: { csi: { driver: DRIVER, volumeHandle: 'vol-1' } } };
  const h = harness(pv, { controllerAttachDetach: false });
  const p = claimVolume();
  const v = p.spec!.volumes![0]!;
  const name = attachmentName('vol-1', DRIVER, NODE);
  // No wait for the Node's volumesInUse or volumesAttached (the controller does not manage this node).
  await assert.rejects(h.volumes.setUp(p, v), { message: `volume vol-1 is not attached yet (VolumeAttachment ${name})` });
  const made: VolumeAttachment = {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttachment',
    metadata: { name },
    spec: { attacher: DRIVER, nodeName: NODE, source: { persistentVolumeName: 'pv-1' } },
  };
  assert.deepEqual(h.calls, [`create ${JSON.stringify(made)}`]);
  assert.deepEqual(h.volumes.volumesInUse(), [`kubernetes.io/csi/${DRIVER}^vol-1`], 'still reported in use');
  h.calls.length = 0;
  // The external-attacher attached it: made once, used.
  h.attach([], { ...made, status: { attached: true, attachmentMetadata: { dev: '/dev/sdb' } } });
  assert.deepEqual(await h.volumes.setUp(p, v), { path: '/pods/pod-1/mount', readOnly: false });
  assert.deepEqual(h.calls, ['stage', 'publish pod-1']);
  assert.deepEqual(h.requests[0]!.publishContext, { dev: '/dev/sdb' });
  // Released with no pod left: unstaged, then the VolumeAttachment deleted (detach).
  h.calls.length = 0;
  await h.volumes.release(p.metadata!.uid!);
  assert.deepEqual(h.calls, [`unstage ${deviceMountPath('/nonexistent', DRIVER, 'vol-1')}`, `delete ${name}`]);
  // While it is being deleted, a new pod waits for the detach to finish.
  h.attach([], { ...made, metadata: { name, deletionTimestamp: '2026-12-04T00:00:00Z' }, status: { attached: true } });
  await assert.rejects(h.volumes.setUp(p, v), { message: `volume vol-1 is being detached (VolumeAttachment ${name} is being deleted)` });
});

test('CSI without attach (CSIDriver attachRequired false) is staged and published at once', async () => {
  const h = harness(
    { metadata: { name: 'pv-1' }, spec: { csi: { driver: DRIVER, volumeHandle: 'vol-1', readOnly: true } } },
    { driver: { metadata: { name: DRIVER }, spec: { attachRequired: false } } },
  );
  const p = claimVolume();
  assert.deepEqual(await h.volumes.setUp(p, p.spec!.volumes![0]!), { path: '/pods/pod-1/mount', readOnly: true });
  assert.equal(h.volumes.pluginName(p.metadata!.uid!, p.spec!.volumes![0]!.name), `kubernetes.io/csi:${DRIVER}`);
  await h.volumes.release(p.metadata!.uid!);
  assert.equal(h.volumes.pluginName(p.metadata!.uid!, p.spec!.volumes![0]!.name), undefined, 'forgotten with the pod');
  assert.deepEqual(h.requests[0]!.publishContext, {});
  assert.equal(h.requests[0]!.readOnly, true, "the PV source's readOnly counts");
});

test('release: each published CSI volume unpublished, unstaged only when no other pod has it, then out of use', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-persistent-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const publish = (uid: string, spec: string, handle: string) => {
    const dir = join(root, 'pods', uid, 'volumes', 'kubernetes.io~csi', spec);
    mkdirSync(join(dir, 'mount'), { recursive: true });
    writeFileSync(join(dir, 'vol_data.json'), JSON.stringify({ driverName: DRIVER, volumeHandle: handle }));
  };
  publish('pod-1', 'pv-shared', 'vol-shared');
  publish('pod-1', 'pv-own', 'vol-own');
  publish('pod-2', 'pv-shared', 'vol-shared');
  const h = harness(
    { metadata: { name: 'pv-own' }, spec: { csi: { driver: DRIVER, volumeHandle: 'vol-own' } } },
    {
      rootDir: root,
      driver: { metadata: { name: DRIVER }, spec: { attachRequired: false } },
    },
  );
  const p = claimVolume();
  await h.volumes.setUp(p, p.spec!.volumes![0]!);
  assert.deepEqual(
    h.volumes.claimMounts('pod-1').map((m) => [m.volume, m.kind, m.path, m.csi]),
    [['data', 'csi', '/pods/pod-1/mount', { driver: DRIVER, volumeHandle: 'vol-own' }]],
  );
  h.calls.length = 0;
  await h.volumes.release('pod-1');
  assert.deepEqual(h.volumes.claimMounts('pod-1'), [], 'a released pod has no claim volumes to measure');
  assert.deepEqual(h.calls.sort(), [
    'unpublish pod-1 pv-own',
    'unpublish pod-1 pv-shared',
    `unstage ${deviceMountPath(root, DRIVER, 'vol-own')}`,
  ]);
  assert.deepEqual(h.volumes.volumesInUse(), []);
  await h.volumes.release('pod-gone'); // nothing published: nothing to do
});

const GI = 2 ** 30;
function resizable(expand?: (bytes: number) => Promise<void>) {
  const pv: PersistentVolume = {
    metadata: { name: 'pv-1' },
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver: DRIVER, volumeHandle: 'vol-1' } },
  };
  const h = harness(pv, { driver: { metadata: { name: DRIVER }, spec: { attachRequired: false } }, expand });
  Object.assign(h.claim, { status: { phase: 'Bound', capacity: { storage: '1Gi' } } });
  h.claim.spec!.resources = { requests: { storage: '1Gi' } };
  Object.assign(h.claim.metadata!, { resourceVersion: '5' });
  // The resizer grew the volume and handed the expansion to the node.
  const grow = (status = 'NodeResizePending') => {
    pv.spec!.capacity = { storage: '2Gi' };
    h.claim.spec!.resources = { requests: { storage: '2Gi' } };
    Object.assign(h.claim, {
      status: { ...h.claim.status, allocatedResources: { storage: '2Gi' }, allocatedResourceStatuses: { storage: status } },
    });
  };
  return { ...h, pv, grow };
}

test('online expansion: NodeExpandVolume of the mounted claim, then the PVC status as upstream MarkNodeExpansionFinishedWithRecovery; once', async () => {
  const h = resizable();
  const p = claimVolume();
  p.spec!.nodeName = NODE;
  await h.volumes.setUp(p, p.spec!.volumes![0]!);
  await h.volumes.resize(p, p.spec!.volumes![0]!);
  assert.deepEqual(h.calls, ['stage', 'publish pod-1'], 'same size: no expansion');
  h.grow();
  h.claim.status!.conditions = [{ type: 'FileSystemResizePending', status: 'True' }];
  await h.volumes.resize(p, p.spec!.volumes![0]!);
  assert.deepEqual(h.calls.slice(2), [`expand /nonexistent/pods/pod-1/volumes/kubernetes.io~csi/pv-1/mount ${2 * GI}`]);
  assert.deepEqual(h.patches, [
    { metadata: { resourceVersion: '5' }, status: { allocatedResourceStatuses: { storage: 'NodeResizeInProgress' } } },
    { metadata: { resourceVersion: '5' }, status: { capacity: { storage: '2Gi' }, allocatedResourceStatuses: null, conditions: null } },
  ]);
  assert.deepEqual(h.events, [
    `Pod Normal FileSystemResizeSuccessful MountVolume.NodeExpandVolume succeeded for volume "data" ${NODE}`,
    `PersistentVolumeClaim Normal FileSystemResizeSuccessful MountVolume.NodeExpandVolume succeeded for volume "data" ${NODE}`,
  ]);
  await h.volumes.resize(p, p.spec!.volumes![0]!);
  assert.equal(h.calls.length, 3, 'expanded on this node already: not again');
  // Only the check that expanded is upstream's ExpandInUseVolume operation.
  assert.deepEqual(h.operations, [`kubernetes.io/csi:${DRIVER} volume_fs_resize true`]);
});

test('online expansion waits for the resizer; a failure marks NodeResizeError, an infeasible one NodeResizeInfeasible; FailedPrecondition stops it', async () => {
  let fail: NodeExpandError | undefined;
  const h = resizable(async () => {
    if (fail) throw fail;
  });
  const p = claimVolume();
  await h.volumes.setUp(p, p.spec!.volumes![0]!);
  h.grow('ControllerResizeInProgress');
  await h.volumes.resize(p, p.spec!.volumes![0]!);
  assert.deepEqual([h.calls.length, h.patches.length], [2, 0], 'the controller is not done: no call');

  h.grow('NodeResizePending');
  fail = new NodeExpandError('Expander.NodeExpand failed to expand the volume : disk on fire', 'final');
  await assert.rejects(h.volumes.resize(p, p.spec!.volumes![0]!), /disk on fire/);
  const condition = {
    type: 'NodeResizeError',
    status: 'True',
    lastTransitionTime: '2026-12-03T04:00:00Z',
    message: 'failed to expand pvc with Expander.NodeExpand failed to expand the volume : disk on fire',
  };
  assert.deepEqual(h.patches.slice(1), [{ status: { conditions: [condition] } }]);

  h.grow('NodeResizeInProgress');
  h.patches.length = 0;
  fail = new NodeExpandError('Expander.NodeExpand failed to expand the volume out of range', 'infeasible');
  await assert.rejects(h.volumes.resize(p, p.spec!.volumes![0]!), /out of range/);
  assert.deepEqual((h.patches.at(-1) as { status: object }).status, {
    allocatedResourceStatuses: { storage: 'NodeResizeInfeasible' },
    conditions: [{ ...condition, message: 'failed to expand pvc with Expander.NodeExpand failed to expand the volume out of range' }],
  });

  fail = new NodeExpandError('in use', 'inUse');
  await h.volumes.resize(p, p.spec!.volumes![0]!);
  const n = h.calls.length;
  await h.volumes.resize(p, p.spec!.volumes![0]!);
  assert.equal(h.calls.length, n, 'FailedPrecondition: no online expansion again until it is mounted again');
  // volume_fs_resize: the two failures, then the in-use refusal (logged, not thrown); the waits and the last check are none.
  const op = `kubernetes.io/csi:${DRIVER} volume_fs_resize`;
  assert.deepEqual(h.operations, [`${op} false`, `${op} false`, `${op} true`]);
});

test('offline expansion: a claim grown while no pod had it is expanded before the pod starts; a driver without EXPAND_VOLUME and an older resizer: no error', async () => {
  const h = resizable();
  h.grow();
  const p = claimVolume();
  await h.volumes.setUp(p, p.spec!.volumes![0]!);
  assert.deepEqual(h.calls, ['stage', 'publish pod-1', `expand /nonexistent/pods/pod-1/volumes/kubernetes.io~csi/pv-1/mount ${2 * GI}`]);
  assert.equal(h.patches.length, 2);

  const legacy = resizable(async () => {
    throw new NodeExpandError(`NodeExpand is not supported by the CSI driver ${DRIVER}`, 'notSupported');
  });
  legacy.pv.spec!.capacity = { storage: '2Gi' };
  await legacy.volumes.setUp(p, p.spec!.volumes![0]!);
  assert.equal(legacy.calls.length, 3);
  assert.deepEqual(legacy.patches, [], 'an older resizer, not supported: done, nothing patched');
});

test('read-only claims and local PVs are not expanded', async () => {
  const h = resizable();
  h.grow();
  const p = claimVolume(true);
  await h.volumes.setUp(p, p.spec!.volumes![0]!);
  await h.volumes.resize(p, p.spec!.volumes![0]!);
  assert.deepEqual(h.calls, ['stage', 'publish pod-1']);
});

test('a raw block CSI volume: staged and published for block, bind-mounted at the global map path with a loop device, linked from the pod; torn down in reverse, unstaged with its last pod', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-block-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const pv: PersistentVolume = {
    metadata: { name: 'pv-b' },
    spec: { volumeMode: 'Block', accessModes: ['ReadWriteOnce'], csi: { driver: DRIVER, volumeHandle: 'vol-b' } },
  };
  const h = harness(pv, { driver: { metadata: { name: DRIVER }, spec: { attachRequired: false } }, rootDir: root });
  const raw = (uid: string): Pod => ({
    metadata: { name: uid, namespace: 'ns', uid },
    spec: {
      containers: [{ name: 'c', volumeDevices: [{ name: 'data', devicePath: '/dev/xvda' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
    },
  });
  const dev = `${root}/plugins/kubernetes.io/csi/volumeDevices`;
  const set = await h.volumes.setUp(raw('pod-1'), raw('pod-1').spec!.volumes![0]!);
  const link = `${root}/pods/pod-1/volumeDevices/kubernetes.io~csi/pv-b`;
  assert.deepEqual(set, { path: link, readOnly: false, block: true });
  assert.equal(readlinkSync(link), `${dev}/publish/pv-b/pod-1`);
  assert.deepEqual(h.calls, [
    'stageBlock',
    'publishBlock pod-1',
    `bindFile ${dev}/publish/pv-b/pod-1 ${dev}/pv-b/dev/pod-1`,
    `losetup ${dev}/pv-b/dev/pod-1`,
  ]);
  await h.volumes.setUp(raw('pod-2'), raw('pod-2').spec!.volumes![0]!);
  h.calls.length = 0;
  await h.volumes.release('pod-1');
  assert.deepEqual(
    h.calls,
    [`losetup -d ${dev}/pv-b/dev/pod-1`, `unmountFile ${dev}/pv-b/dev/pod-1`, 'unpublishBlock pod-1 pv-b'],
    'pod-2 still has it',
  );
  assert.equal(existsSync(link), false);
  h.calls.length = 0;
  await h.volumes.release('pod-2');
  assert.deepEqual(h.calls, [
    `losetup -d ${dev}/pv-b/dev/pod-2`,
    `unmountFile ${dev}/pv-b/dev/pod-2`,
    'unpublishBlock pod-2 pv-b',
    'unstageBlock pv-b',
    // UnmountDevice of the volume no pod wants: a no-op once its vol_data.json is gone.
    'unstageBlock pv-b',
  ]);
  h.calls.length = 0;
  await h.volumes.release('pod-2');
  assert.deepEqual(h.calls, [], 'done: nothing left to find');
});

test('ReadWriteOncePod: a second pod of the node is refused while the first has the volume; once released, it may', async () => {
  const pv: PersistentVolume = {
    metadata: { name: 'pv-1' },
    spec: { accessModes: ['ReadWriteOncePod'], csi: { driver: DRIVER, volumeHandle: 'vol-1' } },
  };
  const h = harness(pv, { driver: { metadata: { name: DRIVER }, spec: { attachRequired: false } } });
  const second: Pod = { ...claimVolume(), metadata: { name: 'web-1', namespace: 'ns', uid: 'pod-2' } };
  await h.volumes.setUp(claimVolume(), claimVolume().spec!.volumes![0]!);
  await h.volumes.setUp(claimVolume(), claimVolume().spec!.volumes![0]!);
  await assert.rejects(h.volumes.setUp(second, second.spec!.volumes![0]!), {
    message: 'volume uses the ReadWriteOncePod access mode and is already in use by another pod',
  });
  await h.volumes.release('pod-1');
  await h.volumes.setUp(second, second.spec!.volumes![0]!);
});

test('a NodeStageVolume that failed uncertainly, the pod deleted before a retry: unstaged when the pod is released', async () => {
  const pv: PersistentVolume = {
    metadata: { name: 'pv-1' },
    spec: { accessModes: ['ReadWriteOnce'], csi: { driver: DRIVER, volumeHandle: 'vol-1' } },
  };
  const h = harness(pv, {
    driver: { metadata: { name: DRIVER }, spec: { attachRequired: false } },
    stageError: () => new Error('CSI NodeStageVolume of driver hostpath.csi.k8s.io failed: code 4 DEADLINE_EXCEEDED'),
  });
  const p = claimVolume();
  await assert.rejects(h.volumes.setUp(p, p.spec!.volumes![0]!), /DEADLINE_EXCEEDED/);
  assert.deepEqual(h.volumes.volumesInUse(), [`kubernetes.io/csi/${DRIVER}^vol-1`]);
  await h.volumes.release('pod-1');
  assert.deepEqual(h.calls, ['stage', `unstage ${deviceMountPath('/nonexistent', DRIVER, 'vol-1')}`]);
  assert.deepEqual(h.volumes.volumesInUse(), [], 'out of volumesInUse only after the unstage');
});

test('an RWX claim expanded on another node (its status already at the new size) is expanded on this node too, without a PVC update', async () => {
  const h = resizable();
  h.pv.spec!.accessModes = ['ReadWriteMany'];
  h.claim.spec!.accessModes = ['ReadWriteMany'];
  const p = claimVolume();
  await h.volumes.setUp(p, p.spec!.volumes![0]!);
  h.pv.spec!.capacity = { storage: '2Gi' };
  Object.assign(h.claim, { status: { phase: 'Bound', capacity: { storage: '2Gi' }, allocatedResources: { storage: '2Gi' } } });
  await h.volumes.resize(p, p.spec!.volumes![0]!);
  assert.deepEqual(h.calls.slice(2), [`expand /nonexistent/pods/pod-1/volumes/kubernetes.io~csi/pv-1/mount ${2 * GI}`]);
  assert.deepEqual(h.patches, []);
});

test('requiresRepublish: the CSI volume is marked for remount, and a remount publishes again without staging', async () => {
  const h = harness(
    { metadata: { name: 'pv-1' }, spec: { csi: { driver: DRIVER, volumeHandle: 'vol-1' } } },
    { driver: { metadata: { name: DRIVER }, spec: { attachRequired: false, requiresRepublish: true } } },
  );
  const p = claimVolume();
  const v = p.spec!.volumes![0]!;
  assert.deepEqual(await h.volumes.setUp(p, v), { path: '/pods/pod-1/mount', readOnly: false, requiresRemount: true });
  const before = h.calls.length;
  await h.volumes.setUp(p, v, { remount: true });
  assert.deepEqual(h.calls.slice(before), ['publish pod-1'], 'no NodeStageVolume on a republish');
  assert.equal(h.requests.at(-1)!.remount, true);
});

test('a failed VolumeAttachment is told to the allocatable updater (upstream VerifyExhaustedResource), and the mount waits', async () => {
  const pv: PersistentVolume = { metadata: { name: 'pv-1' }, spec: { csi: { driver: DRIVER, volumeHandle: 'vol-1' } } };
  const told: [string | undefined, unknown][] = [];
  const csiDriver = { metadata: { name: DRIVER }, spec: {} };
  const h = harness(pv, {
    driver: csiDriver,
    resourceExhausted: (d, va) => {
      told.push([d?.metadata?.name, va.status?.attachError]);
      return true;
    },
  });
  const p = claimVolume();
  const v = p.spec!.volumes![0]!;
  const unique = `kubernetes.io/csi/${DRIVER}^vol-1`;
  h.volumes.markReportedInUse([unique]);
  const name = attachmentName('vol-1', DRIVER, NODE);
  const attachError = { message: 'rpc error: code = ResourceExhausted desc = too many volumes', errorCode: 8 };
  h.attach([unique], { metadata: { name }, spec: {} as VolumeAttachment['spec'], status: { attached: false, attachError } });
  await assert.rejects(h.volumes.setUp(p, v), (e: Error) => {
    assert.ok(e instanceof AttachLimitExceededError, 'over the limit: the pod may be rejected');
    assert.equal(e.message, `attachment for vol-1 failed: ${attachError.message}`);
    return true;
  });
  assert.deepEqual(told, [[DRIVER, attachError]]);
  h.attach([unique], { metadata: { name }, spec: {} as VolumeAttachment['spec'], status: { attached: true } });
  await h.volumes.setUp(p, v);
  assert.equal(told.length, 1, 'not for an attachment without error');
});

test('volumesInUse: a CSI volume only while its driver needs attach (a CSIDriver changed to attachRequired: false), no local one', () => {
  const csi = (driver: string): PersistentVolume => ({ spec: { csi: { driver, volumeHandle: 'h' } } });
  const attach = (driver: string) => driver !== 'no-attach';
  const rows: [string, PersistentVolume | undefined, boolean][] = [
    ['a CSI driver that needs attach', csi('hostpath.csi.k8s.io'), true],
    ['a CSI driver whose CSIDriver says attachRequired: false', csi('no-attach'), false],
    ['a local volume (device-mountable, not attachable)', { spec: { local: { path: '/mnt/disk' } } }, false],
    ['not known (never set up here)', undefined, false],
  ];
  for (const [name, pv, want] of rows) assert.equal(reportedInUse(pv, attach), want, name);
});
