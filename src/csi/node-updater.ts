// MutableCSINodeAllocatableCount (GA and locked on in v1.36): a CSIDriver that sets
// spec.nodeAllocatableUpdatePeriodSeconds has the kubelet ask its driver NodeGetInfo again every
// period and write max_volumes_per_node to the CSINode's drivers[].allocatable.count (upstream's
// csiNodeUpdater, csi_node_updater.go, and updateCSIDriver in csi_plugin.go). One timer per driver
// that is registered on this node and has a period; the CSIDriver objects come from a watch, and a
// registration or deregistration re-evaluates the driver, as upstream's syncDriverUpdater. A
// VolumeAttachment failed with ResourceExhausted also refreshes the count at once (upstream's
// VerifyExhaustedResource).
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import type { Logger } from '../log/log.ts';
import type { NodeInfo } from './client.ts';
import { driverSpec } from './service-account-tokens.ts';

/** gRPC's ResourceExhausted, as the attacher records it in attachError.errorCode. */
const RESOURCE_EXHAUSTED = 8;

/** Pure: upstream's getNodeAllocatableUpdatePeriod, in ms; 0 when unset (no refresh). */
export function allocatableUpdatePeriodMs(driver: CSIDriver | undefined): number {
  const s = driverSpec(driver)?.nodeAllocatableUpdatePeriodSeconds;
  return s && s > 0 ? s * 1000 : 0;
}

/**
 * Pure: upstream's syncDriverUpdater over every driver: the drivers that get a periodic update and
 * its period; a driver must be registered on this node, have a CSIDriver object and a period.
 */
export function wantedUpdaters(registered: Iterable<string>, csiDrivers: ReadonlyMap<string, CSIDriver>): Map<string, number> {
  const wanted = new Map<string, number>();
  for (const name of registered) {
    const period = allocatableUpdatePeriodMs(csiDrivers.get(name));
    if (period > 0) wanted.set(name, period);
  }
  return wanted;
}

/**
 * Pure: what changes between the running updaters and the wanted ones: a new driver or a changed
 * period (re)starts, a driver no longer wanted stops (upstream's onDriverUpdate reconfigures only
 * when the period changed).
 */
export function updaterPlan(
  running: ReadonlyMap<string, number>,
  wanted: ReadonlyMap<string, number>,
): { start: [string, number][]; stop: string[] } {
  return {
    start: [...wanted].filter(([name, period]) => running.get(name) !== period),
    stop: [...running.keys()].filter((name) => !wanted.has(name)),
  };
}

/**
 * A mount waits on an attachment that failed with ResourceExhausted, of a driver whose allocatable
 * count the kubelet refreshes: upstream's VerifyExhaustedResource said true, and the pod is
 * rejected (VolumeAttachmentLimitExceeded) once its volumes' wait timed out.
 */
export class AttachLimitExceededError extends Error {}

/** Pure: upstream's isResourceExhaustError: the attacher failed the attachment with ResourceExhausted. */
export function isResourceExhausted(va: VolumeAttachment | undefined): boolean {
  // attachError.errorCode (v1.34+) is newer than kubernetes-types.
  return (va?.status?.attachError as { errorCode?: number } | undefined)?.errorCode === RESOURCE_EXHAUSTED;
}

export class CsiNodeUpdater {
  readonly #registered: () => Iterable<string>;
  readonly #nodeGetInfo: (driver: string) => Promise<NodeInfo>;
  readonly #updateDriver: (driver: string, info: NodeInfo) => Promise<void>;
  readonly #log: Logger;
  readonly #csiDrivers = new Map<string, CSIDriver>();
  readonly #running = new Map<string, { period: number; timer: NodeJS.Timeout }>();
  /** When a ResourceExhausted attachment last refreshed each driver's count. */
  readonly #exhaustedAt = new Map<string, number>();

