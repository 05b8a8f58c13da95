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
import type { Pod, Volume } from 'kubernetes-types/core/v1.js';
import type { ClaimSources } from './sources.ts';
import type { Logger } from '../log/log.ts';
import type { CsiVolumes } from '../csi/volumes.ts';
import {
  type ClaimMount,
  claimMount,
  claimOf,
  claimProblem,
  podVolumeUsage,
  uniqueVolumeName,
  volumeModeProblem,
  volumeProblem,
} from './claims.ts';
import { type PersistentPath, findPlugin } from './plugins/plugin.ts';
import type { PersistentHost } from './plugins/persistent-host.ts';
import { persistentVolumePlugins } from './plugins/registry.ts';

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
    this.#sources = d.sources;
    this.#inUseChanged = d.inUseChanged;
    this.#host = {
      rootDir: d.rootDir,
      nodeName: d.nodeName,
      sources: d.sources,
      csi: d.csi,
      volumesAttached: d.volumesAttached,
      reportedInUse: (unique) => this.#reported.has(unique),
      bindMount: d.bindMount,
      log: d.log,
    };
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
    const plugin = findPlugin(persistentVolumePlugins, { volume: v, pv, readOnly: ref.readOnly });
    if (!plugin) throw new Error(`failed to get Plugin from volumeSpec for volume "${pvName}" err=no volume plugin matched`);
    const set = await plugin.setUp(this.#host, pod, { volume: v, pv, readOnly: ref.readOnly });
    // Once set up, the volume is measured for the Summary (claimMounts).
    let byName = this.#mounts.get(uid);
    if (!byName) this.#mounts.set(uid, (byName = new Map()));
    byName.set(v.name, claimMount(pod, v, pv, set.path)!);
    return set;
  }

  /**
   * upstream's TearDown of the pod's claim volumes: each PV plugin releases what it holds (CSI
   * unpublish and unstage), then the pod's volumes leave volumesInUse. Throws when a driver fails
   * or is not registered, and the caller keeps the pod's directory for a retry.
   */
  async release(uid: string): Promise<void> {
    this.#mounts.delete(uid);
    for (const plugin of persistentVolumePlugins) await plugin.tearDown?.(this.#host, uid);
    if (this.#inUse.delete(uid)) this.#inUseChanged();
  }
}
