// In-place pod resize on the kubelet's side (upstream's handlePodResourcesResize and
// doPodResizeAction): a resize of the spec (containers' resources or the pod's own,
// spec.resources) is allocated when it fits (or left pending), the pod cgroup grows before and
// shrinks after its containers, running containers get their new limits through CRI
// UpdateContainerResources, and the status shows allocated and actual resources with the
// resize conditions. The decisions are in decide.ts; src/pods/sync-pod.ts calls the allocation
// (allocate, state), the CRI executor's resize.ts and start-container.ts the actuation.
import type { Container, Pod, ResourceRequirements } from 'kubernetes-types/core/v1.js';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { podRef, type Recorder } from '../events/recorder.ts';
import type { Logger } from '../log/log.ts';
import { podKey, initAndAppContainers } from '../podutil/podutil.ts';
import type { ActualOf, PodActions } from '../runtime/actions.ts';
import type { RuntimeView } from '../runtime/cri-runtime.ts';
import { containerFieldPath, podCgroup } from '../runtime/pod-config.ts';
import { latest, type PodRuntimeStatus, type ResizeState } from '../container/types.ts';
import { containerCgroupOf, DEFAULT_LAYOUT, type CgroupLayout } from '../resources/cgroup-layout.ts';
import { cgroupfsManager, type CgroupManager } from '../resources/cgroup-manager.ts';
import { podCgroupLimits, sameLimits, widenLimits } from '../resources/pod-cgroup.ts';
import { AllocationManager } from './allocation.ts';
import {
  staticCPUResizeVerdict,
  admitResize,
  containerStatusResources,
  effectiveResources,
  podLevelResizeNeeded,
  resizeRequested,
  specAllocation,
  withAllocation,
  type Allocation,
} from './decide.ts';
import { type CFS, cpuAndMemory, DEFAULT_CFS, fromLinux, linuxResources, sameLinux, sameResources } from '../resources/linux-resources.ts';
import { podSpecResources } from '../resources/pod-resources.ts';
import { jittered } from '../backoff/backoff.ts';
import { RETRY_PERIOD_MS, retryOrder, type RetryTrigger } from './retry.ts';

/** The runtime calls in-place resize makes: new cgroup settings for a container, and the view told of them. */
export interface ResizeRuntime {
  cri: Pick<RuntimeClient, 'updateContainerResources'>;
  view: Pick<RuntimeView, 'noteResources'>;
}

/** The pod cgroup as in-place resize reads and writes it (the node's cgroup manager; a fake in tests). */
export type PodCgroupIO = Pick<CgroupManager, 'read' | 'update' | 'memoryUsage'>;

/** What in-place resize needs from the kubelet: the node's allocatable and the pods that hold resources on it. */
export interface ResizeDeps {
  allocatable: () => Record<string, string> | undefined;
  /** The pods admitted and not finished (this one among them or not). */
  activePods: () => Pod[];
  /** The allocation checkpoint (upstream: ROOT/allocated_pods_state); default: memory only. */
  checkpointFile?: string;
  /** The cgroup driver and cgroupRoot: where pod cgroups are; default cgroupfs below '/'. */
  cgroups?: CgroupLayout;
  /** Default: the host's cgroup v1 files. */
  podCgroupIO?: PodCgroupIO;
  /** KubeletConfiguration cpuCFSQuota and cpuCFSQuotaPeriod; default: quota on, 100 ms. */
  cfs?: CFS;
  /** KubeletConfiguration cpuManagerPolicy: with static a Guaranteed pod's cpu cannot be resized. */
  cpuManagerPolicy?: string;
  /** A resize refused by the admit handler, with upstream's reason_detail (kubelet_pod_infeasible_resizes_total). */
  infeasible?: (reasonDetail: string) => void;
  /** A deferred resize accepted on a retry, with its trigger (kubelet_pod_deferred_accepted_resizes_total). */
  deferredAccepted?: (trigger: RetryTrigger) => void;
  /** The pod the kubelet has now for a UID (the pod manager's), for a retry. */
  podOf?: (uid: string) => Pod | undefined;
  /** Syncs a pod again: its resize was accepted, or its verdict changed, on a retry. */
  wake?: (uid: string) => void;
  /** All pod sources have been seen once: before, a retry waits (upstream's sourcesReady). */
  sourcesReady?: () => boolean;
}

