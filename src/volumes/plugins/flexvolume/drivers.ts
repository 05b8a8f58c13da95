// The FlexVolume drivers installed on the node (upstream's flexVolumeProber, probe.go, and the
// plugin factory of plugin.go): each is a directory VENDOR~DRIVER of volumePluginDir holding the
// executable DRIVER, named VENDOR/DRIVER. A driver is initialised once (`init`, its capabilities)
// and again only when its directory or executable changed. Upstream watches the directory with
// fsnotify and re-probes on the next plugin lookup; here the lookup itself looks: a readdir and two
// stats a driver, done only when a flexVolume is set up or torn down, with nothing running between.
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../../log/log.ts';
import { qualifiedNameErrors } from '../../../podutil/qualified-name.ts';
import {
  type DriverCapabilities,
  type DriverCommand,
  type DriverRun,
  type DriverStatus,
  DRIVER_CALL_TIMEOUT_MS,
  driverCallResult,
  NotSupportedError,
  runDriver,
} from './driver-call.ts';

/** A driver directory as discovered: where its executable is and what it is called. */
export interface DriverDir {
  /** VENDOR~DRIVER, the directory under volumePluginDir. */
  dirName: string;
  /** VENDOR/DRIVER (upstream's UnescapeQualifiedName of the directory): what a flexVolume's `driver` names. */
  name: string;
  executable: string;
}

/** upstream's getExecutablePathRel: VENDOR~DRIVER/DRIVER under volumePluginDir. */
export const driverExecutable = (pluginDir: string, dirName: string) => join(pluginDir, dirName, dirName.split('~').pop()!);

/**
 * Pure: upstream's probeAll over a listing of volumePluginDir: every directory whose name does not
 * begin with '.' is a driver, its executable the directory's last '~' part (getExecutablePathRel);
 * a name that is not a qualified name is refused, as initProbedPlugin does, with its reason.
 */
export function discoverDrivers(
  pluginDir: string,
  entries: readonly { name: string; isDirectory: boolean }[],
): { drivers: DriverDir[]; errors: string[] } {
  const drivers: DriverDir[] = [];
  const errors: string[] = [];
  for (const e of entries) {
    if (!e.isDirectory || e.name.startsWith('.')) continue;
    const name = e.name.replaceAll('~', '/');
    const invalid = qualifiedNameErrors(name);
    if (invalid.length) {
      errors.push(`volume plugin has invalid name: ${JSON.stringify(name)}: ${invalid.join(';')}`);
      continue;
    }
    drivers.push({ dirName: e.name, name, executable: driverExecutable(pluginDir, e.name) });
  }
  return { drivers: drivers.sort((a, b) => (a.name < b.name ? -1 : 1)), errors };
}

/** Runs a driver executable (runDriver; tests swap it). */
export type DriverRunner = (executable: string, args: readonly string[], timeoutMs: number) => Promise<DriverRun>;

/** An initialised driver (upstream's flexVolumePlugin): its capabilities and its calls. */
export class FlexDriver {
  readonly name: string;
  readonly executable: string;
  readonly capabilities: Readonly<DriverCapabilities>;
  readonly #run: DriverRunner;
  /** upstream's unsupportedCommands: a command once answered "Not supported" is not run again. */
  readonly #unsupported = new Set<string>();

  constructor(dir: DriverDir, capabilities: DriverCapabilities, run: DriverRunner) {
    this.name = dir.name;
    this.executable = dir.executable;
    this.capabilities = capabilities;
    this.#run = run;
  }

