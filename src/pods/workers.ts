// One serialized worker per pod UID. Updates coalesce (the newest pod wins), steps of
// one pod never overlap, and different pods proceed in parallel. What a step does
// is decided by lifecycle.ts; how it is done is behind PodSteps. Each pod's record (its
// object and lifecycle state) is kept in the pod manager, which every other part reads.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { backoff, jittered, type Backoff } from '../backoff/backoff.ts';
import type { Logger } from '../log/log.ts';
import { afterStep, isTerminalPhase, nextStep, type KillPodOptions, type Step } from './lifecycle.ts';
import type { Admission } from './admission.ts';
import { PREEMPTED } from './preemption.ts';
import { isStaticPod, podKey } from '../podutil/podutil.ts';
import type { PodManager, PodRecord } from './pod-manager.ts';
import { NO_TRACER, type Tracer } from '../tracing/tracer.ts';

export interface PodSteps {
  /** Makes the runtime match the pod; returns the phase it now shows and when to look again. Aborted: stop early. */
  sync(pod: Pod, signal: AbortSignal): Promise<{ phase?: string; requeueAfterMs?: number }>;
  /**
   * kill: the kubelet stopped the pod itself, and this is the final status it ends in. pod:
   * undefined once its source dropped it (lastPod is then the last object seen). Aborted: a
   * shorter grace period came; the step is run again with it.
   */
  terminate(
    uid: string,
    pod: Pod | undefined,
    gracePeriodSeconds: number,
    reason: string,
    kill?: KillPodOptions,
    lastPod?: Pod,
    signal?: AbortSignal,
  ): Promise<void>;
  finish(uid: string, pod: Pod | undefined, deleteFromApiserver: boolean): Promise<void>;
  /** Whether a new pod may run here, given the pods that run. */
  admit(pod: Pod, active: Pod[]): Admission;
  /** Reads the Node from the apiserver, past the watch (which may lag behind a label just added). */
  refreshNode?(): Promise<void>;
  /** Records why a pod was not admitted (phase Failed, reason, message, an Event). */
  reject(pod: Pod, rejection: { reason: string; message: string }): void;
  /** Records that a pod is stopped to make room for a critical one (an Event). */
  preempted?(pod: Pod): void;
}

/** A pod's worker: its record in the pod manager, and how its steps are scheduled. */
interface Worker {
  rec: PodRecord;
  phase?: string;
  pending: boolean;
  running: boolean;
  timer?: NodeJS.Timeout;
  errors: Backoff;
  /** Cancels the sync in flight, when the pod must be terminated instead, or the termination in flight, for a shorter grace period. */
  abort?: AbortController;
  /** The grace period of the termination in flight. */
  terminatingGrace?: number;
  /** Set by kill(): stop the pod with this status; the callbacks wait for it to be terminated. */
  kill?: KillPodOptions;
  killed: (() => void)[];
  /** A critical pod waits for the pods it preempts to stop before its first sync. */
  gate?: Promise<unknown>;
  /** When the kubelet first saw the pod (ms, performance.now()): where start-up latencies count from. */
  firstSeen: number;
  /** Synced at least once; updated: its source changed it since the last sync (upstream's create, update and sync). */
  synced: boolean;
  updated: boolean;
  /** Not yet started when first seen: its way to Running is timed (a kubelet restart does not time old pods). */
  timeStart: boolean;
  /** Its first step has run (upstream's startedAt, set when startPodSync lets the pod start). */
  started: boolean;
  /** Not admitted: upstream sends such a pod to no worker, so it is not counted as started. */
  refused: boolean;
}

/** What the pod workers report, for upstream's pod worker and start-up metrics. */
export interface WorkerObserver {
  /** A step took this long; operation is upstream's operation_type: create, update, sync, kill or terminated. */
  step?(operation: string, seconds: number): void;
  /** From first sight of a pod to its worker's first sync. */
  workerStarted?(seconds: number): void;
  /** From first sight of a pod to the first sync that finds it Running. */
  podStarted?(seconds: number): void;
  /** A pod was not admitted, for this reason. */
  rejected?(reason: string): void;
  /** A pod was stopped to make room for a critical one that lacked this resource. */
  preempted?(resource: string): void;
  /** A worker let its pod start, which has this many containers (kubelet_containers_per_pod_count). */
  started?(containers: number): void;
  /** A pod back in its source while it was stopped (a static pod's fixed UID) was started again. */
  restarted?(isStatic: boolean): void;
}

