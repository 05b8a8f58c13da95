// Staging and publishing the CSI volumes of this node's pods, as upstream's csiAttacher.MountDevice
// (NodeStageVolume into the volume's global mount, once per node), csiMountMgr.SetUpAt
// (NodePublishVolume into the pod's volume directory), csiMountMgr.TearDownAt (NodeUnpublishVolume)
// and csiAttacher.UnmountDevice (NodeUnstageVolume). Each writes or reads the vol_data.json upstream
// keeps beside the path, so that teardown needs only the path. PV-backed filesystem volumes, and a
// pod's inline `csi` volumes (Ephemeral: published only); which pod needs which volume, and when,
// is the volume manager's to decide.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { PersistentVolume, Pod, Secret, Volume } from 'kubernetes-types/core/v1.js';
import type { CSIDriver } from 'kubernetes-types/storage/v1.js';
import type { Logger } from '../log/log.ts';
import { isMountPoint } from '../mount/mountinfo.ts';
import type { CsiDrivers } from './drivers.ts';
import { CsiError, isFinalError, NodeExpandError, nodeExpandFailure } from './errors.ts';
import { type LifecycleMode, lifecycleModeProblem } from './lifecycle-mode.ts';
import {
  attachmentName,
  blockGlobalMapPath,
  blockPublishPath,
  blockStagingPath,
  blockVolDataPath,
  CSI_PLUGIN_NAME,
  deviceMountPath,
  ephemeralVolumeHandle,
  publishPath,
  volDataPath,
} from './paths.ts';
import { type PodTokenRequest, podTokenRequests, serviceAccountTokensJson, withServiceAccountTokens } from './service-account-tokens.ts';
import { volumeCapability } from './volume-capability.ts';
import { qualifiedPluginName, timedOperation, type VolumeOperationObserver } from '../volumes/volume-metrics.ts';

/** One PersistentVolume as a pod uses it: what the volume manager resolved from the pod's claim. */
export interface CsiVolumeRequest {
  /** The bound PersistentVolume; its spec.csi names driver and volume handle (upstream: a volume.Spec of a PV). */
  pv: PersistentVolume;
  /** The pod's persistentVolumeClaim.readOnly (upstream's spec.ReadOnly). */
  readOnly: boolean;
  /** The VolumeAttachment's status.attachmentMetadata; {} when the CSIDriver has attachRequired: false (upstream's getPublishContext). */
  publishContext: Record<string, string>;
  /** The driver's CSIDriver object; undefined when it has none, and upstream's defaults apply. */
  csiDriver?: CSIDriver;
  /** The pod's securityContext.fsGroup, handed to a driver with VOLUME_MOUNT_GROUP. */
  fsGroup?: number;
  /**
   * upstream's MounterArgs.IsRemount: the volume is published already and published again (the
   * CSIDriver's requiresRepublish); a failure then leaves the target directory alone.
   */
  remount?: boolean;
}

/** The token manager's answer to one of a CSIDriver's tokenRequests (upstream's TokenRequestStatus). */
export type ServiceAccountTokenGetter = (r: PodTokenRequest) => Promise<{ token: string; expirationTimestamp: string }>;

export interface PublishResult {
  /** The target path, ROOT/pods/UID/volumes/kubernetes.io~csi/PV/mount: what the containers mount. */
  path: string;
  /** The kubelet must give the volume to the pod's fsGroup itself (the driver did not; upstream's supportsFSGroup). */
  applyFsGroup: boolean;
}

/**
 * upstream's supportsFSGroup: whether the kubelet changes the volume's ownership to the fsGroup, by
 * the CSIDriver's fsGroupPolicy (default ReadWriteOnceWithFSType: only a volume with an fsType and a
 * ReadWriteOnce or ReadWriteOncePod access mode). A read-only volume is never changed.
 */
