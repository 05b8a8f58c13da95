// The eviction manager's loop (upstream's managerImpl.synchronize) around the pure round in
// decide.ts: read the node's stats, report the pressure conditions, reclaim what the node
// can (dead containers, unused images), and only then evict, at most one pod a round,
// waiting until it has stopped. Every 10 s; every 2 s while memory is near or past its
// threshold, so a memory spike is met faster than the disk signals need.
import type { ObjectReference, Pod } from 'kubernetes-types/core/v1.js';
import { podRef, type Recorder } from '../events/recorder.ts';
import type { Logger } from '../log/log.ts';
import { jittered } from '../backoff/backoff.ts';
import type { FsStats, Summary } from '../stats/summary-types.ts';
import { evaluate, initialEvictionState, reclaimSatisfied } from './decide.ts';
import { localStorageEvictions } from './local-storage.ts';
import { chooseEviction, type Eviction } from './evicted-status.ts';
import { makeObservations, type NodeFacts, type Observations } from './observations.ts';
import { rankForEviction } from './ranking.ts';
import type { NodeReclaimAction } from './reclaim.ts';
import { admitUnderPressure } from './admit.ts';
import { describeThreshold, thresholdQuantity, withContainerFsThresholds } from './thresholds.ts';
import type { FsLayout, PressureCondition, Threshold } from './types.ts';
import type { Admission } from '../pods/admission.ts';

/** What the eviction manager reports, for upstream's eviction metrics and its own loop's. */
export interface EvictionObserver {
  evicted(signal: string): void;
  /** How old the stats of a threshold met were when pods were ranked on them. */
  statsAge?(signal: string, seconds: number): void;
  round(seconds: number): void;
  error(): void;
}

export interface EvictionDeps {
  /** From parseThresholds; the containerfs ones follow the filesystem layout each round. */
  thresholds: Threshold[];
  pressureTransitionPeriodMs: number;
  /** localStorageCapacityIsolation: false skips the pods' own ephemeral-storage limits (emptyDir sizeLimit, limits); undefined: on. */
  localStorageCapacityIsolation?: boolean;
  maxPodGracePeriodSeconds: number;
  /** The latest Summary (the stats cache's, at most ~10 s old), or one taken now when fresh. */
  summary(fresh: boolean): Promise<Summary>;
  facts(): NodeFacts;
  /** The pods that run here (not yet terminated). */
  pods(): Pod[];
  reclaim: Record<NodeReclaimAction, () => Promise<void>>;
  /** Stops the pod with the eviction's status and grace period; resolves once it has stopped. */
  evict(e: Eviction): Promise<boolean>;
  onConditions(conditions: PressureCondition[]): void;
  events: Recorder;
  node: ObjectReference;
  log: Logger;
  observe: EvictionObserver;
  intervalMs?: number;
  fastIntervalMs?: number;
}

export interface EvictionManager {
  /** The pressure conditions now reported (what admission looks at). */
  conditions(): PressureCondition[];
  /** upstream's eviction admit handler. */
  admit(pod: Pod): Admission;
  /** One round now (the loop runs them on its own; tests call this). */
  synchronize(): Promise<void>;
  stop(): void;
}

/**
 * Pure: where images and writable layers live, from the Summary: a runtime filesystem that
 * differs from the node's (by size and inode count) is a dedicated one.
 */
export function fsLayoutOf(s: Summary): FsLayout {
  const differs = (a?: FsStats, b?: FsStats) => !!a && !!b && (a.capacityBytes !== b.capacityBytes || a.inodes !== b.inodes);
  const image = s.node.runtime?.imageFs,
    container = s.node.runtime?.containerFs;
  return { dedicatedImageFs: differs(image, s.node.fs), splitContainerImageFs: differs(container, image) };
}

/** Memory within twice its threshold: look again soon. */
function memoryNear(thresholds: Threshold[], o: Observations): boolean {
  return thresholds.some((t) => {
    const ob = o[t.signal];
    return (
      (t.signal === 'memory.available' || t.signal === 'allocatableMemory.available') &&
      ob !== undefined &&
      ob.available < 2 * thresholdQuantity(t.value, ob.capacity)
    );
  });
}

