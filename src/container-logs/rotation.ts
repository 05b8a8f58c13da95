// The container log manager: every containerLogMonitorInterval it looks at the log of
// each running container and, past containerLogMaxSize, rotates it (upstream's
// containerLogManager). What to remove, compress and rename is planRotation's decision;
// this file lists containers, stats files and carries the plan out, with at most
// containerLogMaxWorkers containers at a time.
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { backoff, jittered, sleep, type Backoff } from '../backoff/backoff.ts';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import type { PodRuntimeStatus } from '../container/types.ts';
import type { Logger } from '../log/log.ts';
import { needsRotation, planRotation, type RotatePolicy } from './rotation-plan.ts';

/** The CRI calls rotation needs. */
export interface LogRuntime {
  /** IDs of the containers that run now (only they write; an idle log is left alone). */
  running(): Promise<string[]>;
  /** The container's log file ('' when the runtime has none). */
  logPath(id: string): Promise<string>;
  /** Makes the runtime write to a fresh file at the log path. */
  reopen(id: string): Promise<void>;
}

/** The filesystem side (real files by default; the tests use a temporary dir). */
export interface LogFiles {
  /** Bytes, or undefined when the file does not exist. */
  size(path: string): Promise<number | undefined>;
  /** Paths next to log whose name starts with its name and a dot. */
  siblings(log: string): Promise<string[]>;
  remove(path: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** gzip path to path.gz (through path.tmp), then removes path. */
  compress(path: string): Promise<void>;
}

export type RotateResult = 'rotated' | 'small' | 'skipped';

/**
 * Rotation over CRI. The running containers come from the runtime view's list (RuntimeView.pods)
 * when it began at most maxAgeMs ago, the monitor interval: the PLEG lists every 10 s, so an idle
 * node makes no list of its own where upstream's rotateLogs asks ListContainers(RUNNING) each pass.
 */
export function criLogRuntime(
  cri: Pick<RuntimeClient, 'containerStatus' | 'reopenContainerLog'>,
  pods: (maxAgeMs: number) => Promise<ReadonlyMap<string, PodRuntimeStatus>>,
  maxAgeMs: number,
): LogRuntime {
  // A container's log path is fixed when it is created: the view's status call gave it, else it
  // is asked once, not every pass. (Upstream's rotateLogs asks ContainerStatus of every running
  // container every 10 s: 600 calls a minute at 100 pods.) Kept for the containers the last list
  // showed running.
  const paths = new Map<string, string>();
  return {
    async running() {
      const running = [...(await pods(maxAgeMs)).values()].flatMap((p) => p.containers.filter((c) => c.phase === 'running'));
      const live = new Set(running.map((c) => c.id));
      for (const id of paths.keys()) if (!live.has(id)) paths.delete(id);
      for (const c of running) if (c.logPath !== undefined) paths.set(c.id, c.logPath);
      return [...live];
    },
    async logPath(id) {
      let path = paths.get(id);
      if (path === undefined) {
        path = (await cri.containerStatus({ containerId: id })).status?.logPath ?? '';
        paths.set(id, path);
      }
      return path;
    },
    async reopen(id) {
      await cri.reopenContainerLog({ containerId: id });
    },
  };
}

const missing = (e: unknown) => (e as NodeJS.ErrnoException).code === 'ENOENT';

export const diskLogFiles: LogFiles = {
  async size(path) {
    try {
      return (await stat(path)).size;
    } catch (e) {
      if (missing(e)) return undefined;
      throw e;
    }
  },
  async siblings(log) {
    const prefix = `${basename(log)}.`;
    return (await readdir(dirname(log))).filter((n) => n.startsWith(prefix)).map((n) => join(dirname(log), n));
  },
  async remove(path) {
    await rm(path, { force: true });
  },
  async rename(from, to) {
    await rename(from, to);
  },
  async compress(path) {
    const tmp = `${path}.tmp`;
    try {
      await pipeline(createReadStream(path), createGzip(), createWriteStream(tmp, { mode: (await stat(path)).mode & 0o777 }));
      await rename(tmp, `${path}.gz`);
    } finally {
      await rm(tmp, { force: true });
    }
    await rm(path, { force: true });
  },
};

/**
 * Rotates one container's log when it is over the limit, as upstream's processContainer
 * and rotateLog. Logs outside podLogsDir are not ours and are never touched.
 */
export async function rotateContainerLog(
  id: string,
  d: { runtime: LogRuntime; files: LogFiles; policy: RotatePolicy; podLogsDir: string; log: Logger; now?: () => Date },
): Promise<RotateResult> {
  const path = await d.runtime.logPath(id);
  if (!path || !resolve(path).startsWith(resolve(d.podLogsDir) + '/')) return 'skipped';
  let size = await d.files.size(path);
  if (size === undefined) {
    // Removed by hand, or a reopen lost: have the runtime write a file again (upstream).
    await d.runtime.reopen(id);
    size = await d.files.size(path);
    if (size === undefined) throw new Error(`container log ${path} does not exist after reopening it`);
  }
  if (!needsRotation(size, d.policy)) return 'small';
  const plan = planRotation(path, await d.files.siblings(path), d.policy, d.now?.() ?? new Date());
  for (const f of plan.remove) await d.files.remove(f);
  for (const f of plan.compress) await d.files.compress(f);
  // The current file is only renamed: the runtime may still be writing, and a shipper
  // may still be reading it. It is compressed at the next rotation.
  await d.files.rename(path, plan.rotateTo);
  try {
    await d.runtime.reopen(id);
  } catch (e) {
    // Put it back so the next round tries again; the runtime still writes to it.
    try {
      await d.files.rename(plan.rotateTo, path);
    } catch (back) {
      d.log.error('Failed to rename rotated log back; the container writes to it until the next rotation', {
        containerID: id,
        rotatedLog: plan.rotateTo,
        newLog: path,
        err: back,
      });
    }
    throw e;
  }
  d.log.v(2, 'Rotated container log', {
    containerID: id,
    path,
    rotatedTo: plan.rotateTo,
    size,
    removed: plan.remove.length,
    compressed: plan.compress.length,
  });
  return 'rotated';
}

export interface LogRotationDeps {
  runtime: LogRuntime;
  files?: LogFiles;
  policy: RotatePolicy;
  podLogsDir: string;
  workers: number;
  intervalMs: number;
  log: Logger;
  /** rotated: a log rotated; error: one container failed; list_error: a whole pass failed. */
  observe?(result: 'rotated' | 'error' | 'list_error'): void;
}

export interface LogRotation {
  /** One pass now (tests, and the loop). */
  pass(): Promise<void>;
  stop(): void;
}

export function startLogRotation(d: LogRotationDeps, opts: { loop?: boolean } = {}): LogRotation {
  const files = d.files ?? diskLogFiles;
  const abort = new AbortController();
  // A container whose rotation failed waits out its own back-off; the others go on.
  const failing = new Map<string, { b: Backoff; until: number }>();

  async function one(id: string) {
    const f = failing.get(id);
    if (f && f.until > Date.now()) return;
    try {
      if (
        (await rotateContainerLog(id, { runtime: d.runtime, files, policy: d.policy, podLogsDir: d.podLogsDir, log: d.log })) === 'rotated'
      )
        d.observe?.('rotated');
      failing.delete(id);
    } catch (e) {
      const entry = f ?? { b: backoff(d.intervalMs, 300_000), until: 0 };
      const wait = entry.b.next();
      entry.until = Date.now() + wait;
      failing.set(id, entry);
      d.observe?.('error');
      d.log.error('Failed to rotate log for container', { containerID: id, err: e, retryInMs: wait });
    }
  }

  async function pass() {
    if (d.policy.maxSize < 0) return;
    const ids = await d.runtime.running();
    for (const id of failing.keys()) if (!ids.includes(id)) failing.delete(id);
    let next = 0;
    const worker = async () => {
      while (next < ids.length && !abort.signal.aborted) await one(ids[next++]!);
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(d.workers, ids.length)) }, worker));
  }

  if (opts.loop !== false && d.policy.maxSize >= 0) {
    d.log.info('Initializing container log rotate workers', {
      workers: d.workers,
      monitorPeriodMs: d.intervalMs,
      maxSize: d.policy.maxSize,
      maxFiles: d.policy.maxFiles,
    });
    (async () => {
      const retry = backoff(d.intervalMs, 300_000);
      while (!abort.signal.aborted) {
        let wait = jittered(d.intervalMs, 0.1);
        try {
          await pass();
          retry.reset();
        } catch (e) {
          wait = retry.next();
          d.observe?.('list_error');
          d.log.error('Failed to rotate container logs', { err: e, retryInMs: wait });
        }
        await sleep(wait, abort.signal);
      }
    })();
  }
  return { pass, stop: () => abort.abort() };
}