export function kubeletAppliesFsGroup(v: {
  fsGroup?: number;
  fsGroupPolicy?: string;
  readOnly: boolean;
  fsType?: string;
  accessModes?: string[];
}): boolean {
  const policy = v.fsGroupPolicy || 'ReadWriteOnceWithFSType';
  if (v.fsGroup === undefined || policy === 'None' || v.readOnly) return false;
  if (policy === 'File') return true;
  if (!v.fsType || !v.accessModes) return false;
  return v.accessModes.some((m) => m === 'ReadWriteOnce' || m === 'ReadWriteOncePod');
}

/** upstream's getPodInfoAttrs: what a driver with podInfoOnMount gets in the volume context. */
function podInfoAttributes(pod: Pod, mode: LifecycleMode): Record<string, string> {
  return {
    'csi.storage.k8s.io/pod.name': pod.metadata?.name ?? '',
    'csi.storage.k8s.io/pod.namespace': pod.metadata?.namespace ?? '',
    'csi.storage.k8s.io/pod.uid': pod.metadata?.uid ?? '',
    'csi.storage.k8s.io/serviceAccount.name': pod.spec?.serviceAccountName ?? '',
    'csi.storage.k8s.io/ephemeral': String(mode === 'Ephemeral'),
  };
}

// upstream's saveVolumeData and loadVolumeData. Callers give the keys sorted and a newline follows,
// as Go's json.Encoder writes a map.
const saveVolumeData = (mountPath: string, data: Record<string, string>) =>
  writeFileSync(volDataPath(mountPath), JSON.stringify(data) + '\n');
const loadVolumeData = (mountPath: string) => JSON.parse(readFileSync(volDataPath(mountPath), 'utf8')) as Record<string, string>;

