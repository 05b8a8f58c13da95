// Executes computePodActions against the runtime: the only place where a pod's
// sandbox and containers are created, started, stopped and removed.
import { mkdirSync, rmSync, readdirSync, rmdirSync } from 'node:fs';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import type { ImagePuller } from '../images/puller.ts';
import type { Recorder } from '../events/recorder.ts';
import { podRef } from '../events/recorder.ts';
import type { Logger } from '../log/log.ts';
import { computePodActions } from './actions.ts';
import type { RuntimeView } from './cri-runtime.ts';
import { containerConfig, podCgroup, podLogDir, sandboxConfig, type NodeContext } from './pod-config.ts';
import { type PodRuntimeStatus, type Waiting, latest } from './types.ts';

export interface SyncResult {
  runtime: PodRuntimeStatus;
  waiting: Map<string, Waiting>;
  /** Sync again after this long, when something waits on a back-off. */
  requeueAfterMs?: number;
}

const CRASH_BACKOFF_INITIAL_MS = 10_000;
const CRASH_BACKOFF_MAX_MS = 300_000;
// A container that ran this long without exiting earns a fresh back-off.
const CRASH_BACKOFF_RESET_MS = 600_000;
// runc needs a moment to deliver SIGKILL after SIGTERM: upstream's minimum.
const MIN_GRACE_SECONDS = 2;

export class PodSyncer {
  readonly #cri: RuntimeClient;
  readonly #view: RuntimeView;
  readonly #images: ImagePuller;
  readonly #events: Recorder;
  readonly #node: NodeContext;
  readonly #log: Logger;
  readonly #crashBackoff = new Map<string, number>();

  constructor(d: { cri: RuntimeClient; view: RuntimeView; images: ImagePuller; events: Recorder; node: NodeContext; log: Logger }) {
    this.#cri = d.cri; this.#view = d.view; this.#images = d.images; this.#events = d.events; this.#node = d.node; this.#log = d.log;
  }

