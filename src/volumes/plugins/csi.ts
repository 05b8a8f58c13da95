// CSI PersistentVolumes (upstream's pkg/volume/csi; the driver calls and their paths are in
// src/csi): wait for the VolumeAttachment when the driver needs attach, stage once per node,
// publish per pod; on teardown unpublish, and unstage once no other pod has the volume. What was
// published is read back from disk (vol_data.json), so a restarted kubelet tears down what the
// previous one left. A raw block volume (volumeMode Block, csi_block.go) is staged and published
// as a device and mapped into the pod (src/mount/block-device.ts); a mounted volume is expanded
// on the node (NodeExpandVolume, driven by persistent.ts and expansion.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { PersistentVolume, Pod } from 'kubernetes-types/core/v1.js';
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import {
  attachmentName,
  blockGlobalMapPath,
  blockPublishPath,
  deviceMountPath,
  podDeviceMapPath,
  publishPath,
  volDataPath,
} from '../../csi/paths.ts';
import { mapBlockVolume, unmapBlockVolume } from '../../mount/block-device.ts';
import type { CsiVolumeRequest } from '../../csi/volumes.ts';
import { requiresRepublish } from '../../csi/service-account-tokens.ts';
import { AttachLimitExceededError } from '../../csi/node-updater.ts';
import { podsDir, podVolumePluginDir } from '../../podutil/pod-dirs.ts';
import { uniqueVolumeName } from '../claims.ts';
import { setVolumeOwnershipUnlessMatching } from '../ownership.ts';
import { CSI, pluginDirName } from './names.ts';
import type { PersistentPath, ReconstructedVolume, VolumePlugin } from './plugin.ts';
import type { PersistentHost } from './persistent-host.ts';

/**
 * upstream's csiAttacher.Attach, when the kubelet attaches (enableControllerAttachDetach false):
 * this node's VolumeAttachment of the PV, made unless it is there. One being deleted (a detach
 * not finished) is waited out first, as the operation executor keeps an attach behind a detach.
 */
async function kubeletAttach(host: PersistentHost, driverName: string, handle: string, pvName: string, name: string) {
  const va = await host.sources.volumeAttachment(name);
  if (va?.metadata?.deletionTimestamp) throw new Error(`volume ${handle} is being detached (VolumeAttachment ${name} is being deleted)`);
  if (va) return va;
  if (!host.sources.createVolumeAttachment) throw new Error('VolumeAttachments cannot be created here');
  const created: VolumeAttachment = {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttachment',
    metadata: { name },
    spec: { attacher: driverName, nodeName: host.nodeName, source: { persistentVolumeName: pvName } },
  };
  await host.sources.createVolumeAttachment(created);
  host.log.v(4, 'attachment created', { attachment: name, volumeHandle: handle });
  return created;
}

/**
 * upstream's csiAttacher.Detach, when the kubelet attaches: once the volume is unstaged, its
 * VolumeAttachment is deleted (the driver's external-attacher detaches it and drops its finalizer).
 */
async function kubeletDetach(host: PersistentHost, driverName: string, handle: string): Promise<void> {
  if (host.controllerAttachDetach) return;
  const name = attachmentName(handle, driverName, host.nodeName);
  if (!host.sources.deleteVolumeAttachment) throw new Error('VolumeAttachments cannot be deleted here');
  // Also asked after a teardown that detached already (release's UnmountDevice): then it is gone.
  if (await host.sources.deleteVolumeAttachment(name))
    host.log.info('DetachVolume.Detach succeeded', { attachment: name, volumeHandle: handle, node: host.nodeName });
}

/**
 * upstream's VerifyControllerAttachedVolume (or, when the kubelet attaches, csiAttacher.Attach)
 * and csiAttacher.WaitForAttach: for a driver that needs attach, the volume is in use as the Node
 * reports it, attached as the Node says, and its VolumeAttachment attached; the attachment's
 * metadata is the publish context.
 */
async function publishContext(
  host: PersistentHost,
  driverName: string,
  handle: string,
  driver: CSIDriver | undefined,
  pv: PersistentVolume,
): Promise<Record<string, string>> {
  if (driver?.spec?.attachRequired === false) return {};
  const name = attachmentName(handle, driverName, host.nodeName);
  let va: VolumeAttachment | undefined;
  if (host.controllerAttachDetach) {
    const unique = uniqueVolumeName(pv)!;
    if (!host.reportedInUse(unique)) throw new Error(`Volume has not been added to the list of VolumesInUse in the node's volume status`);
    if (!host.volumesAttached().includes(unique)) throw new Error('Volume not attached according to node status');
    va = await host.sources.volumeAttachment(name);
    if (!va) throw new Error(`volumeattachment ${name} not found`);
  } else va = await kubeletAttach(host, driverName, handle, pv.metadata!.name!, name);
  const err = va.status?.attachError;
  if (err) {
    const message = `attachment for ${handle} failed: ${err.message ?? ''}`;
    if (host.resourceExhausted?.(driver, va)) throw new AttachLimitExceededError(message);
    throw new Error(message);
  }
  if (!va.status?.attached) throw new Error(`volume ${handle} is not attached yet (VolumeAttachment ${name})`);
  return va.status.attachmentMetadata ?? {};
}