function ignoreMissing(remove: () => void): void {
  try {
    remove();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/** upstream's removeMountDir: unless still mounted, the mount directory, its vol_data.json and the directory holding them go. */
function removeMountDir(mountPath: string): void {
  if (isMountPoint(mountPath)) return;
  ignoreMissing(() => rmdirSync(mountPath));
  ignoreMissing(() => rmSync(volDataPath(mountPath)));
  ignoreMissing(() => rmdirSync(dirname(mountPath)));
}

function csiSource(pv: PersistentVolume) {
  const csi = pv.spec?.csi;
  if (!csi) throw new Error(`PersistentVolume ${pv.metadata?.name} has no CSI source`);
  return csi;
}

export class CsiVolumes {
  readonly #rootDir: string;
  readonly #nodeName: string;
  readonly #drivers: CsiDrivers;
  readonly #secret: (namespace: string, name: string) => Promise<Secret>;
  readonly #log: Logger;
  readonly #serviceAccountToken?: ServiceAccountTokenGetter;
  readonly #observe?: VolumeOperationObserver;

  constructor(d: {
    rootDir: string;
    nodeName: string;
    drivers: CsiDrivers;
    /** Reads a Secret that nodeStageSecretRef or nodePublishSecretRef names (src/volumes/sources.ts's secret fits). */
    secret: (namespace: string, name: string) => Promise<Secret>;
    log: Logger;
    /** The kubelet's token manager (upstream's serviceAccountTokenGetter), for CSIDriver tokenRequests. */
    serviceAccountToken?: ServiceAccountTokenGetter;
    /** The teardowns, for storage_operation_duration_seconds (the set-ups are timed by the volume manager). */
    observe?: VolumeOperationObserver;
  }) {
    this.#serviceAccountToken = d.serviceAccountToken;
    this.#observe = d.observe;
    this.#rootDir = d.rootDir;
    this.#nodeName = d.nodeName;
    this.#drivers = d.drivers;
    this.#secret = d.secret;
    this.#log = d.log;
  }

  /**
   * After a failed save of vol_data.json, or a call that surely did nothing (isFinalError), the
   * directories go; after one that may still be under way they stay, for the teardown.
   */
  #cleanUpAfter(err: unknown, path: string, remount = false): void {
    if (err instanceof CsiError && !isFinalError(err)) return;
    // upstream's SetUpAt skips it on a remount: the pod sees the published volume, which a
    // removed directory would leave stale for good (kubernetes#121271).
    if (remount) return;
    try {
      removeMountDir(path);
    } catch (e) {
      this.#log.error('Failed to remove mount dir after error', { path, err: e });
    }
  }

  /** upstream's getCredentialsFromSecret: the Secret's data, decoded. */
  async #credentials(ref: { namespace?: string; name?: string } | undefined): Promise<Record<string, string>> {
    if (!ref) return {};
    const s = await this.#secret(ref.namespace ?? '', ref.name ?? '').catch((e: Error) => {
      throw new Error(`fetching secret ${ref.namespace}/${ref.name} failed: ${e.message}`);
    });
    return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
  }

  /**
   * upstream's MountDevice: NodeStageVolume into the volume's global mount, when the driver has
   * STAGE_UNSTAGE_VOLUME. Returns the staging path, '' for a driver that does not stage. Called once
   * per volume and node, before the first publish. A CsiError that is not final (isFinalError) leaves
   * the volume possibly staged: unstage it when no pod uses it.
   */
  async stage(req: CsiVolumeRequest): Promise<string> {
    const src = csiSource(req.pv);
    const client = this.#drivers.client(src.driver);
    const caps = await client.nodeGetCapabilities();
    const stages = caps.has('STAGE_UNSTAGE_VOLUME');
    const secrets = stages ? await this.#credentials(src.nodeStageSecretRef) : {};
    const path = deviceMountPath(this.#rootDir, src.driver, src.volumeHandle);
    mkdirSync(path, { recursive: true, mode: 0o750 });
    if (!stages) {
      this.#log.v(4, 'STAGE_UNSTAGE_VOLUME capability not set, skipping MountDevice', {
        driver: src.driver,
        volumeHandle: src.volumeHandle,
      });
      return '';
    }
    try {
      saveVolumeData(path, { driverName: src.driver, volumeHandle: src.volumeHandle });
      await client.nodeStageVolume({
        volumeId: src.volumeHandle,
        publishContext: req.publishContext,
        stagingTargetPath: path,
        volumeCapability: volumeCapability({
          fsType: src.fsType ?? '',
          accessMode: req.pv.spec?.accessModes?.[0] ?? 'ReadWriteOnce',
          singleNodeMultiWriter: caps.has('SINGLE_NODE_MULTI_WRITER'),
          mountFlags: req.pv.spec?.mountOptions,
          fsGroup: caps.has('VOLUME_MOUNT_GROUP') ? req.fsGroup : undefined,
        }),
        secrets,
        volumeContext: src.volumeAttributes ?? {},
      });
    } catch (e) {
      this.#cleanUpAfter(e, path);
      throw e;
    }
    this.#log.v(4, 'MountDevice: NodeStageVolume succeeded', { driver: src.driver, volumeHandle: src.volumeHandle, path });
    return path;
  }

  /**
   * upstream's SetUpAt: NodePublishVolume into the pod's volume directory (the volume staged first,
   * when its driver stages). A CsiError that is not final leaves the volume possibly published:
   * unpublish it when the pod goes.
   */
  async publish(pod: Pod, req: CsiVolumeRequest): Promise<PublishResult> {
    const src = csiSource(req.pv);
    const caps = await this.#drivers.client(src.driver).nodeGetCapabilities();
    return this.#publishAt(pod, {
      mode: 'Persistent',
      driver: src.driver,
      volumeHandle: src.volumeHandle,
      specName: req.pv.metadata!.name!,
      csiDriver: req.csiDriver,
      readOnly: req.readOnly,
      fsType: src.fsType ?? '',
      accessModes: req.pv.spec?.accessModes,
      mountFlags: req.pv.spec?.mountOptions,
      publishContext: req.publishContext,
      stagingTargetPath: caps.has('STAGE_UNSTAGE_VOLUME') ? deviceMountPath(this.#rootDir, src.driver, src.volumeHandle) : '',
      volumeAttributes: src.volumeAttributes,
      secretRef: src.nodePublishSecretRef,
      fsGroup: req.fsGroup,
      remount: req.remount ?? false,
    });
  }

  /**
   * upstream's SetUpAt for a pod's inline `csi` volume (Ephemeral lifecycle, csi_mounter.go's
   * volSrc case): the driver must list Ephemeral in its CSIDriver's volumeLifecycleModes; the volume
   * id is made from the pod's UID and the volume's name (makeVolumeHandle); no attach, no staging,
   * no publish context; ReadWriteOnce; the secret is nodePublishSecretRef in the pod's namespace.
   */
  async publishInline(pod: Pod, v: Volume, csiDriver: CSIDriver | undefined, remount = false): Promise<PublishResult> {
    const src = v.csi;
    if (!src) throw new Error(`volume ${v.name} has no CSI source`);
    const ref = src.nodePublishSecretRef?.name ? { namespace: pod.metadata?.namespace, name: src.nodePublishSecretRef.name } : undefined;
    return this.#publishAt(pod, {
      mode: 'Ephemeral',
      driver: src.driver,
      volumeHandle: ephemeralVolumeHandle(pod.metadata!.uid!, v.name),
      specName: v.name,
      csiDriver,
      readOnly: src.readOnly ?? false,
      fsType: src.fsType ?? '',
      // upstream's supportsFSGroup: "Inline CSI volumes are always mounted with RWO AccessMode".
      accessModes: ['ReadWriteOnce'],
      publishContext: {},
      stagingTargetPath: '',
      volumeAttributes: src.volumeAttributes,
      secretRef: ref,
      fsGroup: pod.spec?.securityContext?.fsGroup,
      remount,
    });
  }

  /**
   * upstream's podServiceAccountTokenAttrs: one token per CSIDriver tokenRequests entry, from the
   * token manager, as the JSON map the driver reads; undefined when the driver asks for none.
   */
  async #serviceAccountTokens(pod: Pod, csiDriver: CSIDriver | undefined): Promise<string | undefined> {
    const requests = podTokenRequests(pod, csiDriver);
    if (requests.length === 0) return undefined;
    const get = this.#serviceAccountToken;
    if (!get) throw new Error('ServiceAccountTokenGetter is nil');
    const results = [];
    for (const r of requests) results.push({ audience: r.audience, ...(await get(r)) });
    this.#log.v(4, 'Fetched service account token attrs for CSIDriver', { driver: csiDriver?.metadata?.name });
    return serviceAccountTokensJson(results);
  }

  async #publishAt(
    pod: Pod,
    p: {
      mode: LifecycleMode;
      driver: string;
      volumeHandle: string;
      specName: string;
      csiDriver: CSIDriver | undefined;
      readOnly: boolean;
      fsType: string;
      accessModes: string[] | undefined;
      mountFlags?: string[];
      publishContext: Record<string, string>;
      stagingTargetPath: string;
      volumeAttributes: Record<string, string> | undefined;
      secretRef: { namespace?: string; name?: string } | undefined;
      fsGroup: number | undefined;
      remount: boolean;
    },
  ): Promise<PublishResult> {
    const client = this.#drivers.client(p.driver);
    const problem = lifecycleModeProblem(p.driver, p.csiDriver, p.mode);
    if (problem) throw new Error(`mounter.SetupAt failed to check volume lifecycle mode: ${problem}`);
    const spec = p.csiDriver?.spec;
    const caps = await client.nodeGetCapabilities();
    const uid = pod.metadata!.uid!;
    const path = publishPath(this.#rootDir, uid, p.specName);
    mkdirSync(dirname(path), { recursive: true, mode: 0o750 });
    const tokens = await this.#serviceAccountTokens(pod, p.csiDriver).catch((e: Error) => {
      // upstream's message, its typo included.
      throw new Error(`mounter.SetUpAt failed to get service accoount token attributes: ${e.message}`);
    });
    const { volumeContext, secrets } = withServiceAccountTokens(
      {
        volumeContext: { ...p.volumeAttributes, ...(spec?.podInfoOnMount ? podInfoAttributes(pod, p.mode) : {}) },
        secrets: await this.#credentials(p.secretRef),
      },
      tokens,
      p.csiDriver,
    );
    const mountGroup = caps.has('VOLUME_MOUNT_GROUP');
    try {
      saveVolumeData(path, {
        attachmentID: attachmentName(p.volumeHandle, p.driver, this.#nodeName),
        driverName: p.driver,
        nodeName: this.#nodeName,
        specVolID: p.specName,
        volumeHandle: p.volumeHandle,
        volumeLifecycleMode: p.mode,
      });
      await client.nodePublishVolume({
        volumeId: p.volumeHandle,
        publishContext: p.publishContext,
        stagingTargetPath: p.stagingTargetPath,
        targetPath: path,
        volumeCapability: volumeCapability({
          fsType: p.fsType,
          accessMode: p.accessModes?.[0] ?? 'ReadWriteOnce',
          singleNodeMultiWriter: caps.has('SINGLE_NODE_MULTI_WRITER'),
          mountFlags: p.mountFlags,
          fsGroup: mountGroup ? p.fsGroup : undefined,
        }),
        readonly: p.readOnly,
        secrets,
        volumeContext,
      });
    } catch (e) {
      this.#cleanUpAfter(e, path, p.remount);
      throw e;
    }
    this.#log.v(4, 'SetUp: NodePublishVolume succeeded', { podUID: uid, driver: p.driver, volumeHandle: p.volumeHandle, path });
    const applyFsGroup =
      !mountGroup &&
      kubeletAppliesFsGroup({
        fsGroup: p.fsGroup,
        fsGroupPolicy: spec?.fsGroupPolicy,
        readOnly: p.readOnly,
        fsType: p.fsType,
        accessModes: p.accessModes,
      });
    return { path, applyFsGroup };
  }

  /**
   * upstream's csiPlugin.NodeExpand (expander.go): NodeExpandVolume of the volume published at
   * volumePath (the pod's target path; the staging path beside it), to newSizeBytes. Throws a
   * NodeExpandError whose kind the caller decides by (notSupported without EXPAND_VOLUME).
   */
  async nodeExpand(r: { pv: PersistentVolume; volumePath: string; newSizeBytes: number }): Promise<void> {
    const src = csiSource(r.pv);
    let client: ReturnType<CsiDrivers['client']>;
    try {
      client = this.#drivers.client(src.driver);
    } catch (e) {
      throw new NodeExpandError((e as Error).message, 'transient', { cause: e });
    }
    const caps = await client.nodeGetCapabilities().catch((e: Error) => {
      throw new NodeExpandError(`Expander.NodeExpand failed to check if node supports expansion : ${e.message}`, 'final', { cause: e });
    });
    if (!caps.has('EXPAND_VOLUME'))
      throw new NodeExpandError(`NodeExpand is not supported by the CSI driver ${src.driver}`, 'notSupported');
    const ref = src.nodeExpandSecretRef;
    const secrets = await this.#credentials(ref).catch((e: Error) => {
      throw new NodeExpandError(
        `expander.NodeExpand failed to get NodeExpandSecretRef ${ref?.namespace}/${ref?.name}: ${e.message}`,
        'final',
      );
    });
    const block = r.pv.spec?.volumeMode === 'Block';
    try {
      await client.nodeExpandVolume({
        volumeId: src.volumeHandle,
        volumePath: r.volumePath,
        capacityRange: { requiredBytes: String(r.newSizeBytes) },
        // upstream hands the device mount path whether or not the driver stages (GetDeviceMountPath).
        stagingTargetPath: block
          ? blockStagingPath(this.#rootDir, r.pv.metadata!.name!)
          : deviceMountPath(this.#rootDir, src.driver, src.volumeHandle),
        volumeCapability: volumeCapability({
          fsType: block ? 'block' : (src.fsType ?? ''),
          accessMode: r.pv.spec?.accessModes?.[0] ?? 'ReadWriteOnce',
          singleNodeMultiWriter: caps.has('SINGLE_NODE_MULTI_WRITER'),
          mountFlags: r.pv.spec?.mountOptions,
        }),
        secrets,
      });
    } catch (e) {
      throw nodeExpandFailure(e);
    }
  }

  /**
   * upstream's NewBlockVolumeMapper and csiBlockMapper.SetUpDevice for a raw block PersistentVolume:
   * its vol_data.json in volumeDevices/PV/data, then NodeStageVolume into volumeDevices/staging/PV
   * with a block capability, when the driver stages. Returns the staging path, '' when it does not.
   */
  async stageBlock(req: CsiVolumeRequest): Promise<string> {
    const src = csiSource(req.pv);
    const specName = req.pv.metadata!.name!;
    const client = this.#drivers.client(src.driver);
    const dataFile = blockVolDataPath(this.#rootDir, specName);
    mkdirSync(dirname(dataFile), { recursive: true, mode: 0o750 });
    writeFileSync(
      dataFile,
      JSON.stringify({
        attachmentID: attachmentName(src.volumeHandle, src.driver, this.#nodeName),
        driverName: src.driver,
        nodeName: this.#nodeName,
        specVolID: specName,
        volumeHandle: src.volumeHandle,
      }) + '\n',
    );
    const caps = await client.nodeGetCapabilities();
    if (!caps.has('STAGE_UNSTAGE_VOLUME')) return '';
    const secrets = await this.#credentials(src.nodeStageSecretRef);
    const path = blockStagingPath(this.#rootDir, specName);
    mkdirSync(path, { recursive: true, mode: 0o750 });
    await client.nodeStageVolume({
      volumeId: src.volumeHandle,
      publishContext: req.publishContext,
      stagingTargetPath: path,
      volumeCapability: volumeCapability({
        fsType: 'block',
        accessMode: req.pv.spec?.accessModes?.[0] ?? 'ReadWriteOnce',
        singleNodeMultiWriter: caps.has('SINGLE_NODE_MULTI_WRITER'),
      }),
      secrets,
      volumeContext: src.volumeAttributes ?? {},
    });
    return path;
  }

  /**
   * upstream's csiBlockMapper.MapPodDevice: NodePublishVolume of the raw block volume to
   * volumeDevices/publish/PV/PODUID (a file the driver makes: the device); the staging path is
   * handed whether or not the driver stages, as upstream. Returns the publish path.
   */
  async publishBlock(pod: Pod, req: CsiVolumeRequest): Promise<string> {
    const src = csiSource(req.pv);
    const specName = req.pv.metadata!.name!;
    const client = this.#drivers.client(src.driver);
    const caps = await client.nodeGetCapabilities();
    const spec = req.csiDriver?.spec;
    const volumeContext = { ...src.volumeAttributes, ...(spec?.podInfoOnMount ? podInfoAttributes(pod, 'Persistent') : {}) };
    const secrets = await this.#credentials(src.nodePublishSecretRef);
    const path = blockPublishPath(this.#rootDir, specName, pod.metadata!.uid!);
    mkdirSync(dirname(path), { recursive: true, mode: 0o750 });
    await client.nodePublishVolume({
      volumeId: src.volumeHandle,
      publishContext: req.publishContext,
      stagingTargetPath: blockStagingPath(this.#rootDir, specName),
      targetPath: path,
      volumeCapability: volumeCapability({
        fsType: 'block',
        accessMode: req.pv.spec?.accessModes?.[0] ?? 'ReadWriteOnce',
        singleNodeMultiWriter: caps.has('SINGLE_NODE_MULTI_WRITER'),
      }),
      readonly: req.readOnly,
      secrets,
      volumeContext,
    });
    return path;
  }

  /** upstream's csiBlockMapper.UnmapPodDevice: NodeUnpublishVolume of the pod's publish path, even when it is gone. */
  async unpublishBlock(podUID: string, specName: string): Promise<void> {
    const data = this.#blockVolData(specName);
    await timedOperation(this.#observe, csiPlugin(data), 'unmap_volume', () =>
      this.#drivers.client(data.driverName!).nodeUnpublishVolume({
        volumeId: data.volumeHandle!,
        targetPath: blockPublishPath(this.#rootDir, specName, podUID),
      }),
    );
  }

  /**
   * upstream's csiBlockMapper.TearDownDevice, once no pod has the volume: NodeUnstageVolume when
   * the staging path exists and the driver stages, then cleanupOrphanDeviceFiles (the publish
   * directory, the staging path, volumeDevices/PV). Nothing to do once its vol_data.json is gone.
   */
  /** The volume's driver and handle, when it was staged (its vol_data.json was there). */
  async unstageBlock(specName: string): Promise<{ driverName: string; volumeHandle: string } | undefined> {
    let data: Record<string, string>;
    try {
      data = this.#blockVolData(specName);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    await timedOperation(this.#observe, csiPlugin(data), 'unmap_device', () => this.#tearDownDevice(specName, data));
    return { driverName: data.driverName!, volumeHandle: data.volumeHandle! };
  }

  async #tearDownDevice(specName: string, data: Record<string, string>): Promise<void> {
    const client = this.#drivers.client(data.driverName!);
    const staging = blockStagingPath(this.#rootDir, specName);
    if (existsSync(staging) && (await client.nodeGetCapabilities()).has('STAGE_UNSTAGE_VOLUME')) {
      await client.nodeUnstageVolume({ volumeId: data.volumeHandle!, stagingTargetPath: staging });
      rmSync(staging, { recursive: true, force: true });
    }
    ignoreMissing(() => rmdirSync(dirname(blockPublishPath(this.#rootDir, specName, 'x'))));
    ignoreMissing(() => rmdirSync(staging));
    // volumeDevices/PV holds only data/vol_data.json and an empty dev/ now (upstream's RemoveAllOneFilesystem).
    const volumeDir = dirname(dirname(blockVolDataPath(this.#rootDir, specName)));
    // Never through a pod's bind-mounted device: only when dev/ is empty.
    let left: string[] = [];
    try {
      left = readdirSync(blockGlobalMapPath(this.#rootDir, specName));
    } catch {
      /* gone already */
    }
    if (left.length === 0) rmSync(volumeDir, { recursive: true, force: true });
  }

  #blockVolData(specName: string): Record<string, string> {
    return JSON.parse(readFileSync(blockVolDataPath(this.#rootDir, specName), 'utf8')) as Record<string, string>;
  }

  /** upstream's TearDownAt: NodeUnpublishVolume of the pod's volume, found by the vol_data.json beside it. */
  async unpublish(podUID: string, specName: string): Promise<void> {
    const path = publishPath(this.#rootDir, podUID, specName);
    let data: Record<string, string>;
    try {
      data = loadVolumeData(path);
    } catch (e) {
      throw new Error(`unmounter failed to load volume data file [${path}]: ${(e as Error).message}`);
    }
    await timedOperation(this.#observe, csiPlugin(data), 'volume_unmount', async () => {
      await this.#drivers.client(data.driverName!).nodeUnpublishVolume({ volumeId: data.volumeHandle!, targetPath: path });
      // The driver removes the target path (the spec says so); some do not.
      removeMountDir(path);
    });
  }

  /**
   * upstream's UnmountDevice: NodeUnstageVolume of the global mount that stage returned, once no pod
   * has the volume published. Nothing to do without its vol_data.json (never staged, or done).
   */
  async unstage(stagingPath: string): Promise<void> {
    let data: Record<string, string>;
    try {
      data = loadVolumeData(stagingPath);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    await timedOperation(this.#observe, csiPlugin(data), 'unmount_device', async () => {
      const client = this.#drivers.client(data.driverName!);
      if ((await client.nodeGetCapabilities()).has('STAGE_UNSTAGE_VOLUME'))
        await client.nodeUnstageVolume({ volumeId: data.volumeHandle!, stagingTargetPath: stagingPath });
      removeMountDir(stagingPath);
    });
  }
}

/** upstream's GetFullQualifiedPluginNameForVolume of a CSI volume, from its vol_data.json. */
const csiPlugin = (data: Record<string, string>) =>
  qualifiedPluginName(CSI_PLUGIN_NAME, { volume: { name: '', csi: { driver: data.driverName ?? '' } } });
