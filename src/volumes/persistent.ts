// A pod's persistentVolumeClaim and generic ephemeral volumes: the claim is read, its bound
// PersistentVolume checked (claims.ts), and the PV set up by its plugin: hostPath (the path),
// local (bind-mounted into the pod's volume directory; a Block one handed to the containers as
// a device) or CSI (src/csi: wait for the VolumeAttachment when the driver needs attach, stage
// once per node, publish per pod); the PV's plugin is found in plugins/registry.ts's
// persistentVolumePlugins. Which volumes the node uses is reported in the Node's
// status.volumesInUse, so that the attach/detach controller leaves them attached; as upstream,
// an attachable volume is not mounted before that report went out. Teardown reads what was
// published from disk (vol_data.json), so a restarted kubelet unpublishes and unstages what the
// previous one left.
import type { PersistentVolume, PersistentVolumeClaim, Pod, Volume } from 'kubernetes-types/core/v1.js';
import { NodeExpandError } from '../csi/errors.ts';
import { podRef, type Recorder } from '../events/recorder.ts';
import { markFailedPatch, markFinishedPatch, markInProgressPatch, nodeExpansionDecision } from './expansion.ts';
import { join } from 'node:path';
import { blockGlobalMapPath } from '../csi/paths.ts';
import type { ClaimSources } from './sources.ts';
import type { Logger } from '../log/log.ts';
import { type BlockDeviceOps, hostBlockDeviceOps } from '../mount/block-device.ts';
import {
  type ClaimMount,
  claimMount,
  claimOf,
  claimProblem,
  podVolumeUsage,
  readWriteOncePodProblem,
  uniqueVolumeName,
  volumeModeProblem,
  volumeProblem,
} from './claims.ts';
import { type PersistentPath, findPlugin } from './plugins/plugin.ts';
import { qualifiedPluginName, type VolumeOperationObserver } from './volume-metrics.ts';
import type { PersistentHost } from './plugins/persistent-host.ts';
import { persistentVolumePlugins } from './plugins/registry.ts';
import { parseQuantity } from '../resources/quantity.ts';
import type { ClaimStatusPatch } from './expansion.ts';

const claimRef = (pvc: PersistentVolumeClaim) => ({
  kind: 'PersistentVolumeClaim',
  apiVersion: 'v1',
  namespace: pvc.metadata?.namespace,
  name: pvc.metadata?.name,
  uid: pvc.metadata?.uid,
});

/** The API objects persistent volumes are made of (src/volumes/sources.ts reads them). */
/** A volume as set up for the pod (plugins/plugin.ts). */
export type { PersistentPath };

export class PersistentVolumes {
  readonly #sources: ClaimSources;
  readonly #inUseChanged: () => void;
  /** What the PVs' plugins are handed (plugins/persistent-host.ts). */
  readonly #host: PersistentHost;
  /** Per pod UID, the unique names of its volumes the node reports in use. */
  readonly #inUse = new Map<string, Set<string>>();
  /** What the last node status sent as volumesInUse (upstream's MarkVolumesAsReportedInUse). */
  #reported = new Set<string>();
  /** Per pod UID, its claim volumes as set up, by volume name (claimMounts). */
  readonly #mounts = new Map<string, Map<string, ClaimMount>>();
  readonly #observe?: VolumeOperationObserver;
  /** Each pod's claim volumes by the qualified name of their PV's plugin, once resolved (volume_manager_total_volumes). */
  readonly #plugins = new Map<string, Map<string, string>>();
  /** Per volume (unique name), what node expansion knows of it: upstream's ASW persistentVolumeSize and expansion errors. */
  readonly #expansion = new Map<string, { size?: number; finalError?: boolean; inUseError?: boolean }>();
  /** Per volume (unique name), its PersistentVolume as last set up: what UnmountDevice needs once no pod has it. */
  readonly #volumes = new Map<string, PersistentVolume>();
  /** Per volume (unique name), the pods it is set up for (upstream's ASW mountedPods, for IsVolumeMountedElsewhere). */
  readonly #mountedBy = new Map<string, Set<string>>();
  readonly #events?: Recorder;
  readonly #log: Logger;
  readonly #now: () => Date;
  readonly #attachRequired: (driver: string) => boolean;