  /** upstream's DriverCall.Run: the driver's answer; throws its failure, NotSupportedError for a command it lacks. */
  async call(command: DriverCommand, args: readonly string[], timeoutMs = DRIVER_CALL_TIMEOUT_MS): Promise<DriverStatus> {
    if (this.#unsupported.has(command)) throw new NotSupportedError();
    try {
      return driverCallResult(command, this.executable, await this.#run(this.executable, [command, ...args], timeoutMs));
    } catch (e) {
      if (e instanceof NotSupportedError) this.#unsupported.add(command);
      throw e;
    }
  }
}

/** upstream's pluginFactory.NewFlexVolumePlugin: `init`, whose capabilities (over the defaults) the driver keeps. */
export async function initDriver(dir: DriverDir, run: DriverRunner): Promise<FlexDriver> {
  const status = driverCallResult('init', dir.executable, await run(dir.executable, ['init'], DRIVER_CALL_TIMEOUT_MS));
  return new FlexDriver(dir, status.capabilities, run);
}

/** A driver as last probed: what it was probed from, and its init (shared by every lookup while it runs). */
interface Probed {
  dir: DriverDir;
  /** The directory's and the executable's identity and times: a change re-probes, as an fsnotify event does upstream. */
  stamp: string;
  driver: Promise<FlexDriver | { error: string }>;
}

/** What a lookup of a driver found: the driver, or why there is none. */
export type DriverLookup = { driver: FlexDriver } | { error: string };

export class FlexDrivers {
  readonly #dir: string;
  readonly #run: DriverRunner;
  readonly #log: Logger;
  readonly #probed = new Map<string, Probed>();

  constructor(d: { dir: string; log: Logger; run?: DriverRunner }) {
    this.#dir = d.dir;
    this.#log = d.log;
    this.#run = d.run ?? runDriver;
  }

  get dir(): string {
    return this.#dir;
  }

  /**
   * upstream's prober Init and the first probe at InitPlugins: the directory made when missing
   * (createPluginDir), every driver initialised. A failure is logged: the kubelet runs without
   * the drivers that failed, as upstream.
   */
  async start(): Promise<void> {
    try {
      mkdirSync(this.#dir, { recursive: true, mode: 0o755 });
    } catch (e) {
      this.#log.error('Error initializing dynamic plugin prober', { dir: this.#dir, err: e });
    }
    await Promise.all([...this.#scan().values()].map((p) => p.driver));
  }

  /** The driver a flexVolume names, probed now if its directory changed since (upstream's FindPluginBySpec refreshing the probed plugins). */
  async lookup(name: string): Promise<DriverLookup> {
    const p = this.#scan().get(name);
    if (!p) return { error: `no driver directory ${name.replaceAll('/', '~')} in ${this.#dir}` };
    const d = await p.driver;
    return 'error' in d ? d : { driver: d };
  }

  /** Reads the directory: drivers gone are forgotten, new or changed ones initialised (in the background of the caller's await). */
  #scan(): Map<string, Probed> {
    let entries: { name: string; isDirectory: boolean }[] = [];
    try {
      entries = readdirSync(this.#dir, { withFileTypes: true }).map((e) => ({ name: e.name, isDirectory: e.isDirectory() }));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        this.#log.error('Error reading the Flexvolume directory', { dir: this.#dir, err: e });
    }
    const { drivers, errors } = discoverDrivers(this.#dir, entries);
    for (const err of errors) this.#log.v(4, 'Error dynamically probing plugins', { err });
    const seen = new Set<string>();
    for (const dir of drivers) {
      seen.add(dir.name);
      const stamp = stampOf(dir, this.#dir);
      const known = this.#probed.get(dir.name);
      if (known?.stamp === stamp) continue;
      this.#probed.set(dir.name, { dir, stamp, driver: this.#init(dir) });
    }
    for (const name of this.#probed.keys()) {
      if (seen.has(name)) continue;
      this.#probed.delete(name);
      this.#log.info('Flexvolume driver removed', { pluginName: name });
    }
    return this.#probed;
  }

  async #init(dir: DriverDir): Promise<FlexDriver | { error: string }> {
    try {
      const driver = await initDriver(dir, this.#run);
      this.#log.info('Loaded volume plugin', { pluginName: dir.name, capabilities: driver.capabilities });
      return driver;
    } catch (e) {
      const error = `error creating Flexvolume plugin from directory ${dir.dirName}, skipping. Error: ${(e as Error).message}`;
      this.#log.error('Error dynamically probing plugins', { pluginName: dir.name, err: error });
      return { error };
    }
  }
}

/** The driver directory's and executable's inode, size and mtime ('' when the executable is missing: its init fails, and is tried again once it appears). */
function stampOf(dir: DriverDir, pluginDir: string): string {
  const at = (p: string) => {
    try {
      const st = statSync(p);
      return `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      return '';
    }
  };
  return `${at(join(pluginDir, dir.dirName))}/${at(dir.executable)}`;
}
