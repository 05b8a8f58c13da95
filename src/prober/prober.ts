// The prober: keeps one worker per probe of each running container instance, as the
// pod's syncs report them, and holds the results the pod's status and actions read.
// Upstream's prober_manager.go, driven by the pod sync instead of the status manager.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { Recorder } from '../events/recorder.ts';
import { podRef } from '../events/recorder.ts';
import type { Logger } from '../log/log.ts';
import { forgetProbe, observeProbe, type ProbeTarget } from '../metrics/probes.ts';
import type { PodRuntimeStatus } from '../container/types.ts';
import { latest } from '../container/types.ts';
import type { ExecRunner } from './exec.ts';
import { ProbeResults } from './results.ts';
import { runProbe } from './run.ts';
import { takeEventToken, type Bucket } from './event-budget.ts';
import type { ProbeType, Result } from './state.ts';
import { ProbeWorker, probeOf, type WorkerDeps, type WorkerTarget } from './worker.ts';
import { isSidecar } from '../podutil/podutil.ts';

const TYPES: ProbeType[] = ['Startup', 'Readiness', 'Liveness'];

export interface ProberDeps {
  cri: ExecRunner;
  events: Pick<Recorder, 'event'>;
  log: Logger;
  /** A result the pod must react to changed: sync it again. */
  onChange(uid: string): void;
  /** Runs one probe (tests replace it). */
  run?: WorkerDeps['run'];
  now?: () => number;
  random?: () => number;
}

export class Prober {
  readonly results: ProbeResults;
  /** uid/container/type -> the worker of the instance being probed. */
  readonly #workers = new Map<string, ProbeWorker>();
  readonly #deleting = new Set<string>();
  /** uid/reason -> what is left of the pod's event budget. */
  readonly #eventBudget = new Map<string, Bucket>();
  readonly #deps: WorkerDeps;
  readonly #log: Logger;

  constructor(d: ProberDeps) {
    this.#log = d.log;
    this.results = new ProbeResults((uid, containerId, type, result) => {
      this.#log.v(3, 'Probe result changed', { podUID: uid, containerID: containerId, probeType: type, result });
      // Once started, a container's readiness and liveness need not wait a whole period.
      if (type === 'Startup' && result === 'Success')
        for (const w of this.#workers.values()) if (w.target.containerId === containerId && w.type !== 'Startup') w.trigger();
      d.onChange(uid);
    });
    const now = d.now ?? Date.now;
    this.#deps = {
      run: d.run ?? ((p, t, timeout) => runProbe(d.cri, p, t, timeout)),
      results: this.results,
      event: (t, e) => {
        this.#log.v(1, e.reason === 'Unhealthy' ? 'Probe failed' : 'Probe warning', {
          pod: t.podName,
          podUID: t.uid,
          container: t.container.name,
          containerID: t.containerId,
          message: e.message,
        });
        const key = `${t.uid}/${e.reason}`;
        const { ok, bucket } = takeEventToken(this.#eventBudget.get(key), now());
        this.#eventBudget.set(key, bucket);
        if (ok)
          d.events.event(
            podRef({ metadata: { name: t.name, namespace: t.namespace, uid: t.uid } }, fieldPath(t)),
            e.type,
            e.reason,
            e.message,
          );
        else
          this.#log.v(2, 'Probe event over budget, not sent', {
            pod: t.podName,
            podUID: t.uid,
            container: t.container.name,
            reason: e.reason,
            message: e.message,
          });
      },
      observe: (t, type, result, seconds) => observeProbe(metricTarget(t, type), result === 'Success' ? 'successful' : 'failed', seconds),
      deleting: () => false,
      kubeletStartMs: now(),
      now,
      random: d.random ?? Math.random,
      log: d.log,
    };
  }

  /**
   * What runs of a pod, after a sync: probe each running instance of a container that has
   * probes (a new instance starts fresh), and stop probing instances that stopped.
   */
  update(pod: Pod, rt: PodRuntimeStatus, podIP: string | undefined): void {
    const uid = pod.metadata!.uid!;
    if (pod.metadata?.deletionTimestamp) this.#deleting.add(uid);
    const wanted = new Set<string>();
    const probed: [Container, boolean][] = [
      ...(pod.spec?.containers ?? []).map((c): [Container, boolean] => [c, false]),
      // Only sidecars among init containers may have probes.
      ...(pod.spec?.initContainers ?? []).filter(isSidecar).map((c): [Container, boolean] => [c, true]),
    ];
    for (const [c, init] of probed) {
      const s = latest(rt, c.name);
      for (const type of TYPES) {
        const probe = probeOf(c, type);
        if (!probe) continue;
        const key = `${uid}/${c.name}/${type}`;
        wanted.add(key);
        const w = this.#workers.get(key);
        const running = s?.phase === 'running';
        if (w && (!running || w.target.containerId !== s.id)) this.#stopWorker(key, w, false);
        if (!running || (w && w.target.containerId === s.id)) continue;
        const target: WorkerTarget = {
          uid,
          namespace: pod.metadata!.namespace!,
          name: pod.metadata!.name!,
          podName: `${pod.metadata!.namespace}/${pod.metadata!.name}`,
          container: c,
          containerId: s.id,
          podIP,
          init,
          startedAtMs: s.startedAtNs ? Number(BigInt(s.startedAtNs) / 1_000_000n) : this.#deps.now(),
        };
        const nw = new ProbeWorker(type, probe, target, { ...this.#deps, deleting: () => this.#deleting.has(uid) });
        this.#workers.set(key, nw);
        nw.start();
      }
    }
    // A container no longer in the spec (or without that probe now): its series go too.
    for (const [key, w] of this.#workers) if (key.startsWith(`${uid}/`) && !wanted.has(key)) this.#stopWorker(key, w, true);
  }

  /** The pod is terminating or gone: stop all its probes. */
  removePod(uid: string): void {
    for (const [key, w] of this.#workers) if (key.startsWith(`${uid}/`)) this.#stopWorker(key, w, true);
    this.#deleting.delete(uid);
    for (const key of this.#eventBudget.keys()) if (key.startsWith(`${uid}/`)) this.#eventBudget.delete(key);
  }

  /** For generatePodStatus: whether the instance is ready and started, as far as its probes tell. */
  status = (containerId: string) => this.results.status(containerId);
  /** For computePodActions: the instance's liveness and startup states. */
  health = (containerId: string): { liveness?: Result; startup?: Result } => this.results.health(containerId);

  stop(): void {
    for (const [key, w] of this.#workers) this.#stopWorker(key, w, false);
  }

  #stopWorker(key: string, w: ProbeWorker, forget: boolean) {
    w.stop();
    this.#workers.delete(key);
    this.results.remove(w.target.containerId, w.type);
    // The counters of a container carry over its restarts, as upstream's per-container worker keeps them.
    if (forget) forgetProbe(metricTarget(w.target, w.type));
  }
}

const metricTarget = (t: WorkerTarget, type: ProbeType): ProbeTarget => ({
  probeType: type,
  container: t.container.name,
  pod: t.name,
  namespace: t.namespace,
  podUID: t.uid,
});

const fieldPath = (t: WorkerTarget) => `${t.init ? 'spec.initContainers' : 'spec.containers'}{${t.container.name}}`;