  constructor(d: {
    rootDir: string;
    nodeName: string;
    sources: ClaimSources;
    /** undefined: no CSI (tests of the other plugins). */
    csi?: PersistentHost['csi'];
    /** Raw block volumes' bind mounts and loop devices; the host's by default. */
    blockDevices?: BlockDeviceOps;
    /** The Node's status.volumesAttached names, as the attach/detach controller set them. */
    volumesAttached: () => string[];
    /** enableControllerAttachDetach (true by default): false, the kubelet attaches CSI volumes itself. */
    controllerAttachDetach?: boolean;
    /**
     * Whether a CSI driver needs attach now (its CSIDriver's attachRequired; true without one or
     * before the CSIDriver watch answered): a driver that stops needing it takes its volumes out of
     * volumesInUse, so that the attach/detach controller deletes their VolumeAttachments.
     */
    attachRequired?: (driver: string) => boolean;
    /** The set of volumes in use changed: the node status should be sent now. */
    inUseChanged: () => void;
    bindMount: (source: string, target: string, readOnly: boolean) => Promise<void>;
    /** A VolumeAttachment failed: ResourceExhausted refreshes the driver's allocatable count (src/csi/node-updater.ts). */
    resourceExhausted?: PersistentHost['resourceExhausted'];
    log: Logger;
    /** Node expansion's events (FileSystemResizeSuccessful) on the pod and its claim. */
    events?: Recorder;
    now?: () => Date;
    /** Online expansions, for storage_operation_duration_seconds (volume_fs_resize). */
    observe?: VolumeOperationObserver;
    /** flexVolume PersistentVolumes (plugins/flexvolume); undefined: refused. */
    flex?: PersistentHost['flex'];
  }) {
    this.#observe = d.observe;
    this.#attachRequired = d.attachRequired ?? (() => true);
    this.#sources = d.sources;
    this.#events = d.events;
    this.#log = d.log;
    this.#now = d.now ?? (() => new Date());
    this.#inUseChanged = d.inUseChanged;
    this.#host = {
      rootDir: d.rootDir,
      nodeName: d.nodeName,
      sources: d.sources,
      csi: d.csi,
      controllerAttachDetach: d.controllerAttachDetach ?? true,
      volumesAttached: d.volumesAttached,
      reportedInUse: (unique) => this.#reported.has(unique),
      bindMount: d.bindMount,
      resourceExhausted: d.resourceExhausted,
      blockDevices: d.blockDevices ?? hostBlockDeviceOps,
      flex: d.flex,
      log: d.log,
    };
  }

  /**
   * upstream's GetVolumesInUse: the attachable volumes of this node's pods, sorted; a CSI volume
   * only while its driver needs attach (the populator's MarkVolumeAttachability when a CSIDriver
   * changes to attachRequired: false).
   */
  volumesInUse(): string[] {
    const all = new Set<string>();
    for (const names of this.#inUse.values()) for (const n of names) all.add(n);
    return [...all].filter((n) => reportedInUse(this.#volumes.get(n), this.#attachRequired)).sort();
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

  /** The claim of the pod's volume v and its bound PersistentVolume, checked; throws with upstream's message. */
  async #bound(pod: Pod, v: Volume) {
    const ns = pod.metadata!.namespace!;
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
    return { ref, pvc, pv };
  }

  /**
   * The qualified name of the plugin of the PV the pod's claim volume is bound to, once a set-up
   * resolved it (upstream's populator puts a claim in the desired state of world once it resolved it).
   */
  pluginName(uid: string, volume: string): string | undefined {
    return this.#plugins.get(uid)?.get(volume);
  }

  /** Sets up the pod's claim volume v; throws with upstream's message while it cannot be. */
  async setUp(pod: Pod, v: Volume, o: { remount?: boolean } = {}): Promise<PersistentPath> {
    const uid = pod.metadata!.uid!;
    const { ref, pvc, pv } = await this.#bound(pod, v);
    const unique = uniqueVolumeName(pv);
    if (unique) {
      this.#use(uid, unique);
      this.#volumes.set(unique, pv);
    }
    const plugin = findPlugin(persistentVolumePlugins, { volume: v, pv, readOnly: ref.readOnly });
    if (!plugin) throw new Error(`failed to get Plugin from volumeSpec for volume "${pv.metadata!.name}" err=no volume plugin matched`);
    let plugins = this.#plugins.get(uid);
    if (!plugins) this.#plugins.set(uid, (plugins = new Map()));
    plugins.set(v.name, qualifiedPluginName(plugin.name, { volume: v, pv }));
    const elsewhere = [...(this.#mountedBy.get(unique ?? '') ?? [])].some((other) => other !== uid);
    const rwop = readWriteOncePodProblem(pv, elsewhere);
    if (rwop) throw new Error(rwop);
    const set = await plugin.setUp(this.#host, pod, { volume: v, pv, readOnly: ref.readOnly, remount: o.remount });
    if (unique) {
      let pods = this.#mountedBy.get(unique);
      if (!pods) this.#mountedBy.set(unique, (pods = new Set()));
      pods.add(uid);
    }
    // upstream's expandVolumeDuringMount: a claim resized while no pod had it is expanded before
    // the pod starts (offline expansion); a failure fails the mount, to be tried again.
    await this.#expand(pod, v, pvc, pv, ref.readOnly).catch((e: Error) => {
      throw new Error(`MountVolume.Setup failed while expanding volume: ${e.message}`);
    });
    // Once set up, the volume is measured for the Summary (claimMounts).
    let byName = this.#mounts.get(uid);
    if (!byName) this.#mounts.set(uid, (byName = new Map()));
    // upstream's csiBlockMapper measures a raw block CSI volume at its bind-mounted device, GLOBALMAP/PODUID.
    const measured = set.block && pv.spec?.csi ? join(blockGlobalMapPath(this.#host.rootDir, pv.metadata!.name!), uid) : set.path;
    byName.set(v.name, claimMount(pod, v, pv, measured, set.statfsMetrics)!);
    return set;
  }

  /**
   * upstream's online expansion (the reconciler's ExpandInUseVolume): the set-up claim volume v is
   * expanded on the node when its PersistentVolume grew and the resizer handed the expansion to
   * the node. Throws with the reason of a failure (the caller's VolumeResizeFailed event).
   */
  async resize(pod: Pod, v: Volume): Promise<void> {
    // Only a volume whose plugin expands on the node costs the two GETs (the others never resize here).
    if (!this.#mounts.get(pod.metadata!.uid!)?.get(v.name)?.csi) return;
    const { ref, pvc, pv } = await this.#bound(pod, v);
    const started = performance.now();
    let attempted = true;
    let ok = false;
    try {
      attempted = await this.#expand(pod, v, pvc, pv, ref.readOnly);
      ok = true;
    } finally {
      // upstream's GenerateExpandInUseVolumeFunc runs only when an expansion is due: volume_fs_resize.
      const plugin = this.pluginName(pod.metadata!.uid!, v.name);
      if (attempted && plugin)
        this.#observe?.({ plugin, operation: 'volume_fs_resize', seconds: (performance.now() - started) / 1000, ok });
    }
  }

  /**
   * upstream's nodeExpandVolume and NodeExpander.expandOnPlugin, by nodeExpansionDecision (expansion.ts).
   * Whether the node expansion was attempted (an operation of its own online: volume_fs_resize).
   */
  async #expand(pod: Pod, v: Volume, pvc: PersistentVolumeClaim, pv: PersistentVolume, readOnly: boolean): Promise<boolean> {
    const spec = { volume: v, pv, readOnly };
    const plugin = findPlugin(persistentVolumePlugins, spec);
    // upstream's FindNodeExpandablePluginBySpec: only CSI expands on the node.
    if (!plugin?.nodeExpand) return false;
    const key = uniqueVolumeName(pv) ?? pv.metadata!.name!;
    let state = this.#expansion.get(key);
    if (!state) this.#expansion.set(key, (state = {}));
    // upstream's InitializeClaimSize: the node's size of the volume starts as the claim's status says
    // when first seen, and moves only with this node's expansions (MarkVolumeAsResized), so that an
    // RWX volume expanded on another node is expanded here too.
    state.size ??= parseQuantity(pvc.status?.capacity?.storage ?? '') || undefined;
    const d = nodeExpansionDecision({
      pvc,
      pv,
      readOnly,
      nodeSize: state.size,
      finalError: state.finalError,
      inUseError: state.inUseError,
    });
    const logRef = { pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`, volume: v.name, pv: pv.metadata!.name };
    if (d.action === 'none') return false;
    if (d.action === 'wait') {
      this.#log.v(3, 'NodeExpandVolume is not allowed to proceed', { ...logRef, resizeStatus: d.resizeStatus });
      return false;
    }
    if (d.action === 'assumeDone') {
      state.size = d.newSize;
      return false;
    }
    const newQuantity = String((d.recovery ? pvc.status?.allocatedResources?.storage : pv.spec?.capacity?.storage) ?? d.newSize);
    let claim = pvc;
    if (d.recovery && !d.pvcAlreadyUpdated)
      claim = await this.#patchClaim(claim, markInProgressPatch(claim)).catch((e: Error) => {
        throw new Error(`MountVolume.NodeExpandVolume failed to mark node expansion in progress: ${e.message}`);
      });
    try {
      await plugin.nodeExpand(this.#host, pod, spec, d.newSize);
    } catch (e) {
      const err = e instanceof NodeExpandError ? e : new NodeExpandError((e as Error).message, 'final', { cause: e });
      if (err.kind === 'notSupported' && (!d.recovery || d.pvcAlreadyUpdated)) {
        this.#log.v(4, 'MountVolume.NodeExpandVolume failed: NodeExpandVolume not supported', logRef);
        state.size = d.newSize;
        return true;
      }
      if (d.recovery && err.kind !== 'transient') {
        state.finalError = true;
        const infeasible = err.kind === 'infeasible' || d.infeasibleOnFailure;
        await this.#patchClaim(
          claim,
          markFailedPatch(
            claim,
            err.message,
            infeasible,
            this.#now()
              .toISOString()
              .replace(/\.\d+Z$/, 'Z'),
          ),
        ).catch((pe: Error) =>
          this.#log.error('MountVolume.NodeExpandVolume failed to mark node expansion as failed', { ...logRef, err: pe.message }),
        );
      }
      // FailedPrecondition: the driver cannot expand it in use; the mount goes on, no retry here.
      if (err.kind === 'inUse') {
        state.inUseError = true;
        this.#log.error('MountVolume.NodeExpandVolume failed', { ...logRef, err: err.message });
        return true;
      }
      throw err;
    }
    const message = `MountVolume.NodeExpandVolume succeeded for volume "${v.name}" ${pod.spec?.nodeName ?? ''}`.trimEnd();
    this.#events?.event(podRef(pod), 'Normal', 'FileSystemResizeSuccessful', message);
    this.#events?.event(claimRef(claim), 'Normal', 'FileSystemResizeSuccessful', message);
    this.#log.info(message, logRef);
    const pvcSize = parseQuantity(pvc.status?.capacity?.storage ?? 0) ?? 0;
    if (d.recovery ? !d.pvcAlreadyUpdated : pvcSize < d.newSize)
      await this.#patchClaim(claim, markFinishedPatch(claim, newQuantity)).catch((e: Error) => {
        throw new Error(`mountVolume.NodeExpandVolume update pvc status failed: ${e.message}`);
      });
    state.size = d.newSize;
    return true;
  }

  #patchClaim(pvc: PersistentVolumeClaim, patch: ClaimStatusPatch): Promise<PersistentVolumeClaim> {
    if (!this.#sources.patchClaimStatus) return Promise.reject(new Error('the PVC status cannot be patched'));
    return this.#sources.patchClaimStatus(pvc.metadata!.namespace!, pvc.metadata!.name!, patch);
  }

  /**
   * upstream's TearDown of the pod's claim volumes: each PV plugin releases what it holds (CSI
   * unpublish and unstage), then the pod's volumes leave volumesInUse. Throws when a driver fails
   * or is not registered, and the caller keeps the pod's directory for a retry.
   */
  async release(uid: string): Promise<void> {
    this.#mounts.delete(uid);
    this.#plugins.delete(uid);
    for (const plugin of persistentVolumePlugins) await plugin.tearDown?.(this.#host, uid);
    const names = this.#inUse.get(uid) ?? new Set<string>();
    const others = new Set([...this.#inUse].flatMap(([other, n]) => (other === uid ? [] : [...n])));
    for (const n of names) {
      this.#mountedBy.get(n)?.delete(uid);
      if (this.#mountedBy.get(n)?.size === 0) this.#mountedBy.delete(n);
      if (others.has(n)) continue;
      // No pod has the volume any more: a stage that failed uncertainly, with no publish since,
      // is unstaged now (upstream's UnmountDevice of an uncertain device mount); before the volume
      // leaves volumesInUse, so that it is not detached while staged.
      const pv = this.#volumes.get(n);
      if (pv) await findPlugin(persistentVolumePlugins, { volume: { name: n }, pv, readOnly: false })?.unmountDevice?.(this.#host, pv);
      this.#volumes.delete(n);
      // Its expansion state goes with it (upstream's ASW entry).
      this.#expansion.delete(n);
    }
    if (this.#inUse.delete(uid)) this.#inUseChanged();
  }
}

/**
 * Whether a volume goes in volumesInUse: upstream reports only volumes whose plugin is attachable
 * (GetVolumesInUse's PluginIsAttachable), so a CSI volume while its driver needs attach, and never
 * a local one (the local plugin is device-mountable, not attachable).
 */
export function reportedInUse(pv: PersistentVolume | undefined, attachRequired: (driver: string) => boolean): boolean {
  const driver = pv?.spec?.csi?.driver;
  return !!driver && attachRequired(driver);
}
