// The DRA manager (upstream's cm/dra Manager): before a pod's sandbox is created, each of its
// ResourceClaims is prepared by the drivers of its allocation (NodePrepareResources, one call
// per driver for all the pod's claims it serves); its containers then get the CDI devices the
// drivers returned; when the last pod on this node using a claim is gone, the drivers unprepare
// it. What is prepared, and for which pods, is checkpointed for a restarted kubelet; a loop
// unprepares the claims of pods that went away without it (upstream's reconcileLoop).
import type { Container, Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import type { ApiClient } from '../apiserver/client.ts';
import { apiPath } from '../apiserver/paths.ts';
import type { Logger } from '../log/log.ts';
import {
  type ClaimInfo,
  claimInfoFor,
  claimKey,
  claimName,
  claimsInUse,
  podClaimNames,
  podResourceClaims,
  type ResourceClaim,
} from './claims.ts';
import { readCheckpoint, writeCheckpoint } from './checkpoint.ts';
import { cdiDevicesOf, containerClaimRequests } from './container.ts';
import type { Claim } from './generated/k8s/io/kubelet/pkg/apis/dra/v1/Claim.ts';
import type { DraPlugin } from './plugin-client.ts';
import { type HealthInfo, healthOf, podsUsing, type ReportedHealth, updateHealth, withAllocatedResourcesStatus } from './health.ts';

/** upstream's defaultReconcilePeriod. */
const RECONCILE_MS = 60_000;

export interface DraManagerDeps {
  /** The kubelet's root directory: the checkpoint's (upstream's stateFileDirectory). */
  rootDir: string;
  api: Pick<ApiClient, 'get'>;
  /** The registered drivers' plugins (plugins.ts); throws when the driver is not registered. */
  plugins: { get(driver: string): DraPlugin };
  log: Logger;
  /** UIDs of the pods admitted and not terminated (upstream's activePods). */
  activePods: () => Iterable<string>;
  /** The pod sources have all been listed: claims of pods not among the active ones may go. */
  sourcesReady: () => boolean;
  /** The health of these pods' devices changed: their statuses are to be generated again. */
  podsChanged?: (uids: string[]) => void;
  /** Each PrepareResources and UnprepareResources of a pod, timed (dra_operations_duration_seconds). */
  observe?: (operation: 'PrepareResources' | 'UnprepareResources', seconds: number, isError: boolean) => void;
}

/** Driver name -> the claims it is asked about in one call. */
type Batches = Map<string, Claim[]>;

export class DraManager {
  readonly #d: DraManagerDeps;
  /** upstream's claimInfoCache, by namespace/name. */
  readonly #claims = new Map<string, ClaimInfo>();
  /** upstream's healthInfoCache (not checkpointed: a restarted kubelet hears it again from the streams). */
  readonly #health: HealthInfo = new Map();
  #timer?: NodeJS.Timeout;

  constructor(d: DraManagerDeps) {
    this.#d = d;
  }

  /** upstream's HandleWatchResourcesStream, for one message: the pods whose devices changed health get a new status. */
  update(driver: string, devices: ReportedHealth[]): void {
    const changed = updateHealth(this.#health, driver, devices, Date.now());
    if (!changed.length) return;
    const pods = [...podsUsing(this.#claims.values(), driver, changed)];
    this.#d.log.v(4, 'Health info changed', { driverName: driver, changedDevicesCount: changed.length, pods });
    if (pods.length) this.#d.podsChanged?.(pods);
  }

  /** The driver's health stream ended (upstream's clearDriver). */
  ended(driver: string): void {
    this.#health.delete(driver);
  }

  /** upstream's UpdateAllocatedResourcesStatus: the health of each container's claimed devices in its status. */
  allocatedResourcesStatus(pod: Pod, status: PodStatus): PodStatus {
    const now = Date.now();
    return withAllocatedResourcesStatus(
      pod,
      status,
      (namespace, name) => this.#claims.get(claimKey(namespace, name)),
      (driver, pool, device) => healthOf(this.#health, driver, pool, device, now),
    );
  }

  /**
   * The checkpoint, then the reconcile loop. Unlike upstream, where a corrupt checkpoint stops the
   * kubelet, it is logged and the manager starts empty (and overwrites it at the next change).
   */
  start(): void {
    try {
      const claims = readCheckpoint(this.#d.rootDir);
      if (claims) for (const c of claims) this.#claims.set(claimKey(c.namespace, c.claimName), c);
      // upstream's GetOrCreate: an empty one when there is none.
      else this.#checkpoint();
    } catch (e) {
      this.#d.log.error('Failed to read or create the DRA checkpoint, starting without the claims it held', { err: e });
    }
    this.#timer = setInterval(() => void this.#reconcile(), RECONCILE_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** upstream's PrepareResources: all of the pod's claims prepared, or an error for an Event. */
  async prepareResources(pod: Pod): Promise<void> {
    await this.#timed('PrepareResources', () => this.#prepare(pod)).catch((e: Error) => {
      throw new Error(`prepare dynamic resources: ${e.message}`);
    });
  }

  /** The claims prepared here, by driver and in all (dra_resource_claims_in_use, read at scrape). */
  claimsInUse(): Record<string, number> {
    return claimsInUse(this.#claims.values());
  }

  /** As upstream's PrepareResources and UnprepareResources time every call, a pod without claims too. */
  async #timed(operation: 'PrepareResources' | 'UnprepareResources', run: () => Promise<void>): Promise<void> {
    const t0 = performance.now();
    let failed = true;
    try {
      await run();
      failed = false;
    } finally {
      this.#d.observe?.(operation, (performance.now() - t0) / 1000, failed);
    }
  }

  async #prepare(pod: Pod): Promise<void> {
    const uid = pod.metadata!.uid!;
    const namespace = pod.metadata!.namespace!;
    // A validation pass that changes nothing: a pod failing it can be deleted without an unprepare
    // (for a driver that may never have been on this node).
    const checked: { info: ClaimInfo; plugins: Map<string, DraPlugin> }[] = [];
    for (const podClaim of podResourceClaims(pod)) {
      this.#d.log.v(3, 'Processing resource', { pod: `${namespace}/${pod.metadata!.name}`, podClaim: podClaim.name });
      const { name, mustCheckOwner } = claimName(pod, podClaim);
      if (name === undefined) continue;
      const claim = await this.#d.api
        .get<ResourceClaim>(apiPath({ group: 'resource.k8s.io', resource: 'resourceclaims', namespace, name }))
        .catch((e: Error) => {
          throw new Error(`fetch ResourceClaim ${name}: ${e.message}`);
        });
      const info = claimInfoFor(pod, claim, mustCheckOwner);
      // The drivers must be here even for a claim prepared already: something is wrong with the node otherwise.
      const plugins = new Map([...info.drivers.keys()].map((driver) => [driver, this.#d.plugins.get(driver)]));
      checked.push({ info, plugins });
    }

    // Now the pod is recorded on its claims, checkpointed before any driver is called: a pod
    // deleted meanwhile is unprepared by the reconcile loop.
    const batches: Batches = new Map();
    const plugins = new Map<string, DraPlugin>();
    const toPrepare = new Map<string, ClaimInfo>();
    for (const { info: fresh, plugins: mine } of checked) {
      const key = claimKey(fresh.namespace, fresh.claimName);
      const info = this.#claims.get(key) ?? fresh;
      if (info.claimUID !== fresh.claimUID)
        throw new Error(
          `old ResourceClaim with same name ${fresh.claimName} and different UID ${info.claimUID} still exists (previous pod force-deleted?!)`,
        );
      this.#claims.set(key, info);
      info.podUIDs.add(uid);
      this.#checkpoint();
      if (info.prepared) continue;
      toPrepare.set(info.claimUID, info);
      for (const [driver, plugin] of mine) {
        plugins.set(driver, plugin);
        batches.set(driver, [...(batches.get(driver) ?? []), { namespace: info.namespace, uid: info.claimUID, name: info.claimName }]);
      }
    }

    for (const [driver, claims] of batches) {
      const response = await plugins
        .get(driver)!
        .nodePrepareResources(claims)
        .catch((e: Error) => {
          throw new Error(`NodePrepareResources: ${e.message}`);
        });
      for (const [claimUID, result] of Object.entries(response.claims)) {
        const claim = claims.find((c) => c.uid === claimUID);
        if (!claim) throw new Error(`NodePrepareResources returned result for unknown claim UID ${claimUID}`);
        if (result.error) throw new Error(`NodePrepareResources failed for ResourceClaim ${claim.name}: ${result.error}`);
        // Replaced, not appended as upstream: a retry after a failure does not list a device twice.
        toPrepare.get(claimUID)!.drivers.set(
          driver,
          result.devices.map((d) => ({
            poolName: d.poolName,
            deviceName: d.deviceName,
            ...(d.shareId !== undefined ? { shareId: d.shareId } : {}),
            requestNames: d.requestNames,
            cdiDeviceIds: d.cdiDeviceIds,
          })),
        );
      }
      const unfinished = claims.length - Object.keys(response.claims).length;
      if (unfinished !== 0) throw new Error(`NodePrepareResources skipped ${unfinished} ResourceClaims`);
    }
    for (const info of toPrepare.values()) info.prepared = true;
    // Nothing prepared, nothing to write: a pod with no claim starts on a full disk too.
    if (toPrepare.size > 0) this.#checkpoint();
  }

  /**
   * upstream's UnprepareResources, once the pod's containers are stopped and before its final
   * status: its claims no other pod here uses are unprepared. Idempotent.
   */
  async unprepareResources(pod: Pod): Promise<void> {
    await this.#timed('UnprepareResources', () => this.#unprepare(pod.metadata!.uid!, pod.metadata!.namespace!, podClaimNames(pod))).catch(
      (e: Error) => {
        throw new Error(`unprepare dynamic resources: ${e.message}`);
      },
    );
  }

  async #unprepare(uid: string, namespace: string, names: string[]): Promise<void> {
    const batches: Batches = new Map();
    const toUnprepare = new Map<string, ClaimInfo>();
    let released = false;
    for (const name of names) {
      const info = this.#claims.get(claimKey(namespace, name));
      // Unlike upstream, a claim this pod never got onto (its prepare failed) is left to the pod that did.
      if (!info?.podUIDs.has(uid)) continue;
      // Checkpointed below, only once all went well: a restarted kubelet does it again.
      if (info.podUIDs.size > 1) {
        info.podUIDs.delete(uid);
        released = true;
        continue;
      }
      toUnprepare.set(info.claimUID, info);
      for (const driver of info.drivers.keys())
        batches.set(driver, [...(batches.get(driver) ?? []), { namespace, uid: info.claimUID, name: info.claimName }]);
    }
    for (const [driver, claims] of batches) {
      const response = await this.#d.plugins
        .get(driver)
        .nodeUnprepareResources(claims)
        .catch((e: Error) => {
          throw new Error(`NodeUnprepareResources: ${e.message}`);
        });
      for (const [claimUID, result] of Object.entries(response.claims)) {
        const claim = claims.find((c) => c.uid === claimUID);
        if (!claim) throw new Error(`NodeUnprepareResources returned result for unknown claim UID ${claimUID}`);
        if (result.error) throw new Error(`NodeUnprepareResources failed for ResourceClaim ${claim.name}: ${result.error}`);
      }
      const unfinished = claims.length - Object.keys(response.claims).length;
      if (unfinished !== 0) throw new Error(`NodeUnprepareResources skipped ${unfinished} ResourceClaims`);
    }
    for (const info of toUnprepare.values()) this.#claims.delete(claimKey(info.namespace, info.claimName));
    // Unlike upstream's syncToCheckpoint after every pod, only a change is written: a pod with no
    // claim here then stops on a full disk too (make chaos filled the root dir and such pods hung
    // in termination on ENOSPC).
    if (released || toUnprepare.size > 0) this.#checkpoint();
  }

  /** upstream's GetResources: the container's CDI devices (fully qualified names), for its CRI config. */
  cdiDevices(pod: Pod, c: Container): string[] {
    const namespace = pod.metadata!.namespace!;
    const out: string[] = [];
    for (const [name, requests] of containerClaimRequests(pod, c)) {
      const info = this.#claims.get(claimKey(namespace, name));
      if (!info) throw new Error(`internal error: unable to get claim info for ResourceClaim ${name} in namespace ${namespace}`);
      for (const request of requests) out.push(...cdiDevicesOf(info, request));
    }
    return out;
  }

  /** upstream's reconcileLoop: the claims of pods no longer active are unprepared (once the sources are listed). */
  async #reconcile(): Promise<void> {
    if (!this.#d.sourcesReady()) return;
    const active = new Set(this.#d.activePods());
    const inactive = new Map<string, { namespace: string; names: string[] }>();
    for (const info of this.#claims.values())
      for (const uid of info.podUIDs) {
        if (active.has(uid)) continue;
        const pod = inactive.get(uid) ?? { namespace: info.namespace, names: [] };
        pod.names.push(info.claimName);
        inactive.set(uid, pod);
      }
    for (const [uid, pod] of inactive)
      await this.#unprepare(uid, pod.namespace, pod.names).catch((e: unknown) =>
        this.#d.log.info('Unpreparing pod resources in reconcile loop failed, will retry', { podUID: uid, err: e }),
      );
  }

  /** upstream's syncToCheckpoint: a claim the kubelet cannot remember is not prepared. */
  #checkpoint(): void {
    try {
      writeCheckpoint(this.#d.rootDir, this.#claims.values());
    } catch (e) {
      throw new Error(`checkpoint ResourceClaim state: ${(e as Error).message}`);
    }
  }
}
