// Reads the runtime's view of pods over CRI into plain PodRuntimeStatus data.
// Lists are cheap (~5 ms for 20 pods) and shared by the calls that overlap; per-object
// status calls are not, so their answers are cached while the object's state is unchanged.
import type { RuntimeClient } from '../cri/runtime-client.ts';
import type { Container__Output } from '../cri/generated/runtime/v1/Container.ts';
import type { PodSandbox__Output } from '../cri/generated/runtime/v1/PodSandbox.ts';
import type { ContainerStatus__Output } from '../cri/generated/runtime/v1/ContainerStatus.ts';
import { terminationMessage } from './termination-message.ts';
import { parseLinux, type LinuxResources } from '../resources/linux-resources.ts';
import { type ContainerPhase, type ContainerState, type PodRuntimeStatus, type SandboxState, labels } from '../container/types.ts';
import { sandboxIPs } from '../network/ips.ts';

const phases: Record<string, ContainerPhase> = {
  CONTAINER_CREATED: 'created',
  CONTAINER_RUNNING: 'running',
  CONTAINER_EXITED: 'exited',
  CONTAINER_UNKNOWN: 'unknown',
};
/**
 * A container's phases in the only order it goes through them (a restart is a new container):
 * a list that shows an earlier phase than a status call already answered began before that call.
 */
const phaseOrder: Partial<Record<ContainerPhase, number>> = { created: 0, running: 1, exited: 2 };
/** Pure: the cached state stands for the listed phase: the same, or later (the list is older than the status call). */
export const cachedStands = (cached: ContainerPhase, listed: ContainerPhase) =>
  cached === listed || (phaseOrder[cached] ?? -1) > (phaseOrder[listed] ?? Infinity);
const newestFirst = (a: { createdAtNs: string }, b: { createdAtNs: string }) => (BigInt(b.createdAtNs) > BigInt(a.createdAtNs) ? 1 : -1);
// Sandboxes and a container's instances by attempt, which only grows: a sandbox whose network
// setup failed can carry no creation time, and creation times are the wall clock's, which a step
// back (NTP, a restored VM) puts out of order; the kubelet would then take an exited instance for
// the latest and leave the one that runs unprobed and unreported.
const newestAttemptFirst = (a: { attempt: number; createdAtNs: string }, b: { attempt: number; createdAtNs: string }) =>
  b.attempt - a.attempt || newestFirst(a, b);

/** The runtime's message, enriched with what the container wrote as its termination message. */
function exitMessage(st: ContainerStatus__Output): string {
  const written = terminationMessage({
    exitCode: st.exitCode,
    reason: st.reason,
    mounts: st.mounts,
    logPath: st.logPath,
    path: st.annotations[labels.terminationMessagePath] ?? '',
    policy: st.annotations[labels.terminationMessagePolicy] ?? '',
  });
  return [st.message, written].filter(Boolean).join(': ');
}

/** One pod's own reads in flight at most; more at once share the next whole list (RuntimeView.pod). */
export const POD_READS_ALONE = 3;

/** A pod the runtime holds nothing of (or not yet: a list fills it in). */
const noPod = (uid: string): PodRuntimeStatus => ({ uid, sandboxes: [], containers: [] });

/** A sandbox's IP fields: none when CRI reports none (host network). */
const withIPs = (ips: string[]) => (ips.length ? { ip: ips[0], ips } : {});

/** ListPodSandbox's and ListContainers' answers, unfiltered. */
export interface RuntimeList {
  sandboxes: PodSandbox__Output[];
  containers: Container__Output[];
}