export function startEvictionManager(d: EvictionDeps): EvictionManager {
  const intervalMs = d.intervalMs ?? 10_000,
    fastMs = d.fastIntervalMs ?? 2_000;
  let state = initialEvictionState();
  let conditions: PressureCondition[] = [];
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  // Near a memory threshold, rounds come faster and read stats taken for them.
  let fast = false;
  async function round(): Promise<boolean> {
    const summary = await d.summary(fast);
    const observations = makeObservations(summary, d.facts());
    const layout = fsLayoutOf(summary);
    const thresholds = withContainerFsThresholds(d.thresholds, layout).thresholds;
    const ev = evaluate(state, {
      thresholds,
      observations,
      nowMs: Date.now(),
      pressureTransitionPeriodMs: d.pressureTransitionPeriodMs,
      layout,
    });
    state = ev.state;
    if (ev.conditions.join() !== conditions.join()) {
      d.log.info('Node pressure conditions changed', { from: conditions, to: ev.conditions });
      conditions = ev.conditions;
      d.onConditions(conditions);
    }
    const near = memoryNear(thresholds, observations);
    const stats = new Map(summary.pods.map((p) => [p.podRef.uid, p]));
    const candidates = () => d.pods().map((pod) => ({ pod, stats: stats.get(pod.metadata!.uid!) }));
    // Pods over their own ephemeral-storage limits (emptyDir sizeLimit, the pod's, a container's) go
    // first, all of them, whatever the node's pressure (upstream's synchronize: localStorageEviction,
    // while localStorageCapacityIsolation is on).
    const overLimit = d.localStorageCapacityIsolation === false ? [] : localStorageEvictions(candidates(), layout);
    if (overLimit.length) {
      for (const e of overLimit) await evictPod(e);
      return true;
    }
    const r = ev.reclaim;
    if (!r) return near;
    d.log.info('Eviction manager: attempting to reclaim', { resourceName: r.resource, threshold: describeThreshold(r.threshold) });
    d.events.event(d.node, 'Warning', 'EvictionThresholdMet', `Attempting to reclaim ${r.resource}`);
    if (r.nodeReclaim.length) {
      for (const action of r.nodeReclaim) {
        try {
          await d.reclaim[action]();
        } catch (e) {
          d.log.warn('Node-level reclaim failed', { action, err: e });
        }
      }
      if (reclaimSatisfied(ev.thresholds, makeObservations(await d.summary(true), d.facts()))) {
        d.log.info('Eviction manager: node-level reclaim was enough; no pod evicted', { resourceName: r.resource });
        return near;
      }
    }
    const ranked = rankForEviction(candidates(), r.threshold.signal, layout);
    for (const t of ev.thresholds) {
      const timeMs = observations[t.signal]?.timeMs;
      if (timeMs !== undefined) d.observe.statsAge?.(t.signal, (Date.now() - timeMs) / 1000);
    }
    const eviction = chooseEviction(ranked, {
      threshold: r.threshold,
      resource: r.resource,
      thresholds: ev.thresholds,
      observations,
      maxPodGracePeriodSeconds: d.maxPodGracePeriodSeconds,
    });
    if (!eviction) {
      d.log.warn('Eviction manager: no pod can be evicted to reclaim (only critical pods run)', {
        resourceName: r.resource,
        pods: ranked.length,
      });
      return near;
    }
    await evictPod(eviction);
    return true;
  }

  async function evictPod(eviction: Eviction): Promise<void> {
    const pod = eviction.pod;
    d.log.info('Evicting pod', {
      pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`,
      podUID: pod.metadata!.uid,
      signal: eviction.signal,
      message: eviction.message,
    });
    d.events.event(podRef(pod), 'Warning', 'Evicted', eviction.message);
    d.observe.evicted(eviction.signal);
    // Upstream waits for the pod's cleanup before the next round, so one eviction's relief is seen first.
    await d.evict(eviction);
  }

  const loop = async () => {
    if (stopped) return;
    const started = performance.now();
    let soon = false;
    try {
      soon = await round();
    } catch (e) {
      d.observe.error();
      d.log.error('Eviction manager round failed', { err: e });
    }
    fast = soon;
    d.observe.round((performance.now() - started) / 1000);
    if (!stopped) {
      timer = setTimeout(loop, jittered(soon ? fastMs : intervalMs, 0.1));
      timer.unref();
    }
  };
  timer = setTimeout(loop, jittered(intervalMs, 0.5));
  timer.unref();

  return {
    conditions: () => conditions,
    admit: (pod) => admitUnderPressure(pod, conditions),
    synchronize: async () => {
      fast = await round();
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
