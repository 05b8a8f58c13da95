// The kubelet's side of FlexVolume (upstream's flexVolumeMounter, flexVolumeUnmounter and, for
// attachable drivers, the kubelet's half of flexVolumeAttacher and flexVolumeDetacher): a pod's
// flexVolume, inline or a claim's PersistentVolume, is mounted by its driver into
// ROOT/pods/UID/volumes/VENDOR~DRIVER/NAME and unmounted from there. An attachable driver's volume
// is attached by the attach/detach controller (the kubelet reports it in the Node's volumesInUse
// and waits for it in volumesAttached), or with enableControllerAttachDetach false by the kubelet
// (the driver's `attach`, and `detach` after the last `unmountdevice`); then `waitforattach` and
// `mountdevice` into ROOT/plugins/kubernetes.io/flexvolume/VENDOR/DRIVER/mounts/NAME once for the
// node, then the pod's `mount` (or, "Not supported", a bind mount of the device mount);
// `unmountdevice` once no pod has it. What is set up is read back from disk at teardown, so a
// restarted kubelet tears down what the previous one set up.
import { existsSync, mkdirSync, readdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod, Secret } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../../../log/log.ts';
import { isMountPoint, unmountAll } from '../../../mount/mountinfo.ts';
import { escapeQualifiedName, pluginDir, podsDir, podVolumeDir, podVolumesDir } from '../../../podutil/pod-dirs.ts';
import { setVolumeOwnershipUnlessMatching } from '../../ownership.ts';
import { FLEX_VOLUME } from '../names.ts';
import { type PersistentPath, type ReconstructedVolume, VolumeOperationError, type VolumeSpec } from '../plugin.ts';
import {
  type FlexSource,
  flexSource,
  isNotSupported,
  mountOptions,
  optionsJSON,
  secretOptions,
  WAIT_FOR_ATTACH_TIMEOUT_MS,
} from './driver-call.ts';
import type { FlexDriver, FlexDrivers } from './drivers.ts';

/** upstream's flexVolume.GetPath: ROOT/pods/UID/volumes/VENDOR~DRIVER/NAME (the driver escaped, the spec's name as it is). */
export const flexPodVolumeDir = (rootDir: string, uid: string, driver: string, specName: string) =>
  podVolumeDir(rootDir, uid, escapeQualifiedName(driver), specName);

/**
 * upstream's getDeviceMountPath: ROOT/plugins/kubernetes.io/flexvolume/VENDOR/DRIVER/mounts/NAME,
 * the driver's name joined unescaped as upstream joins it (NAME: GetVolumeName's default, the spec's name).
 */
export const flexDeviceMountPath = (rootDir: string, driver: string, specName: string) =>
  join(pluginDir(rootDir, FLEX_VOLUME), driver, 'mounts', specName);

/**
 * upstream's GetUniqueVolumeNameFromSpec of an attachable flexVolume, VENDOR/DRIVER/NAME: its
 * name in volumesInUse and volumesAttached. (Upstream also runs the driver's `getvolumename` and
 * then uses the spec's name whatever it answered; kubelet-ts does not run it.)
 */
export const flexUniqueVolumeName = (driver: string, specName: string) => `${driver}/${specName}`;

/**
 * Pure: the plugin directories of ROOT/pods/UID/volumes that are flexVolume drivers': all but
 * upstream's in-tree plugins (kubernetes.io~*), as FindPluginByName finds only probed flex plugins
 * under other names. The driver's name is the directory's unescaped.
 */
export function flexDriverOfPluginDir(dirName: string): string | undefined {
  return dirName.startsWith('kubernetes.io~') || dirName.startsWith('.') ? undefined : dirName.replaceAll('~', '/');
}

/** upstream's ConstructVolumeSpec over the pod's volume directories: the flexVolumes set up for it, by driver and spec name. */
export function flexVolumesOnDisk(rootDir: string, uid: string): ReconstructedVolume[] {
  const list = (dir: string) => {
    try {
      return readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort();
    } catch {
      return [];
    }
  };
  const volumesDir = podVolumesDir(rootDir, uid);
  return list(volumesDir).flatMap((dirName) => {
    const driverName = flexDriverOfPluginDir(dirName);
    if (!driverName) return [];
    return list(join(volumesDir, dirName)).map((specName) => ({ specName, driverName, volumeHandle: specName }));
  });
}

