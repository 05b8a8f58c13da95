// A pod's persistentVolumeClaim and generic ephemeral volumes: the claim is read, its bound
// PersistentVolume checked (claims.ts), and the PV set up by its plugin: hostPath (the path),
// local (bind-mounted into the pod's volume directory; a Block one handed to the containers as
// a device) or CSI (src/csi: wait for the VolumeAttachment when the driver needs attach, stage
// once per node, publish per pod). Which volumes the node uses is reported in the Node's
// status.volumesInUse, so that the attach/detach controller leaves them attached; as upstream,
// an attachable volume is not mounted before that report went out. Teardown reads what was
// published from disk (vol_data.json), so a restarted kubelet unpublishes and unstages what the
// previous one left.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PersistentVolume, PersistentVolumeClaim, Pod, Volume } from 'kubernetes-types/core/v1.js';
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import type { Logger } from '../log/log.ts';
import type { CsiVolumeRequest, CsiVolumes } from '../csi/volumes.ts';
import { attachmentName, deviceMountPath, volDataPath } from '../csi/paths.ts';
import {
  type ClaimMount,
  claimMount,
  claimOf,
  claimProblem,
  persistentKind,
  podVolumeUsage,
  uniqueVolumeName,
  volumeModeProblem,
  volumeProblem,
} from './claims.ts';
import { setUpHostPath } from './host-path.ts';
import type { VolumePath } from './mounts.ts';
import { setVolumeOwnershipUnlessMatching } from './ownership.ts';

/** The API objects persistent volumes are made of (src/volumes/sources.ts reads them). */
export interface ClaimSources {
  claim(namespace: string, name: string): Promise<PersistentVolumeClaim>;
  volume(name: string): Promise<PersistentVolume>;
  /** undefined when the driver has no CSIDriver object (upstream's defaults apply: attach required). */
  csiDriver(name: string): Promise<CSIDriver | undefined>;
  /** undefined when it does not exist (yet). */
  volumeAttachment(name: string): Promise<VolumeAttachment | undefined>;
}

/** A volume as set up for the pod; a Block one is a device to hand to the containers, not a mount. */
export interface PersistentPath extends VolumePath {
  block?: boolean;
}

const CSI_DIR = 'kubernetes.io~csi';
const LOCAL_DIR = 'kubernetes.io~local-volume';

export class PersistentVolumes {
  readonly #rootDir: string;
  readonly #nodeName: string;
  readonly #sources: ClaimSources;
  readonly #csi: Pick<CsiVolumes, 'stage' | 'publish' | 'unpublish' | 'unstage'> | undefined;
  readonly #volumesAttached: () => string[];
  readonly #inUseChanged: () => void;
  readonly #bindMount: (source: string, target: string, readOnly: boolean) => Promise<void>;
  readonly #log: Logger;
  /** Per pod UID, the unique names of its volumes the node reports in use. */
  readonly #inUse = new Map<string, Set<string>>();
  /** What the last node status sent as volumesInUse (upstream's MarkVolumesAsReportedInUse). */
  #reported = new Set<string>();
  /** Per pod UID, its claim volumes as set up, by volume name (claimMounts). */
  readonly #mounts = new Map<string, Map<string, ClaimMount>>();

  constructor(d: {
    rootDir: string;
    nodeName: string;
    sources: ClaimSources;
    /** undefined: no CSI (tests of the other plugins). */
    csi?: Pick<CsiVolumes, 'stage' | 'publish' | 'unpublish' | 'unstage'>;
    /** The Node's status.volumesAttached names, as the attach/detach controller set them. */
    volumesAttached: () => string[];
    /** The set of volumes in use changed: the node status should be sent now. */
    inUseChanged: () => void;
    bindMount: (source: string, target: string, readOnly: boolean) => Promise<void>;
    log: Logger;
  }) {
    this.#rootDir = d.rootDir;
    this.#nodeName = d.nodeName;
    this.#sources = d.sources;
    this.#csi = d.csi;
    this.#volumesAttached = d.volumesAttached;
    this.#inUseChanged = d.inUseChanged;
    this.#bindMount = d.bindMount;
    this.#log = d.log;
  }