export class RuntimeView {
  readonly #cri: RuntimeClient;
  /** Each container's state from its last status call (begun at `at`), kept while its listed phase stays. */
  readonly #containers = new Map<string, { state: ContainerState; at: number }>();
  /** Status calls in flight, by container and listed phase: reads that overlap in a burst share one. */
  readonly #statusCalls = new Map<string, Promise<ContainerState | undefined>>();
  /** Each ready sandbox's IPs (begun at `at`), from its status call. */
  readonly #sandboxIPs = new Map<string, { ips: string[]; at: number }>();
  /** The list in flight (when it began, performance.now()), and the one that follows it, shared by whoever asks meanwhile. */
  #running?: { began: number; list: Promise<Map<string, PodRuntimeStatus>> };
  #next?: Promise<Map<string, PodRuntimeStatus>>;
  /** The last list that answered, when it began (performance.now()), and the runtime's answers it was made from. */
  #last?: { began: number; pods: Map<string, PodRuntimeStatus>; listed: RuntimeList };
  /** When the kubelet last changed each pod in the runtime, while no list has begun since. */
  readonly #changed = new Map<string, number>();
  /** Each pod's own last read (pod()), when it began, while no whole list has begun since. */
  readonly #read = new Map<string, { began: number; pod: PodRuntimeStatus }>();
  /** One pod's own reads in flight. */
  #podReads = 0;
  /** Pods whose containers and sandboxes the kubelet is stopping (stopping()), with how many stops run. */
  readonly #stopping = new Map<string, number>();

  constructor(cri: RuntimeClient) {
    this.#cri = cri;
  }