  async syncPod(pod: Pod): Promise<SyncResult> {
    const uid = pod.metadata!.uid!;
    const ref = { pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`, podUID: uid };
    const waiting = new Map<string, Waiting>();
    let requeueAfterMs: number | undefined;
    const requeue = (ms: number) => { requeueAfterMs = Math.min(requeueAfterMs ?? ms, ms); };
    let status = await this.#view.pod(uid);
    const actions = computePodActions(pod, status);
    this.#log.v(4, 'computePodActions', { ...ref, actions });

    if (actions.killPod) {
      await this.killPod(pod, status, MIN_GRACE_SECONDS, 'pod sandbox changed');
      // A sandbox that never got a container (its network setup failed) holds nothing worth keeping.
      for (const sb of status.sandboxes) {
        if (!status.containers.some((c) => c.sandboxId === sb.id)) await this.#cri.removePodSandbox({ podSandboxId: sb.id });
      }
    }
    for (const k of actions.containersToKill) {
      this.#events.event(podRef(pod, `spec.containers{${k.name}}`), 'Normal', 'Killing', `Stopping container ${k.name}`);
      await this.#cri.stopContainer({ containerId: k.id, timeout: this.#grace(pod) });
    }

    let sandboxId = actions.sandboxId;
    const sbConfig = sandboxConfig(pod, actions.sandboxAttempt, this.#node);
    if (actions.createSandbox) {
      // Upstream does not start pod-network sandboxes while the runtime's network is not
      // ready: a sandbox that fails then keeps its name reserved in containerd.
      const notReady = pod.spec?.hostNetwork ? undefined : await this.#networkNotReady();
      if (notReady) {
        this.#events.event(podRef(pod), 'Warning', 'NetworkNotReady', `network is not ready: ${notReady}`);
        for (const c of pod.spec!.containers) waiting.set(c.name, { reason: 'ContainerCreating' });
        return { runtime: status, waiting, requeueAfterMs: 1000 };
      }
      mkdirSync(sbConfig.logDirectory!, { recursive: true });
      try {
        sandboxId = (await this.#cri.runPodSandbox({ config: sbConfig })).podSandboxId;
        this.#log.info('Created pod sandbox', { ...ref, sandboxID: sandboxId, attempt: actions.sandboxAttempt });
      } catch (e) {
        const msg = `Failed to create pod sandbox: ${(e as Error).message}`;
        this.#events.event(podRef(pod), 'Warning', 'FailedCreatePodSandBox', msg);
        this.#log.error('Failed to create pod sandbox', { ...ref, err: e });
        for (const c of pod.spec!.containers) waiting.set(c.name, { reason: 'ContainerCreating' });
        return { runtime: await this.#view.pod(uid), waiting, requeueAfterMs: 2000 };
      }
      status = await this.#view.pod(uid);
    }

    for (const { name } of actions.containersToStart) {
      const c = pod.spec!.containers.find((x) => x.name === name)!;
      const fieldPath = `spec.containers{${name}}`;
      const prev = latest(status, name);
      const key = `${uid}/${name}`;
      if (prev?.phase === 'exited') {
        const wait = this.#crashBackoffRemaining(key, prev.startedAtNs, prev.finishedAtNs);
        if (wait > 0) {
          const message = `back-off ${Math.round(this.#crashBackoff.get(key)! / 1000)}s restarting failed container=${name} pod=${pod.metadata!.name}_${pod.metadata!.namespace}(${uid})`;
          waiting.set(name, { reason: 'CrashLoopBackOff', message });
          this.#events.event(podRef(pod, fieldPath), 'Warning', 'BackOff', 'Back-off restarting failed container');
          requeue(wait);
          continue;
        }
      }
      const pulled = await this.#images.ensure(c, key, (e) => this.#events.event(podRef(pod, fieldPath), e.type, e.reason, e.message));
      if (pulled.waiting) {
        waiting.set(name, pulled.waiting);
        requeue(pulled.waiting.reason === 'ErrImagePull' || pulled.waiting.reason === 'ImagePullBackOff' ? 1000 : 10_000);
        continue;
      }
      const attempt = prev ? prev.attempt + 1 : 0;
      try {
        const { containerId } = await this.#cri.createContainer({ podSandboxId: sandboxId!, config: containerConfig(pod, c, attempt), sandboxConfig: sbConfig });
        this.#events.event(podRef(pod, fieldPath), 'Normal', 'Created', `Created container: ${name}`);
        await this.#cri.startContainer({ containerId });
        this.#events.event(podRef(pod, fieldPath), 'Normal', 'Started', `Started container ${name}`);
        this.#log.info('Started container', { ...ref, container: name, containerID: containerId, attempt });
      } catch (e) {
        const message = (e as Error).message;
        waiting.set(name, { reason: 'CreateContainerError', message });
        this.#events.event(podRef(pod, fieldPath), 'Warning', 'Failed', `Error: ${message}`);
        requeue(10_000);
      }
    }
    return { runtime: actions.containersToStart.length || actions.containersToKill.length ? await this.#view.pod(uid) : status, waiting, requeueAfterMs };
  }

  /** Stops every container (with the grace period) and then the sandbox. Idempotent. */
  async killPod(pod: Pod, status: PodRuntimeStatus, graceSeconds: number, why: string): Promise<void> {
    const grace = Math.max(MIN_GRACE_SECONDS, graceSeconds);
    const running = status.containers.filter((c) => c.phase === 'running' || c.phase === 'unknown');
    await Promise.all(running.map(async (c) => {
      this.#events.event(podRef(pod, `spec.containers{${c.name}}`), 'Normal', 'Killing', `Stopping container ${c.name}`);
      await this.#cri.stopContainer({ containerId: c.id, timeout: grace });
    }));
    for (const sb of status.sandboxes.filter((s) => s.ready)) await this.#cri.stopPodSandbox({ podSandboxId: sb.id });
    this.#log.info('Killed pod', { pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`, podUID: pod.metadata!.uid, reason: why, gracePeriod: grace });
  }

  /** Removes what is left of a pod that is gone: sandboxes (and their containers), logs, cgroups. */
  async removePod(uid: string, pod: Pod | undefined): Promise<void> {
    const status = await this.#view.pod(uid);
    for (const sb of status.sandboxes) {
      await this.#cri.stopPodSandbox({ podSandboxId: sb.id });
      await this.#cri.removePodSandbox({ podSandboxId: sb.id });
    }
    this.#images.forget(`${uid}/`);
    for (const k of this.#crashBackoff.keys()) if (k.startsWith(`${uid}/`)) this.#crashBackoff.delete(k);
    if (pod) {
      rmSync(podLogDir(pod, this.#node.podLogsDir), { recursive: true, force: true });
      removeCgroup(podCgroup(pod));
    }
  }

  /** The runtime's reason when its pod network is not ready, else undefined. */
  async #networkNotReady(): Promise<string | undefined> {
    const { status } = await this.#cri.status({});
    const net = status?.conditions.find((c) => c.type === 'NetworkReady');
    return net?.status ? undefined : `container runtime network not ready: NetworkReady=false reason:${net?.reason ?? ''} message:${net?.message ?? ''}`;
  }

  #grace(pod: Pod) { return Math.max(MIN_GRACE_SECONDS, pod.spec?.terminationGracePeriodSeconds ?? 30); }

  /** ms left of the container's crash back-off; when none, arms the next (doubled) one. */
  #crashBackoffRemaining(key: string, startedNs?: string, finishedNs?: string): number {
    const finished = finishedNs ? Number(BigInt(finishedNs) / 1_000_000n) : Date.now();
    const ran = startedNs ? finished - Number(BigInt(startedNs) / 1_000_000n) : 0;
    if (ran > CRASH_BACKOFF_RESET_MS) this.#crashBackoff.delete(key);
    const delay = this.#crashBackoff.get(key);
    if (delay !== undefined && Date.now() < finished + delay) return finished + delay - Date.now();
    this.#crashBackoff.set(key, delay === undefined ? CRASH_BACKOFF_INITIAL_MS : Math.min(delay * 2, CRASH_BACKOFF_MAX_MS));
    return 0;
  }
}

/** containerd leaves a pod's cgroup directories behind: remove them in every v1 controller. */
function removeCgroup(path: string) {
  let controllers: string[] = [];
  try { controllers = readdirSync('/sys/fs/cgroup'); } catch { return; }
  for (const ctl of controllers) {
    try { rmdirSync(`/sys/fs/cgroup/${ctl}${path}`); } catch { /* absent, or not empty yet: housekeeping retries */ }
  }
}