/** What the host does for a flexVolume beside the driver calls (the host's mounts; tests pass fakes). */
export interface FlexMounts {
  /** The device mount bind-mounted into the pod when the driver's `mount` is "Not supported" (mounterDefaults.SetUpAt). */
  bindMount(source: string, target: string, readOnly: boolean): Promise<void>;
  /** upstream's !IsLikelyNotMountPoint. */
  isMountPoint(dir: string): boolean;
  /** upstream's mount.CleanupMountPoint: unmounted when it is a mount point, then the (empty) directory removed. */
  cleanupMountPoint(dir: string): Promise<void>;
}

/** The host's cleanupMountPoint: the mounts at or below dir undone (src/mount), then rmdir. */
export async function cleanupMountPoint(dir: string): Promise<void> {
  if (!existsSync(dir)) return;
  await unmountAll(dir);
  rmdirSync(dir);
}

/** A volume of the Node's status.volumesAttached. */
export interface AttachedVolume {
  name: string;
  devicePath?: string;
}

/** What the pod and PV plugins ask of FlexVolumes (pod-host.ts, persistent-host.ts). */
export type FlexVolumeOps = Pick<FlexVolumes, 'setUp' | 'tearDown'>;

export class FlexVolumes {
  readonly #rootDir: string;
  readonly #drivers: FlexDrivers;
  readonly #secret: (namespace: string, name: string) => Promise<Secret>;
  readonly #mounts: FlexMounts;
  readonly #volumesAttached: () => AttachedVolume[];
  readonly #nodeName: string;
  readonly #controllerAttachDetach: boolean;
  /** With the kubelet attaching: the device path each volume this kubelet attached was given (upstream's ASW attached volumes). */
  readonly #attached = new Map<string, string>();
  readonly #inUseChanged: () => void;
  readonly #log: Logger;
  /** Per pod UID, its attachable flexVolumes' unique names (upstream's desired and actual states of world, for volumesInUse). */
  readonly #inUse = new Map<string, Set<string>>();
  /** What the last node status sent as volumesInUse (upstream's MarkVolumesAsReportedInUse). */
  #reported = new Set<string>();
  /** The in-use volumes of the pods a previous kubelet left on disk have been read (once, at the first volumesInUse). */
  #reconstructed = false;
  /** Device mount paths mounted by this kubelet (upstream's DeviceGloballyMounted): mountdevice is not run again for another pod. */
  readonly #deviceMounted = new Set<string>();
  /** One operation at a time per device mount path: a second pod's set-up waits for the first's mountdevice, a teardown's unmountdevice for both. */
  readonly #locks = new Map<string, Promise<unknown>>();

  constructor(d: {
    rootDir: string;
    drivers: FlexDrivers;
    /** Reads a Secret (the apiserver, each time, as upstream's GetSecretForPV). */
    secret: (namespace: string, name: string) => Promise<Secret>;
    /** bindMount is the host's (a hollow node's mounts nothing); the rest default to src/mount's. */
    mounts: Pick<FlexMounts, 'bindMount'> & Partial<FlexMounts>;
    /** The Node's status.volumesAttached, as the attach/detach controller set them. */
    volumesAttached: () => AttachedVolume[];
    nodeName?: string;
    /** enableControllerAttachDetach (true by default): false, the kubelet runs the drivers' attach and detach. */
    controllerAttachDetach?: boolean;
    /** The set of volumes in use changed: the node status should be sent now. */
    inUseChanged: () => void;
    log: Logger;
  }) {
    this.#nodeName = d.nodeName ?? '';
    this.#controllerAttachDetach = d.controllerAttachDetach ?? true;
    this.#rootDir = d.rootDir;
    this.#drivers = d.drivers;
    this.#secret = d.secret;
    this.#mounts = { isMountPoint, cleanupMountPoint, ...d.mounts };
    this.#volumesAttached = d.volumesAttached;
    this.#inUseChanged = d.inUseChanged;
    this.#log = d.log;
  }