  /**
   * Every pod the runtime knows, by pod UID, from a list begun after this call. Calls made while
   * a list is in flight share the one list that follows it (the PLEG's, housekeeping's and the
   * stats' reads; one pod's own reads list that pod alone, pod()).
   *
   * With maxAgeMs, the last list will do when it began at most that long ago and the kubelet has
   * changed no pod in the runtime since: upstream's runtimeCache (GetPods lists again once its copy
   * is 2 s old), for housekeeping, log rotation and the stats. The PLEG lists every 10 s with the
   * runtime's events up and at once after each event that matters, every second without them, so
   * that list is as fresh.
   */
  pods(maxAgeMs = 0): Promise<Map<string, PodRuntimeStatus>> {
    const last = this.#last;
    const now = performance.now();
    if (maxAgeMs && last && !this.#changed.size && now - last.began <= maxAgeMs) return Promise.resolve(last.pods);
    const running = this.#running;
    if (!running) {
      const list = this.#list(now).finally(() => (this.#running = undefined));
      this.#running = { began: now, list };
      return list;
    }
    // The list in flight will do too when it is that young and began after the kubelet's last change
    // (the stats ask for sandboxes and containers at once: one list, not one and the next).
    if (maxAgeMs && now - running.began <= maxAgeMs && [...this.#changed.values()].every((at) => at < running.began)) return running.list;
    this.#next ??= running.list
      .catch(() => {})
      .then(() => {
        this.#next = undefined;
        return this.pods();
      });
    return this.#next;
  }

  /**
   * The runtime's own answers behind pods(maxAgeMs), for a reader that needs what the view does not
   * keep (the stats: pod names, namespaces, labels), so that it makes no list of its own.
   */
  async listed(maxAgeMs = 0): Promise<RuntimeList> {
    await this.pods(maxAgeMs);
    return this.#last!.listed;
  }

  /**
   * One pod's state, read now from lists of its own sandboxes and containers (a filter on the pod's
   * UID label, as upstream's GetPodStatus lists a pod's sandboxes): what a sync reads after it
   * changed the pod, and the PLEG after CRI said one of its containers stopped. containerd still
   * walks every container for the filter, but the kubelet decodes one pod's, not the node's: a
   * burst of exits, each with its relist and syncs, cost two whole lists a read before. The read
   * is kept for current() until a whole list begins.
   */
  async pod(uid: string): Promise<PodRuntimeStatus> {
    // Many pods read at once (a burst of starts): they share the next whole list instead.
    // containerd answers a filtered list by converting every container and then filtering, so
    // each one costs the runtime a whole list: at 100 pods, 8 a pod kept it busier than upstream's
    // kubelet (10.8 against 9.4 s of CPU) and its starts slower.
    if (this.#podReads >= POD_READS_ALONE) return (await this.pods()).get(uid) ?? noPod(uid);
    const began = performance.now();
    const filter = { labelSelector: { [labels.podUID]: uid } };
    this.#podReads++;
    const [{ items: sandboxes }, { containers }] = await Promise.all([
      this.#cri.listPodSandbox({ filter }),
      this.#cri.listContainers({ filter }),
    ]).finally(() => this.#podReads--);
    const pod = (await this.#statuses(sandboxes, containers)).get(uid) ?? noPod(uid);
    if (began > (this.#read.get(uid)?.began ?? -Infinity)) this.#read.set(uid, { began, pod });
    return pod;
  }

  /**
   * A pod's state from the newest read begun after the kubelet last changed the pod (the last whole
   * list, the PLEG's; or the pod's own, the PLEG's relist of it after CRI's stopped event, a sync's
   * after its change), else from a new one: upstream's podCache.GetNewerThan, without its wait. A
   * sync woken by the PLEG, a resync and a pod's first sync then read no list of their own; what
   * changed by itself since (an exit) wakes the pod again with the next relist.
   */
  async current(uid: string): Promise<PodRuntimeStatus> {
    const changed = this.#changed.get(uid) ?? -Infinity;
    const last = this.#last;
    const own = this.#read.get(uid);
    if (own && own.began > changed && own.began > (last?.began ?? -Infinity)) return own.pod;
    if (last && last.began > changed) return last.pods.get(uid) ?? noPod(uid);
    return this.pod(uid);
  }

  /** The kubelet has just changed this pod in the runtime (started, stopped, removed something): current() lists again. */
  changed(uid: string): void {
    this.#changed.set(uid, performance.now());
  }

  /**
   * Runs the kubelet's stop of a pod (killPod), then marks it changed. Meanwhile the runtime's
   * stopped events of the pod are the kubelet's own doing, which its caller reads after (the
   * terminate step's final status, a sync's read after its changes): the PLEG does not read the
   * pod for them as well (isStopping). Deleting 30 pods made 70 lists of each kind with that
   * relist, 36 without.
   */
  async stopping(uid: string, stop: () => Promise<void>): Promise<void> {
    this.#stopping.set(uid, (this.#stopping.get(uid) ?? 0) + 1);
    try {
      await stop();
    } finally {
      const left = this.#stopping.get(uid)! - 1;
      if (left) this.#stopping.set(uid, left);
      else this.#stopping.delete(uid);
      this.changed(uid);
    }
  }

  /** The kubelet is stopping this pod (stopping()). */
  isStopping(uid: string): boolean {
    return this.#stopping.has(uid);
  }

  /** A sandbox just created, from its own status call (a list would walk every container for it). */
  async sandboxStatus(id: string): Promise<SandboxState> {
    const at = performance.now();
    const { status: st } = await this.#cri.podSandboxStatus({ podSandboxId: id });
    const ready = st?.state === 'SANDBOX_READY';
    const ips = sandboxIPs(st?.network);
    if (ready) this.#sandboxIPs.set(id, { ips, at });
    return { id, attempt: st?.metadata?.attempt ?? 0, ready, ...withIPs(ips), createdAtNs: st?.createdAt ?? '0' };
  }

  async #list(began: number): Promise<Map<string, PodRuntimeStatus>> {
    const [{ items: sandboxes }, { containers }] = await Promise.all([this.#cri.listPodSandbox({}), this.#cri.listContainers({})]);
    const out = await this.#statuses(sandboxes, containers);
    this.#forgetGone(new Set(containers.map((c) => c.id)), new Set(sandboxes.map((s) => s.id)), began);
    this.#last = { began, pods: out, listed: { sandboxes, containers } }; // lists run one after another (pods())
    for (const [uid, at] of this.#changed) if (at < began) this.#changed.delete(uid);
    for (const [uid, r] of this.#read) if (r.began < began) this.#read.delete(uid);
    return out;
  }

  /** The listed sandboxes and containers by pod UID, newest first. */
  async #statuses(sandboxes: PodSandbox__Output[], containers: Container__Output[]): Promise<Map<string, PodRuntimeStatus>> {
    const out = new Map<string, PodRuntimeStatus>();
    const entry = (u: string) => {
      let p = out.get(u);
      if (!p) out.set(u, (p = noPod(u)));
      return p;
    };
    const sbStates = await Promise.all(sandboxes.map((s) => this.#sandbox(s)));
    sbStates.forEach((s, i) => {
      entry(sandboxes[i]!.metadata?.uid ?? sandboxes[i]!.labels[labels.podUID] ?? '').sandboxes.push(s);
    });
    const ctrStates = await Promise.all(containers.map((c) => this.#container(c)));
    ctrStates.forEach((c, i) => {
      if (c) entry(containers[i]!.labels[labels.podUID] ?? '').containers.push(c);
    });
    for (const p of out.values()) {
      p.sandboxes.sort(newestAttemptFirst);
      p.containers.sort(newestAttemptFirst);
    }
    return out;
  }

  async #sandbox(s: PodSandbox__Output): Promise<SandboxState> {
    const ready = s.state === 'SANDBOX_READY';
    let ips = this.#sandboxIPs.get(s.id)?.ips;
    if (ready && ips === undefined) {
      const at = performance.now();
      const st = await this.#cri.podSandboxStatus({ podSandboxId: s.id });
      ips = sandboxIPs(st.status?.network);
      this.#sandboxIPs.set(s.id, { ips, at });
    }
    return { id: s.id, attempt: s.metadata?.attempt ?? 0, ready, ...withIPs(ips ?? []), createdAtNs: s.createdAt };
  }

  #container(c: Container__Output): Promise<ContainerState | undefined> | ContainerState {
    const phase = phases[c.state] ?? 'unknown';
    const cached = this.#containers.get(c.id)?.state;
    if (cached && cachedStands(cached.phase, phase)) return cached;
    const key = `${c.id} ${phase}`;
    let call = this.#statusCalls.get(key);
    if (!call) {
      call = this.#containerStatus(c).finally(() => this.#statusCalls.delete(key));
      this.#statusCalls.set(key, call);
    }
    return call;
  }

  async #containerStatus(c: Container__Output): Promise<ContainerState | undefined> {
    const at = performance.now();
    try {
      const { status: st } = await this.#cri.containerStatus({ containerId: c.id });
      if (!st) return undefined;
      const imageMounts = st.mounts.flatMap((m) => (m.image?.image ? [m.image.image] : []));
      const state: ContainerState = {
        id: c.id,
        sandboxId: c.podSandboxId,
        name: c.metadata?.name ?? c.labels[labels.containerName] ?? '',
        attempt: c.metadata?.attempt ?? 0,
        phase: phases[st.state] ?? 'unknown',
        // The image as the kubelet named it at creation (the listed config's): containerd's
        // status answers with the image's first tag, another name when one image has several.
        image: c.image?.image || st.image?.image || '',
        imageRef: st.imageRef,
        hash: c.annotations[labels.containerHash] ?? '',
        createdAtNs: st.createdAt,
        startedAtNs: st.startedAt !== '0' ? st.startedAt : undefined,
        finishedAtNs: st.finishedAt !== '0' ? st.finishedAt : undefined,
        ...(st.state === 'CONTAINER_EXITED' ? { exitCode: st.exitCode, reason: st.reason, message: exitMessage(st) } : {}),
        ...(st.resources?.linux ? { linux: parseLinux(st.resources.linux) } : {}),
        ...(st.user?.linux
          ? {
              user: {
                uid: Number(st.user.linux.uid),
                gid: Number(st.user.linux.gid),
                supplementalGroups: st.user.linux.supplementalGroups.map(Number),
              },
            }
          : {}),
        ...(imageMounts.length ? { imageMounts } : {}),
        ...(st.logPath !== undefined ? { logPath: st.logPath } : {}),
      };
      this.#containers.set(c.id, { state, at });
      return state;
    } catch {
      return undefined; // removed between the list and the status call
    }
  }

  /** A container's cgroup settings changed (UpdateContainerResources): the cached state says so, without a status call. */
  noteResources(containerId: string, linux: LinuxResources): void {
    const cached = this.#containers.get(containerId);
    if (cached) this.#containers.set(containerId, { ...cached, state: { ...cached.state, linux } });
  }

  /**
   * What a whole list begun at `began` no longer shows. Not what was read after it began: in a
   * burst, a container or sandbox made after that list began was forgotten as soon as its status
   * was cached, and the next list asked for it again.
   */
  #forgetGone(containers: Set<string>, sandboxes: Set<string>, began: number) {
    for (const [id, { at }] of this.#containers) if (!containers.has(id) && at < began) this.#containers.delete(id);
    for (const [id, { at }] of this.#sandboxIPs) if (!sandboxes.has(id) && at < began) this.#sandboxIPs.delete(id);
  }
}
