// One probe worker: one probe type of one container instance, probing every periodSeconds
// until stopped (the container stopped, was replaced, or its pod went). A new instance
// gets a new worker, so its thresholds and hold start fresh. Upstream's prober/worker.go.
import type { Container, Probe } from 'kubernetes-types/core/v1.js';
import type { ProbeResults } from './results.ts';
import {
  freshState,
  initialResult,
  nextProbeState,
  probeGate,
  probeTiming,
  type ProbeTiming,
  type ProbeType,
  type WorkerState,
} from './state.ts';
import { interpretOutcome, type Outcome, type ProbeEvent } from './outcome.ts';
import type { ProbeSubject } from './run.ts';
import type { Logger } from '../log/log.ts';

export interface WorkerTarget extends ProbeSubject {
  uid: string;
  namespace: string;
  /** The pod's name (podName is namespace/name). */
  name: string;
  /** A sidecar (an init container): events name it by spec.initContainers. */
  init: boolean;
  /** When the instance started (ms since the epoch): initialDelaySeconds counts from here. */
  startedAtMs: number;
}

export interface WorkerDeps {
  run(p: Probe, t: WorkerTarget, timeoutSeconds: number): Promise<Outcome>;
  results: ProbeResults;
  event(t: WorkerTarget, e: ProbeEvent): void;
  observe(t: WorkerTarget, type: ProbeType, result: 'Success' | 'Failure', seconds: number): void;
  /** The pod is being deleted. */
  deleting(): boolean;
  /** When the kubelet started (ms): workers started within a period of it wait a random part of it first. */
  kubeletStartMs: number;
  now(): number;
  random(): number;
  log: Logger;
}

export class ProbeWorker {
  readonly type: ProbeType;
  readonly target: WorkerTarget;
  readonly #probe: Probe;
  readonly #timing: ProbeTiming;
  readonly #d: WorkerDeps;
  #state: WorkerState = freshState();
  #timer?: NodeJS.Timeout;
  #inFlight = false;
  #stopped = false;

  constructor(type: ProbeType, probe: Probe, target: WorkerTarget, d: WorkerDeps) {
    this.type = type;
    this.#probe = probe;
    this.target = target;
    this.#d = d;
    this.#timing = probeTiming(probe);
    d.results.set(target.uid, target.containerId, type, initialResult[type], true);
  }

  start(): void {
    const period = this.#timing.periodSeconds * 1000;
    const now = this.#d.now();
    // Upstream: after a kubelet restart, all probes would start at once; spread them over a period.
    const jitter = period > now - this.#d.kubeletStartMs ? this.#d.random() * period : 0;
    // No probe before initialDelaySeconds: wait for it rather than for the next tick.
    const delay = this.target.startedAtMs + this.#timing.initialDelaySeconds * 1000 - now;
    this.#schedule(Math.max(jitter, delay, 0));
  }

  /** Probe now (the container just started, so readiness need not wait a period). */
  trigger(): void {
    if (!this.#stopped && !this.#inFlight) this.#schedule(0);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #schedule(ms: number) {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#tick(), ms);
  }

  async #tick() {
    const began = this.#d.now();
    this.#inFlight = true;
    try {
      await this.#doProbe();
    } catch (e) {
      // As upstream's worker, a probe that blew up does not end the probing.
      const t = this.target;
      this.#d.log.error('Probe worker error', { pod: t.podName, podUID: t.uid, container: t.container.name, probeType: this.type, err: e });
    } finally {
      this.#inFlight = false;
    }
    if (!this.#stopped) this.#schedule(Math.max(0, this.#timing.periodSeconds * 1000 - (this.#d.now() - began)));
  }

  async #doProbe() {
    const t = this.target;
    const { results } = this.#d;
    const started = !t.container.startupProbe || results.get(t.containerId, 'Startup') === 'Success';
    const gate = probeGate({
      type: this.type,
      onHold: this.#state.onHold,
      startedAtMs: t.startedAtMs,
      nowMs: this.#d.now(),
      initialDelaySeconds: this.#timing.initialDelaySeconds,
      started,
      deleting: this.#d.deleting(),
    });
    if (gate === 'succeed') {
      results.set(t.uid, t.containerId, this.type, 'Success');
      this.stop();
      return;
    }
    if (gate === 'wait') return;
    const began = this.#d.now();
    const outcome = await this.#d.run(this.#probe, t, this.#timing.timeoutSeconds);
    if (this.#stopped) return;
    const { result, event } = interpretOutcome(this.type, outcome);
    if (event) this.#d.event(t, event);
    if (!result) return; // it errored: thrown away, as upstream
    this.#d.observe(t, this.type, result, (this.#d.now() - began) / 1000);
    const next = nextProbeState(this.type, this.#timing, this.#state, result);
    this.#state = next.state;
    if (next.publish) results.set(t.uid, t.containerId, this.type, next.publish);
  }
}

export const probeOf = (c: Container, type: ProbeType): Probe | undefined =>
  type === 'Liveness' ? c.livenessProbe : type === 'Readiness' ? c.readinessProbe : c.startupProbe;
