// The node shutdown manager (upstream's nodeshutdown managerImpl, Linux): holds a logind
// delay inhibitor lock on shutdown, and when logind says PrepareForShutdown(true) marks the
// node as shutting down (NotReady, no new pods), stops the pods group by group, lowest
// priority first, records when it began and ended, then releases the lock so the shutdown
// goes on. PrepareForShutdown(false), a cancelled shutdown, takes the lock again.
// The decisions are in periods.ts and status.ts; logind is behind the Logind interface.
import type { ObjectReference, Pod } from 'kubernetes-types/core/v1.js';
import type { Recorder } from '../events/recorder.ts';
import type { Logger } from '../log/log.ts';
import { backoff, sleep as abortableSleep } from '../backoff/backoff.ts';
import type { Admission } from '../pods/admission.ts';
import { goDuration } from '../apiserver/duration.ts';
import type { KillPodOptions } from '../pods/lifecycle.ts';
import type { InhibitLock, Logind } from './logind.ts';
import {
  byPodPriorityEnabled,
  groupByPriority,
  podShutdownGracePeriodSeconds,
  shutdownPeriods,
  totalGracePeriodSeconds,
  type ShutdownConfig,
} from './periods.ts';
import type { StateStore } from './state-file.ts';
import { admitDuringShutdown, shutdownKill, shutdownStatus } from './status.ts';

/** kubelet_graceful_shutdown_start_time_seconds and _end_time_seconds. */
export interface NodeShutdownObserver {
  startTime(seconds: number): void;
  endTime(seconds: number): void;
}

export interface NodeShutdownDeps {
  config: ShutdownConfig;
  /** The system bus and logind on it; throws where there is none. */
  connect(): Promise<Logind>;
  state: StateStore;
  /** The pods running here: the ones to stop. */
  pods(): Pod[];
  /** Stops a pod with this status and grace period (the eviction path); resolves once it has stopped. */
  killPod(pod: Pod, kill: KillPodOptions): Promise<unknown>;
  /** Sends the Node's status now, so it shows NotReady at once. */
  syncNodeStatus(): void;
  events: Recorder;
  node: ObjectReference;
  log: Logger;
  observe: NodeShutdownObserver;
  /** Tests replace the clock's waits. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The watch's reconnect back-off (default 1 s to 30 s, jittered). */
  reconnect?: { initialMs: number; maxMs: number };
}

export interface NodeShutdownManager {
  /** Takes the lock and watches logind; throws (for one log line) where it cannot. */
  start(): Promise<void>;
  admit(pod: Pod): Admission;
  /** The Ready condition's problem while shutting down (upstream's ShutdownStatus). */
  shutdownStatus(): string | undefined;
  /** Resolves once the shutdown events received so far are handled. */
  idle(): Promise<void>;
  stop(): void;
}

/** upstream's managerStub: what a node without the feature (the default) gets. */
const stub: NodeShutdownManager = {
  start: async () => {},
  admit: () => ({ admit: true }),
  shutdownStatus: () => undefined,
  idle: async () => {},
  stop: () => {},
};

/** upstream's Start: the override's reload is asynchronous, so InhibitDelayMaxUSec is read again 5 times, 100 ms doubling. */
const RELOAD_POLL = { firstMs: 100, factor: 2, attempts: 5 };

