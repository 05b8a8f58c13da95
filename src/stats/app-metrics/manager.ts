// The application metrics of the node's containers, collected with each stats sample as
// cAdvisor's housekeeping does (containerData.updateStats, GenericCollectorManager.Collect): a
// container's collectors are made once, the first time it is seen with a process (cAdvisor's
// createContainer reads the config files then; one that cannot be read or parsed is logged and
// the container runs without it), and each collector whose polling time has come fetches its page.
// A sample carries the values of the collectors it collected, as a cAdvisor stats entry does.
import type { IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { closeSync, openSync, readSync } from 'node:fs';
import { posix } from 'node:path';
import { type Collector, collectorConfigs, type MetricSpec, parseCollector } from './config.ts';
import { collect, type CustomMetrics, type MetricValue } from './collect.ts';

/** What a collection needs of a container: its processes now, and its labels (the CRI's and its image's, as containerd's). */
export interface AppContainer {
  id: string;
  /** For the log: namespace/pod/container. */
  ref: string;
  pids(): number[];
  labels(): Promise<Record<string, string>>;
}

export interface AppMetricsIo {
  /** containerData.ReadFile: the file through /proc/PID/root of the container's processes, the first that has it. */
  readFile(pids: number[], path: string): string;
  /** A GET of a collector's page. */
  get(url: string): Promise<{ status: number; statusText: string; body: string }>;
}

export interface AppMetricsLog {
  info(msg: string, kv: Record<string, unknown>): void;
  warn(msg: string, kv: Record<string, unknown>): void;
}

interface Running {
  collector: Collector;
  nextMs: number;
  specs: MetricSpec[];
}

interface Known {
  collectors: Running[];
  /** When a collection error was last logged: once a minute a container (allowErrorLogging). */
  loggedMs: number;
}

/** Collects the custom metrics of the containers given, by container ID; forgets those not given. */
export type AppMetrics = (containers: AppContainer[]) => Promise<Map<string, CustomMetrics>>;

export function appMetrics(limit: number, io: AppMetricsIo, log: AppMetricsLog, now: () => number = Date.now): AppMetrics {
  const known = new Map<string, Known>();

  /** The container's collectors; undefined when its labels cannot be read now (tried again at the next sample). */
  async function register(c: AppContainer, pids: number[]): Promise<Known | undefined> {
    let labels: Record<string, string>;
    try {
      labels = await c.labels();
    } catch (err) {
      log.info('Cannot read the labels of a container for its application metrics', { container: c.ref, err: String(err) });
      return undefined;
    }
    const collectors: Running[] = [];
    for (const { name, path } of collectorConfigs(labels)) {
      try {
        // The containerd handler has no IP address for an endpoint given as parts (config.ts).
        const collector = parseCollector(name, io.readFile(pids, path), limit);
        collectors.push({ collector, nextMs: 0, specs: collector.kind === 'generic' ? collector.metrics.map((m) => m.spec) : [] });
      } catch (err) {
        log.info('Failed to register an application metrics collector', { container: c.ref, config: name, path, err: String(err) });
      }
    }
    return { collectors, loggedMs: 0 };
  }

  async function run(c: AppContainer, k: Known, at: number): Promise<CustomMetrics | undefined> {
    if (!k.collectors.length) return undefined;
    const values: Record<string, MetricValue[]> = {};
    const errors: string[] = [];
    await Promise.all(
      k.collectors
        .filter((r) => r.nextMs <= at)
        .map(async (r) => {
          r.nextMs = at + r.collector.pollingMs;
          try {
            const page = await io.get(r.collector.url);
            // The Prometheus collector wants a 200; the generic one takes any page.
            if (r.collector.kind === 'prometheus' && page.status !== 200)
              throw new Error(`server returned HTTP status ${page.status} ${page.statusText}`);
            const got = collect(r.collector, page.body, at);
            if (got.specs.length) r.specs = got.specs;
            for (const [name, v] of Object.entries(got.values)) (values[name] ??= []).push(...v);
            errors.push(...got.errors);
          } catch (err) {
            errors.push((err as Error).message);
          }
        }),
    );
    if (errors.length && at - k.loggedMs >= 60_000) {
      k.loggedMs = at;
      log.warn('Failed to collect application metrics', { container: c.ref, errors });
    }
    const specs = k.collectors.flatMap((r) => r.specs);
    return specs.length || Object.keys(values).length ? { specs, values } : undefined;
  }

  return async (containers) => {
    const at = now();
    const out = new Map<string, CustomMetrics>();
    const seen = new Set(containers.map((c) => c.id));
    for (const id of known.keys()) if (!seen.has(id)) known.delete(id);
    await Promise.all(
      containers.map(async (c) => {
        let k = known.get(c.id);
        if (!k) {
          // Not yet a process to read the config files through: tried again at the next sample.
          const pids = c.pids();
          if (!pids.length) return;
          k = await register(c, pids);
          if (!k) return;
          known.set(c.id, k);
        }
        const m = await run(c, k, at);
        if (m) out.set(c.id, m);
      }),
    );
    return out;
  };
}

// node:http by getBuiltinModule, not import: its ESM facade loads undici (src/apiserver/client.ts).
const { get: httpGet } = process.getBuiltinModule('node:http');

/** How long a page may take, and how large it may be: cAdvisor's client has no bound; a sample must not wait on one. */
const GET_TIMEOUT_MS = 5000;
const MAX_PAGE_BYTES = 16 << 20;
const MAX_CONFIG_BYTES = 1 << 20;

export const hostAppMetricsIo: AppMetricsIo = {
  readFile(pids, path) {
    // The path normalised within the container's root, so ".." cannot climb out of it (cAdvisor's
    // path.Join would). A symbolic link in the container still resolves as the kubelet sees it, as
    // upstream's: the text only reaches the JSON parser, whose errors quote none of it (config.ts).
    const inRoot = posix.normalize(`/${path}`);
    let fd: number | undefined;
    for (const pid of pids) {
      try {
        fd = openSync(`/proc/${pid}/root${inRoot}`, 'r');
        break;
      } catch {
        /* gone, or not in this process's root: the next one */
      }
    }
    if (fd === undefined) throw new Error(`file "${path}" does not exist`);
    try {
      const buf = Buffer.alloc(MAX_CONFIG_BYTES + 1);
      const n = readSync(fd, buf, 0, buf.length, 0);
      if (n > MAX_CONFIG_BYTES) throw new Error(`the config file ${path} is over ${MAX_CONFIG_BYTES} bytes`);
      return buf.toString('utf8', 0, n);
    } finally {
      closeSync(fd);
    }
  },
  get(url) {
    return new Promise((resolve, reject) => {
      let u: URL;
      try {
        u = new URL(url);
        if (!u.hostname) throw new Error('no Host in request URL');
      } catch (e) {
        return reject(new Error(`Get "${url}": ${(e as Error).message}`));
      }
      const onResponse = (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (d: Buffer) => {
          size += d.length;
          if (size > MAX_PAGE_BYTES) return void res.destroy(new Error(`Get "${url}": the page is over ${MAX_PAGE_BYTES} bytes`));
          chunks.push(d);
        });
        res.on('error', reject);
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', body: Buffer.concat(chunks).toString('utf8') }),
        );
      };
      const req = (u.protocol === 'https:' ? httpsGet : httpGet)(u, { timeout: GET_TIMEOUT_MS }, onResponse);
      req.on('timeout', () => req.destroy(new Error(`Get "${url}": no answer in ${GET_TIMEOUT_MS} ms`)));
      req.on('error', (e) => reject(e.message.startsWith('Get ') ? e : new Error(`Get "${url}": ${e.message}`)));
    });
  },
};
