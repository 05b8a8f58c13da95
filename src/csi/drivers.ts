// The CSI drivers registered on this node (upstream's DriversStore), each with its client, and
// the plugin watcher's handler for plugins of type "CSIPlugin" (upstream's RegistrationHandler in
// csi_plugin.go): a driver's node-driver-registrar announces the driver's name, socket and CSI
// versions; the kubelet keeps the highest v1.x it can speak, asks the driver NodeGetInfo and
// publishes the answer on the Node and its CSINode.
import type { Logger } from '../log/log.ts';
import type { PluginHandler } from '../plugin-manager/handler.ts';
import { CSI_TIMEOUT_MS, type CsiClient, csiClient } from './client.ts';
import type { NodeInfoManager } from './node-info-manager.ts';

/** A version as upstream's utilversion.ParseGeneric reads it: its numeric components. */
export type Version = readonly number[];

const GENERIC_VERSION = /^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)$/;

/** upstream's ParseGeneric: "v"?, two or more dot-separated numbers (the first without a leading zero), anything after ignored. */
function parseGenericVersion(s: string): Version {
  const m = GENERIC_VERSION.exec(s);
  if (!m) throw new Error(`could not parse "${s}" as version`);
  const parts = m[1]!.split('.');
  if (parts.length < 2) throw new Error(`illegal version string "${s}"`);
  if (parts[0]!.length > 1 && parts[0]!.startsWith('0')) throw new Error(`illegal zero-prefixed version component "${parts[0]}" in "${s}"`);
  return parts.map(Number);
}

/** upstream's Version.compareInternal for generic versions: component by component; trailing zeros do not count. */
function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/**
 * upstream's utilversion.HighestSupportedVersion: the highest of the versions that parse and are
 * not 2.x or later, which must be a 1.x (CSI 0.x is no longer supported since Kubernetes 1.17).
 */
export function highestSupportedVersion(versions: readonly string[]): Version {
  if (versions.length === 0) throw new Error('empty array for supported versions');
  let highest: Version | undefined;
  let lastError: Error | undefined;
  for (const s of versions) {
    let v: Version;
    try {
      v = parseGenericVersion(s);
    } catch (e) {
      lastError = e as Error;
      continue;
    }
    if (v[0]! > 1) continue;
    if (!highest || compareVersions(highest, v) < 0) highest = v;
  }
  if (!highest)
    throw new Error(
      `could not find a highest supported version from versions (${versions.join(' ')}) reported: ${lastError?.message ?? ''}`,
    );
  if (highest[0] !== 1) throw new Error(`highest supported version reported is ${highest.join('.')}, must be v1.x`);
  return highest;
}

interface Driver {
  endpoint: string;
  highestSupportedVersion: Version;
  client: CsiClient;
}

/** upstream's DriversStore (csiDrivers), with one client per driver. */
export class CsiDrivers {
  readonly #drivers = new Map<string, Driver>();

  get(name: string): Omit<Driver, 'client'> | undefined {
    return this.#drivers.get(name);
  }

  /** The registered drivers' names. */
  names(): string[] {
    return [...this.#drivers.keys()];
  }

  /** upstream's newCsiDriverClient: the client of a registered driver. */
  client(name: string): CsiClient {
    const d = this.#drivers.get(name);
    if (!d) throw new Error(`driver name ${name} not found in the list of registered CSI drivers`);
    return d.client;
  }

  set(name: string, endpoint: string, highestSupportedVersion: Version): void {
    this.#drivers.get(name)?.client.close();
    this.#drivers.set(name, { endpoint, highestSupportedVersion, client: csiClient(name, endpoint) });
  }

  delete(name: string): void {
    this.#drivers.get(name)?.client.close();
    this.#drivers.delete(name);
  }
}

/** upstream's RegistrationHandler: the plugin manager's handler for plugins of type CSI_PLUGIN. */
export class CsiRegistrationHandler implements PluginHandler {
  readonly #drivers: CsiDrivers;
  readonly #nodeInfo: NodeInfoManager;
  readonly #log: Logger;
  readonly #changed: (name: string) => void;

  constructor(d: {
    drivers: CsiDrivers;
    nodeInfo: NodeInfoManager;
    log: Logger;
    /** A driver was registered or deregistered (upstream's csiNodeUpdater.syncDriverUpdater, node-updater.ts). */
    changed?: (name: string) => void;
  }) {
    this.#changed = d.changed ?? (() => {});
    this.#drivers = d.drivers;
    this.#nodeInfo = d.nodeInfo;
    this.#log = d.log;
  }

  /** upstream's ValidatePlugin, called before registration: throws when the driver is refused. */
  validatePlugin(name: string, endpoint: string, versions: string[]): void {
    this.#log.info('Trying to validate a new CSI Driver', { name, endpoint, versions: versions.join(',') });
    try {
      this.#validateVersions('ValidatePlugin', name, versions);
    } catch (e) {
      throw new Error(`validation failed for CSI Driver ${name} at endpoint ${endpoint}: ${(e as Error).message}`);
    }
  }

  /**
   * upstream's RegisterPlugin: the driver joins the store, then NodeGetInfo (within timeoutMs, else
   * upstream's csiTimeout) and the node info; when either fails the driver is unregistered again.
   */
  async registerPlugin(name: string, endpoint: string, versions: string[], timeoutMs = CSI_TIMEOUT_MS): Promise<void> {
    this.#log.info('Register new plugin', { name, endpoint });
    const version = this.#validateVersions('RegisterPlugin', name, versions);
    this.#drivers.set(name, endpoint, version);
    try {
      const info = await this.#drivers.client(name).nodeGetInfo(timeoutMs);
      await this.#nodeInfo.installDriver(name, info);
      this.#changed(name);
    } catch (e) {
      await this.#unregister(name).catch((err: unknown) =>
        this.#log.error('RegisterPlugin failed to unregister plugin due to previous error', { name, err }),
      );
      throw e;
    }
  }

  /** upstream's DeRegisterPlugin: the driver's socket is gone. */
  deRegisterPlugin(name: string, endpoint: string): void {
    this.#log.info('DeRegisterPlugin request for CSI plugin', { name, endpoint });
    this.#unregister(name).catch((err: unknown) => this.#log.error('DeRegisterPlugin failed', { name, err }));
  }

  /** upstream's validateVersions: a v1.x, higher than the one of a driver of that name already registered. */
  #validateVersions(caller: string, name: string, versions: string[]): Version {
    if (versions.length === 0)
      throw new Error(`${caller} for CSI driver "${name}" failed. Plugin returned an empty list for supported versions`);
    let highest: Version;
    try {
      highest = highestSupportedVersion(versions);
    } catch (e) {
      throw new Error(
        `${caller} for CSI driver "${name}" failed. None of the versions specified "${versions}" are supported. err=${(e as Error).message}`,
      );
    }
    const existing = this.#drivers.get(name);
    if (existing && compareVersions(existing.highestSupportedVersion, highest) >= 0)
      throw new Error(
        `${caller} for CSI driver "${name}" failed. Another driver with the same name is already registered with a higher supported version: "${existing.highestSupportedVersion.join('.')}"`,
      );
    return highest;
  }

  /** upstream's unregisterDriver. */
  async #unregister(name: string): Promise<void> {
    this.#drivers.delete(name);
    this.#changed(name);
    await this.#nodeInfo.uninstallDriver(name);
  }
}