/** Upstream's initialRetryDelay: a retry asked before the pod sources are ready is put off this long. */
const SOURCES_WAIT_MS = 30_000;

type Pending = NonNullable<ResizeState['pending']>;

/** The resize events' summary of a pod's resources, as upstream's: containers with their resources, and the generation. */
function resizeSummary(pod: Pod, allocated: Allocation): string {
  const list = (cs: Container[] | undefined) =>
    (cs ?? []).map((c) => ({ name: c.name, resources: allocated.containers[c.name] ?? cpuAndMemory(c.resources) }));
  const inits = list(pod.spec?.initContainers);
  return JSON.stringify({
    ...(inits.length ? { initContainers: inits } : {}),
    containers: list(pod.spec?.containers),
    generation: pod.metadata?.generation ?? 0,
  });
}

export class PodResizer {
  readonly #deps: ResizeDeps & ResizeRuntime & { events: Recorder; log: Logger };
  readonly #io: PodCgroupIO;
  readonly #allocation: AllocationManager;
  /**
   * The cpu and memory each container instance was created or last updated with, by pod UID and
   * container ID: its effective ones, pod-level limits included (upstream's actuated state).
   */
  readonly #actuated = new Map<string, Map<string, ResourceRequirements>>();
  /** The pod-level cpu and memory (spec.resources) the pod cgroup was created or last resized with, by pod UID. */
  readonly #actuatedPod = new Map<string, ResourceRequirements | undefined>();
  /** The last PodResizePending reason and generation per pod (its event goes out once), and pods with a resize under way. */
  readonly #pendingSeen = new Map<string, string>();
  readonly #resizing = new Set<string>();
  /**
   * Deferred resizes by pod UID (upstream's podsWithPendingResizes): since when, for which
   * generation, with which verdict. A sync does not try one again; a retry does.
   */
  readonly #deferred = new Map<string, { sinceMs: number; generation?: number; pending: Pending }>();
  /** Resizes requested since the last retry, to be tried in the next one (upstream's PushPendingResize). */
  readonly #pushed = new Set<string>();
  #retryTimer?: NodeJS.Timeout;