async function setUpCsi(
  host: PersistentHost,
  pod: Pod,
  pv: PersistentVolume,
  readOnly: boolean,
  remount: boolean,
): Promise<PersistentPath> {
  if (!host.csi) throw new Error('CSI volumes are not enabled');
  const src = pv.spec!.csi!;
  const driver = await host.sources.csiDriver(src.driver);
  const req: CsiVolumeRequest = {
    pv,
    readOnly,
    csiDriver: driver,
    publishContext: await publishContext(host, src.driver, src.volumeHandle, driver, pv),
    fsGroup: pod.spec?.securityContext?.fsGroup,
    remount,
  };
  // A raw block volume is not republished (see requiresRemount below).
  if (pv.spec?.volumeMode === 'Block') return setUpBlock(host, pod, req);
  // NodeStageVolume is idempotent (the CSI spec): staged again for each pod, as cheap as
  // upstream's check of its actual state, and right after a restart. Not on a republish: upstream
  // remounts with the device globally mounted, which skips MountDevice.
  if (!remount) await host.csi.stage(req);
  const { path, applyFsGroup } = await host.csi.publish(pod, req);
  if (applyFsGroup) setVolumeOwnershipUnlessMatching(path, req.fsGroup!, readOnly, pod.spec?.securityContext?.fsGroupChangePolicy);
  // upstream's RequiresRemount: the driver wants NodePublishVolume again at each pod sync
  // (fresh tokenRequests tokens, rotated credentials).
  return { path, readOnly, ...(requiresRepublish(driver) && { requiresRemount: true }) };
}

/**
 * upstream's MapVolume of a raw block CSI volume (csi_block.go's SetUpDevice and MapPodDevice,
 * then util.MapBlockVolume): staged to volumeDevices/staging/PV, published to
 * volumeDevices/publish/PV/PODUID, bind-mounted at volumeDevices/PV/dev/PODUID with a loop device
 * over it, and linked from the pod's volumeDevices/kubernetes.io~csi/PV, which the containers get.
 */
async function setUpBlock(host: PersistentHost, pod: Pod, req: CsiVolumeRequest): Promise<PersistentPath> {
  const uid = pod.metadata!.uid!;
  const name = req.pv.metadata!.name!;
  await host.csi!.stageBlock(req);
  const devicePath = await host.csi!.publishBlock(pod, req);
  const path = await mapBlockVolume(host.blockDevices, {
    devicePath,
    globalMapPath: blockGlobalMapPath(host.rootDir, name),
    podMapDir: dirname(podDeviceMapPath(host.rootDir, uid, name)),
    name,
    podUID: uid,
  });
  return { path, readOnly: req.readOnly, block: true };
}

/** The raw block CSI volumes mapped into the pod (its volumeDevices/kubernetes.io~csi entries, by PV name). */
function mappedBlockVolumes(rootDir: string, uid: string): string[] {
  try {
    return readdirSync(dirname(podDeviceMapPath(rootDir, uid, 'x')));
  } catch {
    return [];
  }
}

/**
 * upstream's UnmapVolume and UnmapDevice of the pod's raw block CSI volumes: the loop device and
 * bind mount go, NodeUnpublishVolume, then the pod's link (last: it is how a retry or a restarted
 * kubelet finds the volume); NodeUnstageVolume once no other pod has it mapped (volumeDevices/PV/dev empty).
 */
async function tearDownBlock(host: PersistentHost, uid: string): Promise<void> {
  for (const name of mappedBlockVolumes(host.rootDir, uid)) {
    if (!host.csi) throw new Error(`CSI block volume ${name} is mapped but CSI is not enabled`);
    const globalMapPath = blockGlobalMapPath(host.rootDir, name);
    const podMapDir = dirname(podDeviceMapPath(host.rootDir, uid, name));
    await host.blockDevices.detachLoop(join(globalMapPath, uid));
    await host.blockDevices.unmountFile(join(globalMapPath, uid));
    await host.csi.unpublishBlock(uid, name);
    await unmapBlockVolume(host.blockDevices, { globalMapPath, podMapDir, name, podUID: uid });
    host.log.info('UnmapVolume.UnmapBlockVolume succeeded', { podUID: uid, volume: name });
    let others: string[] = [];
    try {
      others = readdirSync(globalMapPath);
    } catch {
      /* none */
    }
    if (others.length) continue;
    const staged = await host.csi.unstageBlock(name);
    host.log.info('UnmapDevice succeeded', { volume: name });
    if (staged) await kubeletDetach(host, staged.driverName, staged.volumeHandle);
  }
}

