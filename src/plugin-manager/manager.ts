// The plugin manager (upstream's pkg/kubelet/pluginmanager): plugins put a socket serving the
// Registration API under <root-dir>/plugins_registry; each is registered with the handler of
// its type (CSI, DRA), and deregistered when its socket goes. The directory is rescanned every
// second as upstream's reconciler loop runs, and fs.watch wakes the loop early, so a lost
// event costs at most a second. What to do in a pass is decided in reconcile.ts.
import { type FSWatcher, mkdirSync, watch } from 'node:fs';
import { type Backoff, backoff, sleep } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import { pluginsDir, pluginsRegistrationDir } from '../podutil/pod-dirs.ts';
import type { PluginHandler } from './handler.ts';
import { type RegisteredPlugin, type Retry, reconcile } from './reconcile.ts';
import { registerSocket } from './register.ts';
import { scanSockets } from './scan.ts';

// upstream's loopSleepDuration, and goroutinemap's exponential backoff (500 ms doubling to 2m2s).
const LOOP_MS = 1000;
const RETRY_INITIAL_MS = 500;
const RETRY_MAX_MS = 122_000;
// Upstream starts every registration at once; a burst of sockets here waits for a slot.
const MAX_REGISTRATIONS = 16;

/** What the manager reports, in its own terms (src/kubelet/observers.ts maps it to upstream's series). */
export interface PluginManagerObserver {
  /** After each pass, by socket path: the sockets found (desired) and the plugins registered (actual). */
  state(desired: string[], actual: string[]): void;
}

export interface PluginManagerDeps {
  rootDir: string;
  log: Logger;
  observe?: PluginManagerObserver;
}

export class PluginManager {
  readonly #d: PluginManagerDeps;
  readonly #dir: string;
  readonly #handlers = new Map<string, PluginHandler>();
  readonly #registered = new Map<string, RegisteredPlugin>();
  readonly #busy = new Set<string>();
  readonly #retries = new Map<string, Retry & { backoff: Backoff }>();
  readonly #watchers = new Map<string, FSWatcher>();
  /** Aborted by stop: a registration still dialling its plugin gives up. */
  readonly #stop = new AbortController();
  #woken = false;
  #wake?: () => void;

  constructor(d: PluginManagerDeps) {
    this.#d = d;
    this.#dir = pluginsRegistrationDir(d.rootDir);
  }

  /** upstream's AddHandler: plugins of this type go to handler from the next pass on. */
  addHandler(type: string, handler: PluginHandler): void {
    this.#handlers.set(type, handler);
  }

  /** upstream's setupDataDirs for the plugin directories, then the loop (pluginManager.Run). */
  start(): void {
    for (const dir of [this.#dir, pluginsDir(this.#d.rootDir)]) mkdirSync(dir, { recursive: true, mode: 0o750 });
    this.#d.log.info('Starting Kubelet Plugin Manager', { path: this.#dir });
    void this.#run();
  }

  stop(): void {
    this.#stop.abort();
    this.#wake?.();
    for (const w of this.#watchers.values()) w.close();
    this.#watchers.clear();
  }

  async #run(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      try {
        this.#pass();
      } catch (e) {
        this.#d.log.error('Failed to scan plugin socket directory', { path: this.#dir, err: e });
      }
      if (!this.#woken) {
        const ac = new AbortController();
        this.#wake = () => ac.abort();
        await sleep(LOOP_MS, ac.signal);
      }
      this.#woken = false;
    }
  }

  #poke = () => {
    this.#woken = true;
    this.#wake?.();
  };

  #pass(): void {
    const scan = scanSockets(this.#dir);
    this.#watch(scan.dirs);
    const now = Date.now();
    for (const path of this.#retries.keys()) if (!scan.sockets.has(path)) this.#retries.delete(path);
    const pass = reconcile({
      found: scan.sockets,
      registered: this.#registered,
      busy: this.#busy,
      retries: this.#retries,
      nowMs: now,
      slots: MAX_REGISTRATIONS - this.#busy.size,
    });
    for (const path of pass.deregister) this.#deregister(path);
    for (const path of pass.register) void this.#register(path, scan.sockets.get(path)!);
    this.#d.observe?.state([...scan.sockets.keys()], [...this.#registered.keys()]);
  }

  /** One watcher per directory, as upstream's fsWatcher.Add: events only wake the loop. */
  #watch(dirs: string[]): void {
    const want = new Set(dirs);
    for (const [dir, w] of this.#watchers)
      if (!want.has(dir)) {
        w.close();
        this.#watchers.delete(dir);
      }
    for (const dir of want) {
      if (this.#watchers.has(dir)) continue;
      try {
        const w = watch(dir, this.#poke).on('error', () => {
          w.close();
          this.#watchers.delete(dir);
        });
        this.#watchers.set(dir, w);
      } catch (e) {
        this.#d.log.v(4, 'Cannot watch plugin directory, the rescan still finds its sockets', { path: dir, err: e });
      }
    }
  }

  /** upstream's GenerateUnregisterPluginFunc: out of the registered set first, then the handler. */
  #deregister(path: string): void {
    const p = this.#registered.get(path)!;
    this.#registered.delete(path);
    try {
      this.#handlers.get(p.type)?.deRegisterPlugin(p.name, p.endpoint);
      this.#d.log.info('Deregistered plugin', { path, type: p.type, name: p.name, endpoint: p.endpoint });
    } catch (e) {
      this.#d.log.error('Failed to deregister plugin', { path, type: p.type, name: p.name, err: e });
    }
  }

  async #register(path: string, socketId: string): Promise<void> {
    this.#busy.add(path);
    try {
      const p = await registerSocket(path, socketId, this.#handlers, this.#stop.signal);
      this.#registered.set(path, p);
      this.#retries.delete(path);
      this.#d.log.info('Registered plugin', { path, type: p.type, name: p.name, endpoint: p.endpoint, versions: p.versions });
    } catch (e) {
      if (this.#stop.signal.aborted) return;
      const prev = this.#retries.get(path);
      const b = prev?.socketId === socketId ? prev.backoff : backoff(RETRY_INITIAL_MS, RETRY_MAX_MS);
      const delay = b.next();
      this.#retries.set(path, { socketId, atMs: Date.now() + delay, backoff: b });
      this.#d.log.error('OperationExecutor.RegisterPlugin failed', { path, err: e, retryAfterMs: delay });
    } finally {
      this.#busy.delete(path);
    }
  }
}