export class PodWorkers {
  readonly #workers = new Map<string, Worker>();
  readonly #pods: PodManager;
  readonly #steps: PodSteps;
  readonly #log: Logger;
  readonly #resyncMs: number;
  readonly #observe: WorkerObserver;
  readonly #tracer: Tracer;
  #halted = false;

  readonly #stopped: (pod: Pod) => void;

  /**
   * pods: where each pod's record is kept for every other part to read.
   * stopped: a pod was terminated or finished (the mirror pod manager waits for static pods to stop).
   */
  constructor(
    pods: PodManager,
    steps: PodSteps,
    log: Logger,
    opts: { resyncMs: number; observe?: WorkerObserver; stopped?: (pod: Pod) => void; tracer?: Tracer },
  ) {
    this.#pods = pods;
    this.#steps = steps;
    this.#log = log;
    this.#resyncMs = opts.resyncMs;
    this.#observe = opts.observe ?? {};
    this.#stopped = opts.stopped ?? (() => {});
    this.#tracer = opts.tracer ?? NO_TRACER;
  }

  /** A new version of a pod from its source; undefined when the source no longer has it. */
  update(uid: string, pod: Pod | undefined): void {
    let w = this.#workers.get(uid);
    if (!w) {
      if (!pod) return;
      // Admitted against the pods active before this one.
      const active = this.#pods.active();
      w = {
        rec: this.#pods.add(uid, pod, 'syncing'),
        pending: false,
        running: false,
        errors: backoff(1000, 60_000),
        killed: [],
        firstSeen: performance.now(),
        synced: false,
        updated: false,
        timeStart: (pod.status?.phase ?? 'Pending') === 'Pending',
        started: false,
        refused: false,
      };
      // A pod that already ended (e.g. before a kubelet restart) is not started again; a new one must fit.
      const phase = pod.status?.phase;
      const verdict = isTerminalPhase(phase) ? undefined : this.#steps.admit(pod, active);
      if (isTerminalPhase(phase)) {
        w.rec.state = 'terminated';
        w.phase = phase;
      } else if (verdict && !verdict.admit && verdict.refetchNode && this.#steps.refreshNode) {
        // Upstream's predicateAdmitHandler.generalFilter: refused for its node affinity alone, the
        // pod is admitted again against the Node read from the apiserver, whose labels the watch
        // may not have brought yet (a scheduler test labels a node, then binds a pod to it).
        // Before its first sync, and without holding up other pods' admission.
        const fresh = w;
        w.gate = this.#steps
          .refreshNode()
          .catch((e: unknown) =>
            this.#log.error('Failed to fetch the Node to admit a pod again', { pod: podName(pod), podUID: uid, err: e }),
          )
          .then(() => {
            const again = this.#steps.admit(
              pod,
              this.#pods.active().filter((p) => p.metadata?.uid !== uid),
            );
            if (!again.admit) this.#reject(fresh, pod, again);
            else if (again.preempt?.length) return this.#preempt(pod, again.preempt, again.preemptFor ?? '');
          });
      } else if (verdict && !verdict.admit) this.#reject(w, pod, verdict);
      if (verdict?.admit && verdict.preempt?.length) w.gate = this.#preempt(pod, verdict.preempt, verdict.preemptFor ?? '');
      this.#workers.set(uid, w);
    } else {
      w.updated = true;
      if (!pod) w.rec.removed = true;
    }
    w.rec.pod = pod;
    if (pod) w.rec.lastPod = pod;
    this.#cancelInFlight(w, w.kill);
    this.#schedule(w, 0);
  }

  /**
   * Upstream cancels a sync in flight (an image pull, a start back-off) when the pod must go,
   * and a termination in flight when the grace period is shortened (calculateEffectiveGracePeriod:
   * a force deletion, say), to begin it again with the shorter one.
   */
  #cancelInFlight(w: Worker, kill: KillPodOptions | undefined) {
    if (!w.abort) return;
    const next = nextStep(w.rec.state, desired(w), w.phase, false, kill, w.rec.lastPod);
    if (next.do !== 'terminate') return;
    if (w.terminatingGrace === undefined) w.abort.abort(new Error('the pod is being terminated'));
    else if (next.gracePeriodSeconds < w.terminatingGrace)
      w.abort.abort(new Error(`the grace period was shortened to ${next.gracePeriodSeconds}s`));
  }

  /** A new pod was not admitted: it ends Failed, for this reason, without running. */
  #reject(w: Worker, pod: Pod, r: { reason: string; message: string }) {
    w.rec.state = 'terminated';
    w.refused = true;
    w.phase = pod.status?.phase ?? 'Failed';
    this.#log.info('Pod was not admitted', { pod: podName(pod), podUID: w.rec.uid, reason: r.reason, message: r.message });
    this.#steps.reject(pod, r);
    this.#observe.rejected?.(r.reason);
  }

  /** The pod's status changed (upstream's HandlePodReconcile): the next sync sees it; it runs now only on resync. */
  reconcile(uid: string, pod: Pod, resync: boolean): void {
    const w = this.#workers.get(uid);
    if (!w?.rec.pod) return;
    w.rec.pod = pod;
    w.rec.lastPod = pod;
    if (resync) this.#schedule(w, 0);
  }

  /**
   * Stops a running pod on the kubelet's own account (eviction, preemption), ending in the
   * status kill names. Resolves once its containers are stopped (false: not a running pod).
   */
  kill(uid: string, kill: KillPodOptions): Promise<boolean> {
    const w = this.#workers.get(uid);
    if (w?.rec.state !== 'syncing') return Promise.resolve(false);
    w.kill ??= kill;
    this.#cancelInFlight(w, w.kill);
    const done = new Promise<boolean>((resolve) => w.killed.push(() => resolve(true)));
    this.#schedule(w, 0);
    return done;
  }

  /** Stops the pods a critical pod preempts (upstream's CriticalPodAdmissionHandler), each with its own grace period. */
  #preempt(critical: Pod, victims: Pod[], resource: string): Promise<unknown> {
    this.#log.info('Preempting pods to admit a critical pod', { pod: podName(critical), victims: victims.map(podName), resource });
    return Promise.all(
      victims.map((v) => {
        this.#steps.preempted?.(v);
        this.#observe.preempted?.(resource);
        return this.kill(v.metadata!.uid!, { gracePeriodSeconds: v.spec?.terminationGracePeriodSeconds ?? 30, ...PREEMPTED });
      }),
    );
  }

  /** Something changed in the runtime for this pod (a PLEG event). */
  wake(uid: string): void {
    const w = this.#workers.get(uid);
    if (w) this.#schedule(w, 0);
  }

  /** An older static pod with the same full name has not terminated yet. */
  #blocked(w: Worker): boolean {
    return this.#pods
      .staticPodsNamed(podName(w.rec.lastPod), w.rec.uid)
      .some((o) => isStaticPod(w.rec.lastPod) && o.seq < w.rec.seq && (o.state === 'syncing' || o.state === 'terminating'));
  }

  /** No sync starts or is timed from now on (a sync in flight still finishes). */
  stop(): void {
    this.#halted = true;
    for (const w of this.#workers.values()) clearTimeout(w.timer);
  }

  #forget(w: Worker) {
    this.#workers.delete(w.rec.uid);
    this.#pods.delete(w.rec.uid);
  }

  #schedule(w: Worker, delayMs: number) {
    clearTimeout(w.timer);
    if (this.#halted) return;
    if (delayMs > 0) {
      w.timer = setTimeout(() => this.#schedule(w, 0), delayMs);
      return;
    }
    w.pending = true;
    if (!w.running) void this.#run(w);
  }

  async #run(w: Worker) {
    w.running = true;
    if (w.gate) {
      const gate = w.gate;
      w.gate = undefined;
      await gate;
    }
    while (w.pending) {
      w.pending = false;
      const step = nextStep(w.rec.state, desired(w), w.phase, this.#blocked(w), w.kill, w.rec.lastPod);
      if (step.do === 'nothing') break;
      if (!w.started) {
        w.started = true;
        if (!w.refused) this.#observe.started?.(w.rec.lastPod?.spec?.containers?.length ?? 0);
      }
      const started = performance.now();
      const operation = operationType(w, step);
      if (operation === 'create') this.#observe.workerStarted?.((started - w.firstSeen) / 1000);
      let next: number | undefined;
      try {
        next = await this.#traced(w, step, operation, () => this.#execute(w, step));
        w.rec.state = afterStep(w.rec.state, step);
        w.errors.reset();
      } catch (e) {
        if (w.abort?.signal.aborted) {
          this.#log.info(`Pod ${step.do === 'terminate' ? 'termination' : 'sync'} cancelled: ${(w.abort.signal.reason as Error).message}`, {
            pod: podName(w.rec.lastPod),
            podUID: w.rec.uid,
          });
        } else {
          next = w.errors.next();
          this.#log.error('Error syncing pod, skipping', {
            pod: podName(w.rec.lastPod),
            podUID: w.rec.uid,
            step: step.do,
            err: e,
            retryInMs: next,
          });
        }
      }
      w.abort = undefined;
      this.#observe.step?.(operation, (performance.now() - started) / 1000);
      if (w.rec.state === 'terminated') for (const done of w.killed.splice(0)) done();
      // A static pod waiting for this one (same full name) may start now.
      if (step.do === 'terminate' || step.do === 'finish') {
        if (isStaticPod(w.rec.lastPod)) for (const o of this.#pods.staticPodsNamed(podName(w.rec.lastPod), w.rec.uid)) this.wake(o.uid);
        if (w.rec.state !== 'syncing') this.#stopped(w.rec.lastPod);
      }
      // Back in its source while it was stopped: a new worker starts it again, admitted anew,
      // beside what the old one left in the runtime (so the restart counts, as upstream's
      // restartRequested, where the dead containers wait for GC).
      if (w.rec.state === 'terminated' && w.rec.removed && w.rec.pod) {
        clearTimeout(w.timer);
        this.#forget(w);
        this.#log.info('Pod was restarted after being removed from its source', { pod: podName(w.rec.pod), podUID: w.rec.uid });
        this.#observe.restarted?.(isStaticPod(w.rec.pod));
        this.update(w.rec.uid, w.rec.pod);
        break;
      }
      if (w.rec.state === 'finished') {
        clearTimeout(w.timer);
        this.#forget(w);
        break;
      }
      if (!w.pending && next !== undefined) this.#schedule(w, next);
    }
    w.running = false;
  }

  /**
   * Upstream's spans of a step (kubelet.go SyncPod, SyncTerminatingPod, SyncTerminatedPod): named
   * for it, with the pod's attributes; the CRI calls the step makes are their children.
   */
  #traced<T>(w: Worker, step: Step, operation: string, run: () => Promise<T>): Promise<T> {
    if (step.do === 'nothing' || this.#tracer === NO_TRACER) return run();
    const pod = w.rec.lastPod;
    const attrs: Record<string, string> = {
      'k8s.pod.uid': w.rec.uid,
      'k8s.pod': podName(pod),
      'k8s.pod.name': pod?.metadata?.name ?? '',
      ...(step.do === 'sync' ? { 'k8s.pod.update_type': operation } : {}),
      'k8s.namespace.name': pod?.metadata?.namespace ?? '',
    };
    const name = { sync: 'syncPod', terminate: 'syncTerminatingPod', finish: 'syncTerminatedPod' }[step.do];
    return this.#tracer.inSpan(name, attrs, () => run());
  }

  /** Runs a step; returns when to run the worker again (undefined: only on an update). */
  async #execute(w: Worker, step: Step): Promise<number | undefined> {
    switch (step.do) {
      case 'sync': {
        w.abort = new AbortController();
        w.updated = false;
        const r = await this.#steps.sync(w.rec.pod!, w.abort.signal);
        w.synced = true;
        w.phase = r.phase;
        if (w.timeStart && r.phase === 'Running') {
          w.timeStart = false;
          this.#observe.podStarted?.((performance.now() - w.firstSeen) / 1000);
        }
        if (isTerminalPhase(r.phase)) w.pending = true; // terminate right away
        return r.requeueAfterMs ?? jittered(this.#resyncMs, 0.5);
      }
      case 'terminate':
        this.#log.info('Terminating pod', {
          pod: podName(w.rec.lastPod),
          podUID: w.rec.uid,
          reason: step.reason,
          gracePeriod: step.gracePeriodSeconds,
        });
        w.abort = new AbortController();
        w.terminatingGrace = step.gracePeriodSeconds;
        try {
          await this.#steps.terminate(
            w.rec.uid,
            desired(w),
            step.gracePeriodSeconds,
            step.reason,
            step.kill,
            w.rec.lastPod,
            w.abort.signal,
          );
        } finally {
          w.terminatingGrace = undefined;
        }
        w.pending = true; // a deleted pod can be finished right away
        return undefined;
      case 'finish':
        await this.#steps.finish(w.rec.uid, w.rec.lastPod, step.deleteFromApiserver);
        this.#log.info('Pod fully terminated and removed', { pod: podName(w.rec.lastPod), podUID: w.rec.uid });
        return undefined;
      case 'nothing':
        return undefined;
    }
  }
}

const podName = podKey;
/** The pod as the worker must treat it: undefined once its source dropped it, even if it came back. */
const desired = (w: Worker) => (w.rec.removed ? undefined : w.rec.pod);

/** Upstream's operation_type of kubelet_pod_worker_duration_seconds for a step. */
function operationType(w: Worker, step: Step): string {
  switch (step.do) {
    case 'sync':
      return !w.synced ? 'create' : w.updated ? 'update' : 'sync';
    case 'terminate':
      return 'kill';
    default:
      return 'terminated';
  }
}