/**
 * upstream's ConstructVolumeSpec over the pod's kubernetes.io~csi directory: the CSI volumes
 * published into it, by the vol_data.json beside each; lifecycleMode tells a pod's inline
 * (Ephemeral) volume from a PersistentVolume's.
 */
export function publishedCsiVolumes(rootDir: string, uid: string): ReconstructedVolume[] {
  const dir = podVolumePluginDir(rootDir, uid, pluginDirName(CSI));
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((specName) => {
    try {
      const data = JSON.parse(readFileSync(volDataPath(join(dir, specName, 'mount')), 'utf8')) as Record<string, string>;
      if (!data.driverName || !data.volumeHandle) return [];
      const lifecycleMode = data.volumeLifecycleMode === 'Ephemeral' ? 'Ephemeral' : 'Persistent';
      return [{ specName, driverName: data.driverName, volumeHandle: data.volumeHandle, lifecycleMode }];
    } catch {
      return [];
    }
  });
}

/** Whether a pod other than exceptUID has the volume published. */
function publishedElsewhere(rootDir: string, exceptUID: string, driverName: string, volumeHandle: string): boolean {
  let pods: string[];
  try {
    pods = readdirSync(podsDir(rootDir));
  } catch {
    return false;
  }
  return pods.some(
    (uid) =>
      uid !== exceptUID && publishedCsiVolumes(rootDir, uid).some((p) => p.driverName === driverName && p.volumeHandle === volumeHandle),
  );
}

export const csiPlugin: VolumePlugin<PersistentHost> = {
  name: CSI,
  canSupport: (s) => !!s.pv?.spec?.csi,
  setUp: (host, pod, { pv, readOnly, remount }) => setUpCsi(host, pod, pv!, readOnly || !!pv!.spec!.csi!.readOnly, remount ?? false),
  /**
   * upstream's TearDown and UnmountDevice of the pod's CSI volumes: each is unpublished, and
   * unstaged once no other pod has it. Throws when a driver fails or is not registered.
   */
  async tearDown(host, uid) {
    await tearDownBlock(host, uid);
    for (const p of publishedCsiVolumes(host.rootDir, uid)) {
      // A pod's inline volumes are the pod plugin's (csi-inline.ts): published only, never staged.
      if (p.lifecycleMode === 'Ephemeral') continue;
      if (!host.csi) throw new Error(`CSI volume ${p.specName} is published but CSI is not enabled`);
      await host.csi.unpublish(uid, p.specName);
      host.log.info('UnmountVolume.TearDown succeeded', { podUID: uid, volume: p.specName, driver: p.driverName });
      if (publishedElsewhere(host.rootDir, uid, p.driverName, p.volumeHandle)) continue;
      await host.csi.unstage(deviceMountPath(host.rootDir, p.driverName, p.volumeHandle));
      host.log.info('UnmountDevice succeeded', { driver: p.driverName, volumeHandle: p.volumeHandle });
      await kubeletDetach(host, p.driverName, p.volumeHandle);
    }
  },
  // Also what detaches, when the kubelet attaches, a volume attached for a pod that went before it was staged.
  async unmountDevice(host, pv) {
    if (!host.csi || !pv.spec?.csi) return;
    const name = pv.metadata!.name!;
    const { driver, volumeHandle } = pv.spec.csi;
    if (pv.spec.volumeMode === 'Block') {
      let mapped: string[] = [];
      try {
        mapped = readdirSync(blockGlobalMapPath(host.rootDir, name));
      } catch {
        /* none */
      }
      if (mapped.length) return;
      await host.csi.unstageBlock(name);
    } else {
      if (publishedElsewhere(host.rootDir, '', driver, volumeHandle)) return;
      await host.csi.unstage(deviceMountPath(host.rootDir, driver, volumeHandle));
    }
    await kubeletDetach(host, driver, volumeHandle);
  },
  // upstream's csiPlugin.NodeExpand: the pod's target path is the volume path.
  async nodeExpand(host, pod, { pv }, newSizeBytes) {
    if (!host.csi) throw new Error('CSI volumes are not enabled');
    // A block volume's path is its published device (upstream: the DevicePath MapVolume recorded).
    const volumePath =
      pv!.spec?.volumeMode === 'Block'
        ? blockPublishPath(host.rootDir, pv!.metadata!.name!, pod.metadata!.uid!)
        : publishPath(host.rootDir, pod.metadata!.uid!, pv!.metadata!.name!);
    await host.csi.nodeExpand({ pv: pv!, volumePath, newSizeBytes });
  },
  reconstruct: (rootDir, uid) => publishedCsiVolumes(rootDir, uid).filter((p) => p.lifecycleMode !== 'Ephemeral'),
};