  /** upstream's GetVolumesInUse: the attachable and device-mountable volumes of this node's pods, sorted. */
  volumesInUse(): string[] {
    const all = new Set<string>();
    for (const names of this.#inUse.values()) for (const n of names) all.add(n);
    return [...all].sort();
  }

  /** upstream's MarkVolumesAsReportedInUse: the node status carrying these names was accepted. */
  markReportedInUse(names: string[]): void {
    this.#reported = new Set(names);
  }

  /** The pod's claim volumes as set up, for their stats (src/stats/claim-volumes.ts); [] once released. */
  claimMounts(uid: string): ClaimMount[] {
    return [...(this.#mounts.get(uid)?.values() ?? [])];
  }

  #use(uid: string, name: string): void {
    let names = this.#inUse.get(uid);
    if (!names) this.#inUse.set(uid, (names = new Set()));
    if (names.has(name)) return;
    names.add(name);
    this.#inUseChanged();
  }

  /** Sets up the pod's claim volume v; throws with upstream's message while it cannot be. */
  async setUp(pod: Pod, v: Volume): Promise<PersistentPath> {
    const ns = pod.metadata!.namespace!;
    const uid = pod.metadata!.uid!;
    const ref = claimOf(pod, v)!;
    const fail = (what: string, e: unknown) => new Error(`error processing PVC ${ns}/${ref.claimName}: ${what}: ${(e as Error).message}`);
    const pvc = await this.#sources.claim(ns, ref.claimName).catch((e) => {
      throw fail('failed to fetch PVC from API server', e);
    });
    const claimError = claimProblem(pod, pvc, ref);
    if (claimError) throw new Error(claimError);
    const pvName = pvc.spec!.volumeName!;
    const pv = await this.#sources.volume(pvName).catch((e) => {
      throw fail(`failed to fetch PV ${pvName} from API server`, e);
    });
    const problem = volumeProblem(pod, pvc, pv, ref) ?? volumeModeProblem(v.name, pv, podVolumeUsage(pod));
    if (problem) throw new Error(problem);
    const unique = uniqueVolumeName(pv);
    if (unique) this.#use(uid, unique);
    const block = pv.spec?.volumeMode === 'Block';
    const fsGroup = pod.spec?.securityContext?.fsGroup;
    const policy = pod.spec?.securityContext?.fsGroupChangePolicy;
    // Once set up, the volume is measured for the Summary (claimMounts).
    const mounted = (set: PersistentPath) => {
      let byName = this.#mounts.get(uid);
      if (!byName) this.#mounts.set(uid, (byName = new Map()));
      byName.set(v.name, claimMount(pod, v, pv, set.path)!);
      return set;
    };
    switch (persistentKind(pv)) {
      case 'hostPath':
        setUpHostPath(pv.spec!.hostPath!);
        return mounted({ path: pv.spec!.hostPath!.path, readOnly: ref.readOnly, block });
      case 'local': {
        // upstream's localVolumeMounter.SetUpAt: a bind mount of the path, owned by fsGroup unless read-only.
        const source = pv.spec!.local!.path;
        if (block) return mounted({ path: source, readOnly: ref.readOnly, block });
        const target = join(this.#rootDir, 'pods', uid, 'volumes', LOCAL_DIR, pvName);
        await this.#bindMount(source, target, ref.readOnly);
        if (fsGroup !== undefined && !ref.readOnly) setVolumeOwnershipUnlessMatching(target, fsGroup, false, policy);
        return mounted({ path: target, readOnly: ref.readOnly });
      }
      case 'csi':
        return mounted(await this.#setUpCsi(pod, pv, ref.readOnly || !!pv.spec!.csi!.readOnly, unique!, block));
    }
    throw new Error(`failed to get Plugin from volumeSpec for volume "${pvName}" err=no volume plugin matched`);
  }

  async #setUpCsi(pod: Pod, pv: PersistentVolume, readOnly: boolean, unique: string, block: boolean): Promise<PersistentPath> {
    if (!this.#csi) throw new Error('CSI volumes are not enabled');
    if (block) throw new Error(`volume ${pv.metadata!.name}: raw block CSI volumes are not supported by kubelet-ts`);
    const src = pv.spec!.csi!;
    const driver = await this.#sources.csiDriver(src.driver);
    const req: CsiVolumeRequest = {
      pv,
      readOnly,
      csiDriver: driver,
      publishContext: await this.#publishContext(src.driver, src.volumeHandle, driver, unique),
      fsGroup: pod.spec?.securityContext?.fsGroup,
    };
    // NodeStageVolume is idempotent (the CSI spec): staged again for each pod, as cheap as
    // upstream's check of its actual state, and right after a restart.
    await this.#csi.stage(req);
    const { path, applyFsGroup } = await this.#csi.publish(pod, req);
    if (applyFsGroup) setVolumeOwnershipUnlessMatching(path, req.fsGroup!, readOnly, pod.spec?.securityContext?.fsGroupChangePolicy);
    return { path, readOnly };
  }

  /**
   * upstream's VerifyControllerAttachedVolume and csiAttacher.WaitForAttach: for a driver that
   * needs attach, the volume is in use as the Node reports it, attached as the Node says, and
   * its VolumeAttachment attached; the attachment's metadata is the publish context.
   */
  async #publishContext(
    driverName: string,
    handle: string,
    driver: CSIDriver | undefined,
    unique: string,
  ): Promise<Record<string, string>> {
    if (driver?.spec?.attachRequired === false) return {};
    if (!this.#reported.has(unique)) throw new Error(`Volume has not been added to the list of VolumesInUse in the node's volume status`);
    if (!this.#volumesAttached().includes(unique)) throw new Error('Volume not attached according to node status');
    const name = attachmentName(handle, driverName, this.#nodeName);
    const va = await this.#sources.volumeAttachment(name);
    if (!va) throw new Error(`volumeattachment ${name} not found`);
    const err = va.status?.attachError;
    if (err) throw new Error(`attachment for ${handle} failed: ${err.message ?? ''}`);
    if (!va.status?.attached) throw new Error(`volume ${handle} is not attached yet (VolumeAttachment ${name})`);
    return va.status.attachmentMetadata ?? {};
  }

  /** The CSI volumes published into the pod's directory, by the vol_data.json beside each. */
  #published(uid: string): { specName: string; driverName: string; volumeHandle: string }[] {
    const dir = join(this.#rootDir, 'pods', uid, 'volumes', CSI_DIR);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return [];
    }
    return names.flatMap((specName) => {
      try {
        const data = JSON.parse(readFileSync(volDataPath(join(dir, specName, 'mount')), 'utf8')) as Record<string, string>;
        return data.driverName && data.volumeHandle ? [{ specName, driverName: data.driverName, volumeHandle: data.volumeHandle }] : [];
      } catch {
        return [];
      }
    });
  }

  /** Whether a pod other than exceptUID has the volume published. */
  #publishedElsewhere(exceptUID: string, driverName: string, volumeHandle: string): boolean {
    let pods: string[];
    try {
      pods = readdirSync(join(this.#rootDir, 'pods'));
    } catch {
      return false;
    }
    return pods.some(
      (uid) => uid !== exceptUID && this.#published(uid).some((p) => p.driverName === driverName && p.volumeHandle === volumeHandle),
    );
  }

  /**
   * upstream's TearDown and UnmountDevice of the pod's CSI volumes: each is unpublished, and
   * unstaged once no other pod has it; then the pod's volumes leave volumesInUse. Throws when a
   * driver fails or is not registered, and the caller keeps the pod's directory for a retry.
   */
  async release(uid: string): Promise<void> {
    this.#mounts.delete(uid);
    for (const p of this.#published(uid)) {
      if (!this.#csi) throw new Error(`CSI volume ${p.specName} is published but CSI is not enabled`);
      await this.#csi.unpublish(uid, p.specName);
      this.#log.info('UnmountVolume.TearDown succeeded', { podUID: uid, volume: p.specName, driver: p.driverName });
      if (this.#publishedElsewhere(uid, p.driverName, p.volumeHandle)) continue;
      await this.#csi.unstage(deviceMountPath(this.#rootDir, p.driverName, p.volumeHandle));
      this.#log.info('UnmountDevice succeeded', { driver: p.driverName, volumeHandle: p.volumeHandle });
    }
    if (this.#inUse.delete(uid)) this.#inUseChanged();
  }
}
