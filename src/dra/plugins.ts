// The plugins of the DRA drivers registered on this node (upstream's DRAPluginManager in
// plugin/dra_plugin_manager.go), which is also the plugin manager's handler for plugins of type
// "DRAPlugin": a driver's kubelet plugin registers under the driver's name with the gRPC services
// it serves as its versions. A driver may have several plugins (during a rolling update); the
// newest connected one is called. A driver none of whose plugins is connected for the grace
// period loses its ResourceSlices on this node; at start, every driver does.
import type { ApiClient } from '../apiserver/client.ts';
import { sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import type { PluginHandler } from '../plugin-manager/handler.ts';
import { DEFAULT_CALL_TIMEOUT_MS, type DraCallObserver, type DraPlugin, draPlugin, type HealthHandler } from './plugin-client.ts';
import { type DraService, SUPPORTED_SERVICES } from './proto.ts';
import { wipeResourceSlices } from './resource-slices.ts';

/** upstream's defaultWipingDelay: long enough for a driver's pod to be replaced. */
export const DEFAULT_WIPING_DELAY_MS = 30_000;

const goQuoted = (xs: readonly string[]) => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;

/**
 * upstream's validateSupportedServices: the first service in the plugin's list that the kubelet
 * speaks (the plugin's order decides), or upstream's error.
 */
export function chooseService(services: readonly string[]): DraService {
  if (services.length === 0) throw new Error('empty list of supported gRPC services (aka supported versions)');
  const chosen = services.find((s): s is DraService => (SUPPORTED_SERVICES as readonly string[]).includes(s));
  if (!chosen)
    throw new Error(
      `none of services supported by the plugin (${goQuoted(services)}) are supported by the kubelet (${goQuoted(SUPPORTED_SERVICES)})`,
    );
  return chosen;
}

export interface DraPluginsDeps {
  /** Without one, ResourceSlices are left alone (upstream's nil kubeClient). */
  api?: Pick<ApiClient, 'get' | 'delete'>;
  nodeName: string;
  log: Logger;
  wipingDelayMs?: number;
  /** Where each plugin's health stream reports (the DRA manager); none: no stream (ResourceHealthStatus off). */
  health?: HealthHandler;
  observe?: DraCallObserver;
}

export class DraPlugins implements PluginHandler {
  readonly #d: DraPluginsDeps;
  /** Driver name -> its plugins, oldest first. */
  readonly #store = new Map<string, DraPlugin[]>();
  /** Driver name -> the wiping of its slices, waiting for its delay or under way. */
  readonly #wipes = new Map<string, AbortController>();
  readonly #stop = new AbortController();

  constructor(d: DraPluginsDeps) {
    this.#d = d;
  }

  /** upstream's NewDRAPluginManager: no driver is registered yet, so none of the node's slices may stay. */
  start(): void {
    if (this.#d.api) void wipeResourceSlices(this.#d.api, this.#d.nodeName, undefined, this.#d.log, this.#stop.signal);
  }

  /** upstream's Stop: pending wipes are dropped, every channel closed. */
  stop(): void {
    this.#stop.abort();
    for (const w of this.#wipes.values()) w.abort();
    this.#wipes.clear();
    for (const plugins of this.#store.values()) for (const p of plugins) p.close();
    this.#store.clear();
  }

  /** upstream's GetPlugin: the newest connected plugin of the driver, else its newest. */
  get(driver: string): DraPlugin {
    if (!driver) throw new Error('DRA driver name is empty');
    const plugins = this.#store.get(driver) ?? [];
    const plugin = plugins.findLast((p) => p.connected) ?? plugins.at(-1);
    if (!plugin) throw new Error(`DRA driver ${driver} is not registered`);
    return plugin;
  }

  /** upstream's ValidatePlugin. */
  validatePlugin(name: string, endpoint: string, versions: string[]): void {
    this.#chooseService(name, endpoint, versions);
  }

  /** upstream's RegisterPlugin and add: a channel to endpoint; another plugin of the driver may not take its endpoint. */
  async registerPlugin(name: string, endpoint: string, versions: string[], timeoutMs = DEFAULT_CALL_TIMEOUT_MS): Promise<void> {
    const service = this.#chooseService(name, endpoint, versions);
    const plugins = this.#store.get(name) ?? [];
    if (plugins.some((p) => p.endpoint === endpoint))
      throw new Error(`endpoint ${endpoint} already registered for DRA driver plugin ${name}`);
    this.#d.log.v(4, 'Creating new gRPC connection', { target: `unix:${endpoint}` });
    const plugin = draPlugin(name, endpoint, service, {
      callTimeoutMs: timeoutMs,
      onConnection: (connected) => {
        if (this.#stop.signal.aborted) return;
        this.#d.log.v(2, 'Connection changed', { driverName: name, endpoint, connected });
        this.#sync(name);
      },
      health: this.#d.health,
      observe: this.#d.observe,
    });
    plugins.push(plugin);
    this.#store.set(name, plugins);
    this.#d.log.v(3, 'Registered DRA plugin', { driverName: name, endpoint, chosenService: service, numPlugins: plugins.length });
    this.#sync(name);
  }

  /** upstream's DeRegisterPlugin: the plugin removed its registration socket. */
  deRegisterPlugin(name: string, endpoint: string): void {
    const plugins = this.#store.get(name) ?? [];
    const i = plugins.findIndex((p) => p.endpoint === endpoint);
    if (i < 0) return;
    const [plugin] = plugins.splice(i, 1);
    if (!plugins.length) this.#store.delete(name);
    plugin!.close();
    this.#d.log.v(3, 'Unregistered DRA plugin', { driverName: name, endpoint, numPlugins: plugins.length });
    this.#sync(name);
  }

  #chooseService(name: string, endpoint: string, versions: string[]): DraService {
    try {
      return chooseService(versions);
    } catch (e) {
      throw new Error(`invalid supported gRPC versions of DRA driver plugin ${name} at endpoint ${endpoint}: ${(e as Error).message}`);
    }
  }

  /**
   * upstream's sync: a driver usable again (a plugin connected) keeps its slices; one that is not
   * loses them after the wiping delay, counted from when it first became unusable. Unlike
   * upstream, a wipe already retrying stops too when the driver comes back.
   */
  #sync(driver: string): void {
    const api = this.#d.api;
    if (!api) return;
    if (this.#store.get(driver)?.some((p) => p.connected)) {
      this.#wipes.get(driver)?.abort();
      this.#wipes.delete(driver);
      return;
    }
    if (this.#wipes.has(driver)) return;
    const wipe = new AbortController();
    this.#wipes.set(driver, wipe);
    void (async () => {
      await sleep(this.#d.wipingDelayMs ?? DEFAULT_WIPING_DELAY_MS, wipe.signal);
      if (!wipe.signal.aborted) await wipeResourceSlices(api, this.#d.nodeName, driver, this.#d.log, wipe.signal);
      if (this.#wipes.get(driver) === wipe) this.#wipes.delete(driver);
    })();
  }
}