  /**
   * upstream's MountVolume of a flexVolume, inline or a claim's PV; the volume as set up, or a
   * throw with upstream's message: a driver's Failure is `mount command failed, status: Failure,
   * reason: <its message>`.
   */
  async setUp(pod: Pod, spec: VolumeSpec): Promise<PersistentPath> {
    const uid = pod.metadata!.uid!;
    const src = flexSource(spec, pod.metadata?.namespace ?? '');
    if (!src) throw new Error(`volume ${spec.volume.name} is not a flexVolume`);
    const found = await this.#drivers.lookup(src.driver);
    if ('error' in found)
      throw new Error(`failed to get Plugin from volumeSpec for volume "${src.specName}" err=no volume plugin matched (${found.error})`);
    const driver = found.driver;
    const device = flexDeviceMountPath(this.#rootDir, src.driver, src.specName);
    if (!driver.capabilities.attach) return this.#mount(driver, pod, src, device);
    const attachedPath = this.#controllerAttachDetach ? this.#verifyAttached(uid, src) : undefined;
    return this.#locked(device, async () => {
      const devicePath = await this.#waitForAttach(driver, src, attachedPath ?? (await this.#attach(driver, uid, src)));
      await this.#mountDevice(driver, src, devicePath, device);
      return this.#mount(driver, pod, src, device);
    });
  }

  /** The pod's attachable volume goes in volumesInUse (upstream's desired state of world); its unique name. */
  #use(uid: string, src: FlexSource): string {
    const unique = flexUniqueVolumeName(src.driver, src.specName);
    let names = this.#inUse.get(uid);
    if (!names) this.#inUse.set(uid, (names = new Set()));
    if (!names.has(unique)) {
      names.add(unique);
      this.#inUseChanged();
    }
    return unique;
  }

  /**
   * upstream's VerifyControllerAttachedVolume: the volume goes in volumesInUse now, and is used
   * once a node status carried it and the Node lists it attached; its devicePath as the Node has it.
   */
  #verifyAttached(uid: string, src: FlexSource): string {
    const unique = this.#use(uid, src);
    if (!this.#reported.has(unique)) throw new Error(`Volume has not been added to the list of VolumesInUse in the node's volume status`);
    const attached = this.#volumesAttached().find((v) => v.name === unique);
    if (!attached) throw new Error('Volume not attached according to node status');
    return attached.devicePath ?? '';
  }

  /**
   * flexVolumeAttacher.Attach, when the kubelet attaches: `attach <options> <node>` once (a volume
   * this kubelet attached is not attached again), its device path kept; "Not supported":
   * attacherDefaults, no device path.
   */
  async #attach(driver: FlexDriver, uid: string, src: FlexSource): Promise<string> {
    const unique = this.#use(uid, src);
    const known = this.#attached.get(unique);
    if (known !== undefined) return known;
    let devicePath = '';
    try {
      devicePath = (await driver.call('attach', [optionsJSON(src), this.#nodeName])).device ?? '';
    } catch (e) {
      if (!isNotSupported(e)) throw new VolumeOperationError('AttachVolume.Attach', (e as Error).message, { cause: e });
      this.#log.warn(`flexVolume driver ${driver.name}: using default Attach for volume ${src.specName}, host ${this.#nodeName}`);
    }
    this.#attached.set(unique, devicePath);
    return devicePath;
  }

  /** flexVolumeDetacher.Detach, when the kubelet attaches: `detach <volume name> <node>` ("Not supported": nothing to do). */
  async #detach(driver: FlexDriver, specName: string): Promise<void> {
    if (this.#controllerAttachDetach) return;
    try {
      await driver.call('detach', [specName, this.#nodeName]);
    } catch (e) {
      if (!isNotSupported(e)) throw e;
      this.#log.warn(`flexVolume driver ${driver.name}: using default Detach for volume ${specName}, host ${this.#nodeName}`);
    }
    this.#attached.delete(flexUniqueVolumeName(driver.name, specName));
    this.#log.info('DetachVolume.Detach succeeded', { driver: driver.name, volume: specName, node: this.#nodeName });
  }

  /** flexVolumeAttacher.WaitForAttach: the driver's device path; "Not supported" keeps the Node's (attacherDefaults). */
  async #waitForAttach(driver: FlexDriver, src: FlexSource, devicePath: string): Promise<string> {
    try {
      const status = await driver.call('waitforattach', [devicePath, optionsJSON(src)], WAIT_FOR_ATTACH_TIMEOUT_MS);
      return status.device ?? '';
    } catch (e) {
      if (isNotSupported(e)) return devicePath;
      throw new VolumeOperationError('MountVolume.WaitForAttach', (e as Error).message, { cause: e });
    }
  }

  /**
   * flexVolumeAttacher.MountDevice, once for the node: not when this kubelet mounted it already
   * nor when the path is a mount point (a restarted kubelet). "Not supported" is fine without a
   * device; with one, upstream formats and mounts it itself (SafeFormatAndMount), which kubelet-ts
   * does not: refused, naming why.
   */
  async #mountDevice(driver: FlexDriver, src: FlexSource, devicePath: string, device: string): Promise<void> {
    if (this.#deviceMounted.has(device) || prepareForMount(device, this.#mounts)) return;
    try {
      await driver.call('mountdevice', [device, devicePath, optionsJSON(src)]);
    } catch (e) {
      if (!isNotSupported(e)) throw new VolumeOperationError('MountVolume.MountDevice', (e as Error).message, { cause: e });
      if (devicePath)
        throw new VolumeOperationError(
          'MountVolume.MountDevice',
          `flexVolume driver ${driver.name} does not support mountdevice, and kubelet-ts does not format and mount device ${devicePath} itself (upstream's attacherDefaults.MountDevice)`,
        );
    }
    this.#deviceMounted.add(device);
    this.#log.info('MountVolume.MountDevice succeeded', { driver: driver.name, volume: src.specName, deviceMountPath: device });
  }

  /**
   * flexVolumeMounter.SetUpAt: `mount DIR OPTIONS` unless DIR is a mount point already; the
   * options carry the pod, its service account, fsGroup and the secretRef's data. "Not supported"
   * bind-mounts the device mount (mounterDefaults). A failure removes the (empty) directory.
   * fsGroup owns the volume when the driver's fsGroup capability says so and it is not read-only.
   */
  async #mount(driver: FlexDriver, pod: Pod, src: FlexSource, device: string): Promise<PersistentPath> {
    const dir = flexPodVolumeDir(this.#rootDir, pod.metadata!.uid!, src.driver, src.specName);
    const result: PersistentPath = {
      path: dir,
      readOnly: src.readOnly,
      // upstream's GetAttributes: Managed unless read-only, SELinuxRelabel as the driver says.
      ...(driver.capabilities.selinuxRelabel && !src.readOnly && { selinuxRelabel: true }),
      // upstream's newMounterInternal: MetricsStatFS of the pod's directory when the driver supportsMetrics, else none.
      ...(driver.capabilities.supportsMetrics && { statfsMetrics: true }),
    };
    if (prepareForMount(dir, this.#mounts)) return result;
    let secret: Record<string, string> = {};
    if (src.secret) {
      const { namespace, name } = src.secret;
      try {
        secret = secretOptions(await this.#secret(namespace, name), src.driver);
      } catch (e) {
        removeEmptyDir(dir);
        throw new Error(`couldn't get secret ${namespace}/${name} err: ${(e as Error).message}`, { cause: e });
      }
    }
    try {
      await driver.call('mount', [dir, optionsJSON(src, mountOptions(pod, secret))]);
    } catch (e) {
      if (!isNotSupported(e)) {
        removeEmptyDir(dir);
        throw e;
      }
      this.#log.warn(`flexVolume driver ${driver.name}: using default SetUpAt to ${dir}`);
      try {
        await this.#mounts.bindMount(device, dir, false);
      } catch (be) {
        removeEmptyDir(dir);
        throw be;
      }
    }
    const sc = pod.spec?.securityContext;
    if (!src.readOnly && driver.capabilities.fsGroup && sc?.fsGroup !== undefined && sc.fsGroup !== null) {
      try {
        setVolumeOwnershipUnlessMatching(dir, sc.fsGroup, false, sc.fsGroupChangePolicy);
      } catch (e) {
        // upstream ignores ChangePermissions' error here.
        this.#log.warn('Failed to set the volume ownership', { volume: src.specName, dir, err: e });
      }
    }
    return result;
  }

  /**
   * upstream's UnmountVolume (TearDown) of each flexVolume found in the pod's directory, and for an
   * attachable driver UnmountDevice once no other pod has the volume; then the pod's volumes leave
   * volumesInUse. Throws (the directory stays, for a retry) when a driver fails or is not installed.
   */
  async tearDown(uid: string): Promise<void> {
    for (const v of flexVolumesOnDisk(this.#rootDir, uid)) {
      const found = await this.#drivers.lookup(v.driverName);
      if ('error' in found) throw new Error(`flexVolume ${v.specName} of driver ${v.driverName} cannot be torn down: ${found.error}`);
      const driver = found.driver;
      const dir = flexPodVolumeDir(this.#rootDir, uid, v.driverName, v.specName);
      if (!driver.capabilities.attach) {
        await this.#tearDownAt(driver, dir, uid);
        continue;
      }
      const device = flexDeviceMountPath(this.#rootDir, v.driverName, v.specName);
      await this.#locked(device, async () => {
        await this.#tearDownAt(driver, dir, uid);
        if (this.#mountedElsewhere(uid, v)) return;
        await this.#unmountDevice(driver, device);
        await this.#detach(driver, v.specName);
      });
    }
    if (this.#inUse.delete(uid)) this.#inUseChanged();
  }

  /** flexVolumeUnmounter.TearDownAt: `unmount DIR` ("Not supported": CleanupMountPoint), then the directory removed unless the driver did. */
  async #tearDownAt(driver: FlexDriver, dir: string, uid: string): Promise<void> {
    if (!existsSync(dir)) return;
    try {
      await driver.call('unmount', [dir]);
    } catch (e) {
      if (!isNotSupported(e)) throw e;
      this.#log.warn(`flexVolume driver ${driver.name}: using default TearDownAt for ${dir}`);
      await this.#mounts.cleanupMountPoint(dir);
    }
    if (existsSync(dir)) rmdirSync(dir);
    this.#log.info('UnmountVolume.TearDown succeeded', { podUID: uid, driver: driver.name, dir });
  }

  /**
   * flexVolumeDetacher.UnmountDevice: `unmountdevice PATH` when it is a mount point ("Not
   * supported": CleanupMountPoint), then the directory removed. Detach is the controller's.
   */
  async #unmountDevice(driver: FlexDriver, device: string): Promise<void> {
    this.#deviceMounted.delete(device);
    if (!existsSync(device)) return;
    if (!this.#mounts.isMountPoint(device)) this.#log.warn('Warning: Path already unmounted', { deviceMountPath: device });
    else {
      try {
        await driver.call('unmountdevice', [device]);
      } catch (e) {
        if (!isNotSupported(e)) throw e;
        this.#log.warn(`flexVolume driver ${driver.name}: using default UnmountDevice for device mount path ${device}`);
        await this.#mounts.cleanupMountPoint(device);
      }
    }
    if (existsSync(device)) rmdirSync(device);
    this.#log.info('UnmountDevice succeeded', { driver: driver.name, deviceMountPath: device });
  }

  /** Whether a pod other than exceptUID has the volume set up (its directory is there): upstream's ASW mounted pods, from disk. */
  #mountedElsewhere(exceptUID: string, v: ReconstructedVolume): boolean {
    let pods: string[];
    try {
      pods = readdirSync(podsDir(this.#rootDir));
    } catch {
      return false;
    }
    return pods.some((uid) => uid !== exceptUID && existsSync(flexPodVolumeDir(this.#rootDir, uid, v.driverName, v.specName)));
  }

  /**
   * upstream's GetVolumesInUse for flexVolumes: the attachable ones of this node's pods, sorted;
   * at the first call, also those a previous kubelet left set up (a device mount beside the pod's
   * directory: upstream's reconstructed actual state of world), until their teardown.
   */
  volumesInUse(): string[] {
    if (!this.#reconstructed) {
      this.#reconstructed = true;
      this.#reconstructInUse();
    }
    const all = new Set<string>();
    for (const names of this.#inUse.values()) for (const n of names) all.add(n);
    return [...all].sort();
  }

  /** upstream's MarkVolumesAsReportedInUse: the node status carrying these names was accepted. */
  markReportedInUse(names: readonly string[]): void {
    this.#reported = new Set(names);
  }

  #reconstructInUse(): void {
    let pods: string[] = [];
    try {
      pods = readdirSync(podsDir(this.#rootDir));
    } catch {
      /* none yet */
    }
    for (const uid of pods)
      for (const v of flexVolumesOnDisk(this.#rootDir, uid)) {
        if (!existsSync(flexDeviceMountPath(this.#rootDir, v.driverName, v.specName))) continue;
        let names = this.#inUse.get(uid);
        if (!names) this.#inUse.set(uid, (names = new Set()));
        names.add(flexUniqueVolumeName(v.driverName, v.specName));
      }
  }

  async #locked<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.#locks.get(key) ?? Promise.resolve()).then(fn, fn);
    const tail = run.catch(() => undefined);
    this.#locks.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.#locks.get(key) === tail) this.#locks.delete(key);
    }
  }
}

/** upstream's prepareForMount: true when dir is a mount point already; made (0750) when missing. */
function prepareForMount(dir: string, mounts: Pick<FlexMounts, 'isMountPoint'>): boolean {
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: 0o750 });
    return false;
  }
  return mounts.isMountPoint(dir);
}

/** upstream's os.Remove(dir) after a failed set-up: only an empty directory goes, and its error is ignored. */
function removeEmptyDir(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    /* not empty, or gone */
  }
}