export function nodeShutdownManager(d: NodeShutdownDeps): NodeShutdownManager {
  const periods = shutdownPeriods(d.config);
  if (!periods.length) return stub;
  const log = d.log;
  const sleep = d.sleep ?? abortableSleep;
  const metricsEnabled = byPodPriorityEnabled(d.config);
  const requestedMs = totalGracePeriodSeconds(periods) * 1000;
  log.info('Creating node shutdown manager', {
    shutdownGracePeriodRequested: goDuration(d.config.shutdownGracePeriodMs),
    shutdownGracePeriodCriticalPods: goDuration(d.config.shutdownGracePeriodCriticalPodsMs),
    shutdownGracePeriodByPodPriority: periods,
  });

  let shuttingDown = false;
  let logind: Logind | undefined;
  let lock: InhibitLock | undefined;
  let queue: Promise<void> = Promise.resolve();
  const abort = new AbortController();
  const retry = backoff(d.reconnect?.initialMs ?? 1000, d.reconnect?.maxMs ?? 30_000);
  let retryTimer: NodeJS.Timeout | undefined;

  async function acquireInhibitLock(l: Logind): Promise<void> {
    const next = await l.inhibitShutdown();
    const old = lock;
    lock = next;
    await old?.release();
  }

  async function releaseInhibitLock(): Promise<void> {
    const l = lock;
    lock = undefined;
    await l?.release();
  }

  /** upstream's start: one connection, the delay checked (and raised), the lock, the watch. */
  async function connectAndWatch(): Promise<void> {
    const l = await d.connect();
    try {
      const current = await l.currentInhibitDelayMs();
      if (requestedMs > current) {
        try {
          await l.overrideInhibitDelay(requestedMs);
        } catch (e) {
          throw new Error(`unable to override inhibit delay by shutdown manager: ${(e as Error).message}`);
        }
        await l.reloadLogindConf();
        let updated = 0,
          attempt = 0;
        for (let wait = RELOAD_POLL.firstMs; attempt < RELOAD_POLL.attempts; wait *= RELOAD_POLL.factor) {
          attempt++;
          updated = await l.currentInhibitDelayMs();
          if (requestedMs <= updated) break;
          if (attempt < RELOAD_POLL.attempts) {
            log.v(3, 'InhibitDelayMaxSec still less than requested, retrying', {
              attempt,
              current: goDuration(updated),
              requested: goDuration(requestedMs),
            });
            await sleep(wait);
          }
        }
        if (requestedMs > updated)
          throw new Error(
            `node shutdown manager was timed out after ${attempt} attempts waiting for logind InhibitDelayMaxSec to update to ${goDuration(requestedMs)} (ShutdownGracePeriod), current value is ${goDuration(updated)}`,
          );
      }
      await acquireInhibitLock(l);
      logind = l;
      try {
        await l.monitorShutdown(
          (active) => void (queue = queue.then(() => onShutdownEvent(active))),
          (err) => watchEnded(l, err),
        );
      } catch (e) {
        await releaseInhibitLock();
        throw new Error(`failed to monitor shutdown: ${(e as Error).message}`);
      }
    } catch (e) {
      if (logind === l) logind = undefined;
      l.close();
      throw e;
    }
  }

  // upstream restarts the watch 1 s after it ends, forever; here with a growing, jittered wait.
  function watchEnded(l: Logind, err?: Error): void {
    if (abort.signal.aborted || logind !== l) return;
    logind = undefined;
    log.error('Ended watching the node for shutdown events', { err });
    scheduleRestart();
  }
  function scheduleRestart(): void {
    const wait = retry.next();
    log.v(1, 'Restarting watch for node shutdown events', { retryInMs: wait });
    retryTimer = setTimeout(async () => {
      if (abort.signal.aborted) return;
      try {
        await connectAndWatch();
        retry.reset();
      } catch (e) {
        log.error('Unable to watch the node for shutdown events', { err: e });
        scheduleRestart();
      }
    }, wait);
    retryTimer.unref();
  }

  async function onShutdownEvent(active: boolean): Promise<void> {
    if (abort.signal.aborted) return;
    log.info('Shutdown manager detected new shutdown event', { event: active ? 'shutdown' : 'cancelled' });
    d.events.event(
      d.node,
      'Normal',
      'Shutdown',
      active ? 'Shutdown manager detected shutdown event' : 'Shutdown manager detected shutdown cancellation',
    );
    shuttingDown = active;
    if (active) {
      d.syncNodeStatus();
      await processShutdownEvent();
    } else if (logind) {
      await acquireInhibitLock(logind).catch((e) =>
        log.error('Failed to take the inhibitor lock again after a cancelled shutdown', { err: e }),
      );
    }
  }

  async function processShutdownEvent(): Promise<void> {
    log.info('Shutdown manager processing shutdown event');
    const pods = d.pods();
    const startTime = new Date();
    if (metricsEnabled) {
      storeState({ startTime });
      d.observe.startTime(unixSeconds(startTime));
      d.observe.endTime(0);
    }
    try {
      await killPods(pods);
    } finally {
      if (metricsEnabled) {
        const endTime = new Date();
        storeState({ startTime, endTime });
        d.observe.endTime(unixSeconds(endTime));
      }
      await releaseInhibitLock().catch((e) => log.error('Failed to release the inhibitor lock', { err: e }));
      log.info('Shutdown manager completed processing shutdown event, node will shutdown shortly');
    }
  }

  function storeState(s: { startTime: Date; endTime?: Date }): void {
    try {
      d.state.store(s);
    } catch (e) {
      log.error('Failed to store graceful shutdown state', { err: e });
    }
  }

  /** upstream's podManager.killPods: group after group; each waits for its pods, at most its grace period. */
  async function killPods(pods: Pod[]): Promise<void> {
    for (const group of groupByPriority(periods, pods)) {
      // No pods in a range: no wait for it.
      if (!group.pods.length) continue;
      const kills = group.pods.map(async (pod) => {
        const gracePeriod = podShutdownGracePeriodSeconds(pod, group.shutdownGracePeriodSeconds);
        const name = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
        log.info('Shutdown manager killing pod with gracePeriod', { pod: name, podUID: pod.metadata?.uid, gracePeriod });
        try {
          await d.killPod(pod, shutdownKill(pod, gracePeriod));
          log.info('Shutdown manager finished killing pod', { pod: name });
        } catch (e) {
          log.info('Shutdown manager failed killing pod', { pod: name, err: e });
        }
      });
      const timer = new AbortController();
      const timedOut = await Promise.race([
        Promise.all(kills).then(() => false),
        sleep(group.shutdownGracePeriodSeconds * 1000, timer.signal).then(() => true),
      ]);
      timer.abort();
      const fields = { gracePeriod: group.shutdownGracePeriodSeconds, priority: group.priority };
      if (timedOut) log.info('Shutdown manager pod killing time out', fields);
      else log.info('Done waiting for all pods in group to terminate', fields);
    }
  }

  return {
    async start() {
      await connectAndWatch();
      // The times of the shutdown before this boot.
      if (!metricsEnabled) return;
      try {
        const s = d.state.load();
        if (s.startTime) d.observe.startTime(unixSeconds(s.startTime));
        if (s.endTime) d.observe.endTime(unixSeconds(s.endTime));
      } catch (e) {
        log.error('Failed to load graceful shutdown state', { err: e });
      }
    },
    admit: () => admitDuringShutdown(shuttingDown),
    shutdownStatus: () => shutdownStatus(shuttingDown),
    idle: async () => {
      for (let q = queue; ; q = queue) {
        await q;
        if (q === queue) return;
      }
    },
    stop() {
      abort.abort();
      clearTimeout(retryTimer);
      void releaseInhibitLock().catch(() => {});
      logind?.close();
      logind = undefined;
    },
  };
}

/** upstream's timestamp: whole Unix seconds. */
const unixSeconds = (t: Date) => Math.floor(t.getTime() / 1000);