  /** Built by the kubelet and handed to PodSyncer (src/pods/sync-pod.ts); allocatable and activePods default to none (tests). */
  constructor(deps: Partial<ResizeDeps> & ResizeRuntime & { events: Recorder; log: Logger }) {
    this.#deps = { allocatable: () => undefined, activePods: () => [], ...deps };
    this.#io = deps.podCgroupIO ?? cgroupfsManager();
    this.#allocation = new AllocationManager({
      file: deps.checkpointFile,
      onError: (message, e) => deps.log.warn(message, { err: e }),
    });
  }

  /**
   * Upstream's handlePodResourcesResize: the spec's cpu and memory become the pod's allocation
   * when they fit on the node next to the other pods' allocations; otherwise the resize waits
   * (PodResizePending) and the pod keeps what it has.
   */
  allocate(pod: Pod, trigger?: RetryTrigger): { allocated: Allocation; pending?: ResizeState['pending'] } {
    const uid = pod.metadata!.uid!;
    const allocated = this.#allocation.get(pod);
    if (!resizeRequested(pod, allocated)) {
      this.#pendingSeen.delete(uid);
      this.#deferred.delete(uid);
      return { allocated };
    }
    const generation = pod.metadata?.generation;
    const held = this.#deferred.get(uid);
    // A deferred resize of this generation waits for a retry, as upstream's: a sync alone does not try it.
    if (!trigger && held && held.generation === generation) return { allocated, pending: held.pending };
    const others = (this.#deps.activePods() ?? [])
      .filter((p) => p.metadata?.uid !== uid)
      .map((p) => {
        const a = this.#allocation.peek(p.metadata!.uid!);
        return a ? withAllocation(p, a) : p;
      });
    const pinned =
      this.#deps.cpuManagerPolicy === 'static' ? staticCPUResizeVerdict(pod, (n) => allocated.containers[n]?.requests?.cpu) : undefined;
    const verdict = pinned && !pinned.ok ? pinned : admitResize(pod, others, this.#deps.allocatable());
    this.#deferred.delete(uid);
    if (verdict.ok) {
      if (held && trigger) this.#deps.deferredAccepted?.(trigger);
      const spec = specAllocation(pod);
      const accepted: Allocation = { ...spec, containers: { ...allocated.containers, ...spec.containers } };
      this.#allocation.set(uid, accepted);
      this.#pendingSeen.delete(uid);
      this.#resizing.add(uid);
      this.#deps.events.event(podRef(pod), 'Normal', 'ResizeStarted', `Pod resize started: ${resizeSummary(pod, accepted)}`);
      this.#deps.log.info('Pod resize accepted', { pod: podKey(pod), podUID: uid, generation });
      return { allocated: accepted };
    }
    const seen = `${verdict.reason}/${generation}`;
    if (this.#pendingSeen.get(uid) !== seen) {
      this.#pendingSeen.set(uid, seen);
      // Once a resize, as upstream's podResizesAdmitHandler counts it (an infeasible resize is not retried there).
      if (pinned && !pinned.ok) this.#deps.infeasible?.('guaranteed_pod_cpu_manager_static_policy');
      this.#deps.events.event(
        podRef(pod),
        'Warning',
        verdict.reason === 'Infeasible' ? 'ResizeInfeasible' : 'ResizeDeferred',
        `Pod resize ${verdict.reason}: ${verdict.message}`,
      );
      this.#deps.log.info('Pod resize cannot be allocated', {
        pod: podKey(pod),
        podUID: uid,
        reason: verdict.reason,
        message: verdict.message,
      });
    }
    const pending = { reason: verdict.reason, message: verdict.message, generation };
    if (verdict.reason === 'Deferred') this.#deferred.set(uid, { sinceMs: held?.sinceMs ?? Date.now(), generation, pending });
    return { allocated, pending };
  }

  /**
   * A pod from its source: added (pods_added: one whose resize was deferred before a kubelet
   * restart, its PodResizePending condition backfilled as upstream's BackfillPodResizeConditions)
   * or updated (pod_updated). A resize it requests is tried now, with the deferred ones, in
   * their order (upstream's HandlePodAdditions and HandlePodUpdates).
   */
  podChanged(pod: Pod, trigger: 'pods_added' | 'pod_updated'): void {
    const uid = pod.metadata!.uid!;
    const known = trigger === 'pods_added' ? this.#allocation.peek(uid) : this.#allocation.get(pod);
    if (!known || !resizeRequested(pod, known)) return;
    const deferred = pod.status?.conditions?.find((c) => c.type === 'PodResizePending' && c.reason === 'Deferred');
    if (trigger === 'pods_added' && deferred) {
      const pending = { reason: 'Deferred' as const, message: deferred.message ?? '', generation: pod.metadata?.generation };
      this.#deferred.set(uid, {
        sinceMs: Date.parse(deferred.lastTransitionTime ?? '') || Date.now(),
        generation: pending.generation,
        pending,
      });
      this.#pendingSeen.set(uid, `Deferred/${pending.generation}`);
    }
    this.#pushed.add(uid);
    this.retryPendingResizes(trigger);
  }

  /**
   * Upstream's RetryPendingResizes: each deferred (or newly requested) resize tried again in
   * retryOrder, each accepted one taking its room before the next is tried; a pod whose resize
   * was accepted or whose verdict changed is synced. Also every RETRY_PERIOD_MS after the last.
   */
  retryPendingResizes(trigger: RetryTrigger): void {
    if (!this.#deferred.size && !this.#pushed.size) return;
    if (this.#deps.sourcesReady && !this.#deps.sourcesReady()) {
      this.#armRetry(SOURCES_WAIT_MS);
      return;
    }
    this.#armRetry(RETRY_PERIOD_MS);
    const entries = [...new Set([...this.#deferred.keys(), ...this.#pushed])].flatMap((uid) => {
      const pod = this.#deps.podOf?.(uid);
      if (!pod) this.#deferred.delete(uid);
      return pod ? [{ uid, pod, allocated: this.#allocation.get(pod), deferredSinceMs: this.#deferred.get(uid)?.sinceMs }] : [];
    });
    this.#pushed.clear();
    const byUID = new Map(entries.map((e) => [e.uid, e.pod]));
    for (const uid of retryOrder(entries)) {
      const before = this.#deferred.get(uid)?.pending;
      const { pending } = this.allocate(byUID.get(uid)!, trigger);
      if (!before || pending?.reason !== before.reason || pending.message !== before.message) this.#deps.wake?.(uid);
    }
  }

  /** The periodic retry, due this long from now (each retry puts it off again, as upstream's ticker Reset). */
  #armRetry(ms: number): void {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(() => this.retryPendingResizes('periodic_retry'), jittered(ms, 0.1));
    this.#retryTimer.unref();
  }

  /** The periodic retry stopped (the kubelet stops). */
  stop(): void {
    clearTimeout(this.#retryTimer);
  }

  /**
   * What a running container instance runs with (effective: pod-level limits included): what it
   * was created or updated with, else what the runtime reports.
   */
  actualOf(uid: string, allocated: Allocation): ActualOf {
    const known = this.#actuated.get(uid);
    return (s) => {
      const mine = known?.get(s.id);
      if (mine) return mine;
      const a = allocated.containers[s.name];
      return s.linux && a ? fromLinux(s.linux, effectiveResources(a, allocated.pod), this.#deps.cfs) : undefined;
    };
  }

  noteActuated(uid: string, containerId: string, r: ResourceRequirements) {
    let m = this.#actuated.get(uid);
    if (!m) this.#actuated.set(uid, (m = new Map()));
    m.set(containerId, r);
  }

  /**
   * The pod-level cpu and memory the pod cgroup was created or last resized with. Unknown after
   * a kubelet restart: then taken to be the allocated ones (a pod-level resize the restart
   * interrupted is not finished; one of its containers is).
   */
  #podActuated(uid: string, allocated: Allocation): ResourceRequirements | undefined {
    if (!this.#actuatedPod.has(uid)) this.#actuatedPod.set(uid, allocated.pod);
    return this.#actuatedPod.get(uid);
  }

  /** The pod cgroup was set up with the pod's (allocated) pod-level resources, as upstream's UpdateActuatedPodLevelResources. */
  notePodActuated(pod: Pod): void {
    this.#actuatedPod.set(pod.metadata!.uid!, cpuAndMemory(podSpecResources(pod)));
  }

  /**
   * Upstream's computePodLevelResourcesResizeAction (UpdatePodLevelResources): the pod (with its
   * allocation) has other pod-level cpu or memory than its pod cgroup was last set to.
   */
  podLevelResize(pod: Pod): boolean {
    const uid = pod.metadata!.uid!;
    const allocated = specAllocation(pod);
    return podLevelResizeNeeded(allocated.pod, this.#podActuated(uid, allocated));
  }

  /**
   * allocatedResources, resources and the resize conditions for pod status; PodResizeInProgress
   * while a running container, or the pod cgroup, differs from the allocation (upstream's
   * IsPodResizeInProgress).
   */
  state(pod: Pod, allocated: Allocation, runtime: PodRuntimeStatus, pending: ResizeState['pending'], errors: string[]): ResizeState {
    const uid = pod.metadata!.uid!;
    const actualOf = this.actualOf(uid, allocated);
    const actual: Record<string, ResourceRequirements> = {};
    let differs = false;
    for (const c of initAndAppContainers(pod)) {
      const s = latest(runtime, c.name);
      if (s?.phase !== 'running') continue;
      const mine = allocated.containers[c.name] ?? cpuAndMemory(c.resources);
      const want = effectiveResources(mine, allocated.pod);
      const a = actualOf(s) ?? want;
      actual[s.id] = containerStatusResources(mine, a);
      if (allocated.containers[c.name] && !sameResources(a, want)) differs = true;
    }
    if (runtime.sandboxes[0]?.ready && podLevelResizeNeeded(allocated.pod, this.#podActuated(uid, allocated))) differs = true;
    // Forget instances that are gone.
    const known = this.#actuated.get(uid);
    if (known) for (const id of known.keys()) if (!runtime.containers.some((s) => s.id === id)) known.delete(id);
    const generation = pod.metadata?.generation;
    const inProgress = errors.length ? { reason: 'Error', message: errors.join('; '), generation } : differs ? { generation } : undefined;
    if (this.#resizing.has(uid) && !inProgress && !pending) {
      this.#resizing.delete(uid);
      this.#deps.events.event(podRef(pod), 'Normal', 'ResizeCompleted', `Pod resize completed: ${resizeSummary(pod, allocated)}`);
    }
    const path = podCgroup(pod, this.#deps.cgroups);
    const cgroup = runtime.sandboxes[0]?.ready && path ? this.#io.read(path) : undefined;
    return {
      allocated: allocated.containers,
      ...(allocated.pod ? { allocatedPod: allocated.pod } : {}),
      ...(cgroup ? { podCgroup: cgroup } : {}),
      actual,
      ...(pending ? { pending } : {}),
      ...(inProgress ? { inProgress } : {}),
    };
  }

  /**
   * The cgroup side of in-place resize (upstream's doPodResizeAction): the pod cgroup grows
   * first, then the containers get their new limits, then the pod cgroup shrinks, so that no
   * child ever exceeds its parent (cgroup v1 refuses a child CFS quota above the parent's).
   * Each of cpu.shares, the CFS quota and the memory limit moves on its own, so a resize that
   * raises one and lowers another is ordered right for both. Grows it now; returns what
   * shrinks it to its final limits once the containers are done, and then records the pod-level
   * resources as actuated. Failures go to errors (PodResizeInProgress, reason Error).
   */
  growPodCgroup(pod: Pod, ref: object, errors: string[] = []): () => void {
    const path = podCgroup(pod, this.#deps.cgroups),
      target = podCgroupLimits(pod, -1, this.#deps.cfs);
    // Without cgroupsPerQOS there is no pod cgroup: podContainerManagerNoop.SetPodCgroupConfig does
    // nothing (upstream's doPodResizeAction then dereferences the nil config GetPodCgroupConfig
    // returns; here the containers are still resized).
    if (!path) return () => this.notePodActuated(pod);
    const current = this.#io.read(path);
    const fail = (what: string, e: unknown) => {
      const message = `failed to ${what} the pod cgroup: ${(e as Error).message}`;
      errors.push(message);
      this.#deps.events.event(podRef(pod), 'Warning', 'ResizeError', `Pod resize error: ${message}`);
      this.#deps.log.error('Cannot resize the pod cgroup', { ...ref, err: e });
    };
    // No pod cgroup here (no cgroup filesystem): nothing to resize.
    if (!current || sameLimits(current, target)) return () => this.notePodActuated(pod);
    const widened = widenLimits(current, target);
    let grown = true;
    try {
      if (!sameLimits(widened, current)) this.#io.update(path, widened);
    } catch (e) {
      grown = false;
      fail('grow', e);
    }
    return () => {
      if (!grown) return;
      try {
        if (!sameLimits(widened, target)) this.#io.update(path, target);
        this.notePodActuated(pod);
        this.#deps.log.info('Resized the pod cgroup', { ...ref, cgroup: path, limits: target });
      } catch (e) {
        fail('set', e);
      }
    };
  }

  /**
   * Upstream's validateMemoryResize: a memory limit that is added or lowered, for a container or
   * the pod, must stay above current usage. The error, or undefined.
   */
  memoryBelowUsage(pod: Pod, actions: PodActions, status: PodRuntimeStatus, actualOf: ActualOf): string | undefined {
    // Without cgroupsPerQOS there is no pod cgroup, nor its usage: only the containers' are checked.
    const path = podCgroup(pod, this.#deps.cgroups);
    const errs: string[] = [];
    const podLimit = podCgroupLimits(pod).memoryLimitBytes,
      podNow = path ? this.#io.read(path)?.memoryLimitBytes : undefined;
    if (path && podLimit !== undefined && (podNow === undefined || podLimit < podNow)) {
      const usage = this.#io.memoryUsage(path);
      if (usage !== undefined && usage >= podLimit)
        errs.push(`attempting to set pod memory limit (${podLimit}) below current usage (${usage})`);
    }
    for (const u of actions.containersToUpdate) {
      if (!u.changed.includes('memory')) continue;
      // Both effective: a limit the container gets from the pod counts as its own.
      const want = linuxResources(u.resources).memoryLimitInBytes;
      const s = status.containers.find((x) => x.id === u.id)!;
      const before = actualOf(s);
      const now = before ? linuxResources(before).memoryLimitInBytes : 0;
      if (!want || (now && want >= now)) continue;
      const cgroup = containerCgroupOf(this.#deps.cgroups ?? DEFAULT_LAYOUT, path, u.id);
      const usage = cgroup === undefined ? undefined : this.#io.memoryUsage(cgroup);
      if (usage !== undefined && usage >= want)
        errs.push(`attempting to set container "${u.name}" memory limit (${want}) below current usage (${usage})`);
    }
    return errs.length ? `cannot decrease memory limits: ${errs.length > 1 ? `[${errs.join(', ')}]` : errs[0]}` : undefined;
  }

  /** In-place updates of running containers (CRI UpdateContainerResources); failures are collected for PodResizeInProgress. */
  async updateContainers(pod: Pod, actions: PodActions, status: PodRuntimeStatus, actualOf: ActualOf, errors: string[], ref: object) {
    const uid = pod.metadata!.uid!,
      cfs = this.#deps.cfs ?? DEFAULT_CFS;
    for (const u of actions.containersToUpdate) {
      const s = status.containers.find((x) => x.id === u.id)!;
      // u.resources and before are effective (pod-level limits included).
      const want = linuxResources(u.resources, undefined, cfs);
      const before = actualOf(s);
      try {
        // Equivalent values (2m and 1m of cpu both make 2 shares) need no call, only bookkeeping.
        if (!before || !sameLinux(want, linuxResources(before, undefined, cfs))) {
          // Zero leaves a value alone in the runtime: an unlimited one is -1. With CFS quota
          // off neither quota nor period is set (calculateLinuxResources).
          await this.#deps.cri.updateContainerResources({
            containerId: u.id,
            linux: {
              cpuShares: want.cpuShares,
              cpuPeriod: want.cpuPeriod,
              cpuQuota: cfs.quota ? want.cpuQuota || -1 : 0,
              memoryLimitInBytes: want.memoryLimitInBytes || -1,
            },
          });
          this.#deps.view.noteResources(u.id, want);
        }
        this.noteActuated(uid, u.id, u.resources);
        this.#deps.log.info('Resized container', { ...ref, container: u.name, containerID: u.id, resources: u.changed });
      } catch (e) {
        const message = `failed to resize container ${u.name}: ${(e as Error).message}`;
        errors.push(message);
        this.#deps.events.event(podRef(pod, containerFieldPath(pod, u.name)), 'Warning', 'ResizeError', `Pod resize error: ${message}`);
        this.#deps.log.error('Failed to resize container', { ...ref, container: u.name, containerID: u.id, err: e });
      }
    }
  }

  /** A pod that is gone: nothing of it is kept. */
  forget(uid: string): void {
    this.#actuated.delete(uid);
    this.#actuatedPod.delete(uid);
    this.#allocation.remove(uid);
    this.#pendingSeen.delete(uid);
    this.#resizing.delete(uid);
    this.#deferred.delete(uid);
    this.#pushed.delete(uid);
  }
}