  constructor(d: {
    /** The drivers registered on this node (CsiDrivers.names). */
    registered: () => Iterable<string>;
    /** NodeGetInfo of the registered driver (upstream's csiTimeout). */
    nodeGetInfo: (driver: string) => Promise<NodeInfo>;
    /** upstream's nodeInfoManager.UpdateCSIDriver: the driver's CSINode entry. */
    updateDriver: (driver: string, info: NodeInfo) => Promise<void>;
    log: Logger;
  }) {
    this.#registered = d.registered;
    this.#nodeGetInfo = d.nodeGetInfo;
    this.#updateDriver = d.updateDriver;
    this.#log = d.log;
  }

  /** A driver's CSIDriver as the watch last saw it (undefined: none, or no answer yet). */
  csiDriver(name: string): CSIDriver | undefined {
    return this.#csiDrivers.get(name);
  }

  /** The CSIDriver watch's full list. */
  listed(items: CSIDriver[]): void {
    this.#csiDrivers.clear();
    for (const d of items) if (d.metadata?.name) this.#csiDrivers.set(d.metadata.name, d);
    this.sync();
  }

  /** One change the CSIDriver watch saw. */
  event(type: 'ADDED' | 'MODIFIED' | 'DELETED', d: CSIDriver): void {
    const name = d.metadata?.name;
    if (!name) return;
    if (type === 'DELETED') this.#csiDrivers.delete(name);
    else this.#csiDrivers.set(name, d);
    this.sync();
  }

  /** Starts, restarts and stops the per-driver timers as wantedUpdaters says (also at a driver's (de)registration). */
  sync(): void {
    const running = new Map([...this.#running].map(([n, r]) => [n, r.period]));
    const { start, stop } = updaterPlan(running, wantedUpdaters(this.#registered(), this.#csiDrivers));
    for (const name of stop) {
      this.#log.v(4, 'Stopping periodic updates for driver', { driver: name });
      clearInterval(this.#running.get(name)!.timer);
      this.#running.delete(name);
    }
    for (const [name, period] of start) {
      const old = this.#running.get(name);
      if (old) clearInterval(old.timer);
      this.#log.v(4, 'Starting periodic updates for driver', { driver: name, periodMs: period });
      const timer = setInterval(() => void this.update(name), period);
      timer.unref();
      this.#running.set(name, { period, timer });
    }
  }

  /** upstream's updateCSIDriver: NodeGetInfo, then the count on the CSINode; a failure is logged, the next period tries again. */
  async update(driver: string): Promise<void> {
    try {
      const info = await this.#nodeGetInfo(driver).catch((e: Error) => {
        throw new Error(`failed to get NodeGetInfo from driver "${driver}": ${e.message}`);
      });
      await this.#updateDriver(driver, info).catch((e: Error) => {
        throw new Error(`failed to update driver "${driver}": ${e.message}`);
      });
    } catch (e) {
      this.#log.error('Failed to update CSIDriver', { driver, err: (e as Error).message });
    }
  }

  /**
   * upstream's VerifyExhaustedResource: an attachment of the driver failed with ResourceExhausted;
   * when its CSIDriver has a period the count is refreshed now (at most once a period: a pod's
   * mount is retried every few seconds, where upstream checks once its 2-minute wait timed out).
   * Whether the attachment is over the node's limit so.
   */
  resourceExhausted(csiDriver: CSIDriver | undefined, va: VolumeAttachment | undefined, now = Date.now()): boolean {
    const name = csiDriver?.metadata?.name;
    const period = allocatableUpdatePeriodMs(csiDriver);
    if (!name || period === 0 || !isResourceExhausted(va)) return false;
    if (now - (this.#exhaustedAt.get(name) ?? -Infinity) >= period) {
      this.#exhaustedAt.set(name, now);
      this.#log.v(4, 'Detected ResourceExhausted error for volume', { driver: name, attachment: va?.metadata?.name });
      void this.update(name);
    }
    return true;
  }

  stop(): void {
    for (const r of this.#running.values()) clearInterval(r.timer);
    this.#running.clear();
  }
}
