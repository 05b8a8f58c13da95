// What the chaos run checks, as pure functions over what it observed: the apiserver's pods
// against the runtime's containers, restarts between two looks at the same pods, what is
// left on the node after every pod is gone, and the kubelet's memory over time.

/** A container as the pod's status shows it. */
export interface ContainerView {
  name: string;
  /** The runtime's id (without `containerd://`), when the status names one. */
  id?: string;
  running: boolean;
  restartCount: number;
  /** lastState.terminated is set: the status says why the container last stopped. */
  lastTerminated: boolean;
  /** The last container had started (lastState.terminated.startedAt): it ran before this one. */
  lastStarted: boolean;
  /**
   * lastState.waiting: the container before this one was created and never started (a kubelet
   * killed between CreateContainer and StartContainer), as upstream shows such an instance.
   */
  lastNeverStarted: boolean;
  /** lastState.terminated.exitCode. */
  lastExitCode?: number;
  /** state.terminated.reason, when the container is terminated. */
  reason?: string;
}

/** A pod as the apiserver shows it. */
export interface PodView {
  /** The API object's uid (a mirror pod's own). */
  uid: string;
  /** The uid the runtime labels its containers with: the static pod's for a mirror pod. */
  runtimeUid: string;
  name: string;
  /** What the churn made it to be (churn.ts), which says what it may do on its own. */
  kind: string;
  deleting: boolean;
  phase: string;
  /** status.reason: why the kubelet failed the pod as a whole (Evicted, OutOfcpu, ...). */
  reason?: string;
  /** The Ready and ContainersReady conditions are True (the churn's pods have no readiness gates). */
  ready: boolean;
  containersReady: boolean;
  containers: ContainerView[];
}

/** A container as the runtime lists it (CRI labels). */
export interface RuntimeContainer {
  id: string;
  podUid: string;
  name: string;
  running: boolean;
}

/**
 * Where the statuses and the runtime disagree: a container the runtime runs that its pod's
 * status does not show running (or shows under another id), one the status shows running
 * that the runtime does not run, and a running container of a pod the apiserver no longer has.
 */
export function divergence(pods: PodView[], runtime: RuntimeContainer[]): string[] {
  const out: string[] = [];
  const byUid = new Map(pods.map((p) => [p.runtimeUid, p]));
  const running = runtime.filter((c) => c.running);
  for (const c of running) {
    const pod = byUid.get(c.podUid);
    if (!pod) out.push(`container ${c.name} (${c.id.slice(0, 12)}) runs for pod uid ${c.podUid}, which the apiserver does not have`);
    else if (!pod.deleting && !pod.containers.some((s) => s.running && s.id === c.id))
      out.push(`${pod.name}/${c.name}: runs as ${c.id.slice(0, 12)}, the status does not show it running`);
  }
  for (const pod of pods) {
    if (pod.deleting) continue;
    for (const s of pod.containers)
      if (s.running && !running.some((c) => c.id === s.id))
        out.push(`${pod.name}/${s.name}: the status shows ${s.id?.slice(0, 12)} running, the runtime does not run it`);
  }
  return out;
}

/** The kinds (churn.ts) whose containers exit or fail their probe by design: only theirs may restart. */
export const MAY_RESTART = new Set(['crashloop', 'failing-probe']);

/**
 * A container that failed by itself (a full disk, say), which its restartPolicy restarts: an
 * exit code of its own, not 0 (done) nor 137 or 143 (killed, by the kubelet or the runtime).
 */
const failedByItself = (code: number | undefined) => code !== undefined && code !== 0 && code !== 137 && code !== 143;

/**
 * Restarts between two looks at the same pods: a restart count that went down, one that went
 * up with no lastState.terminated to say why, a restart of a kind that never asks for one (a
 * healthy container, or one that ran to completion) after its last container had run and did
 * not fail by itself, and a
 * container replaced under the same restart count. A container created but never started (a
 * kubelet killed between CreateContainer and StartContainer) is started anew, as upstream's
 * ShouldContainerBeRestarted does for the created state.
 */
export function restartFindings(before: PodView[], now: PodView[]): string[] {
  const out: string[] = [];
  const prev = new Map(before.map((p) => [p.uid, p]));
  for (const pod of now) {
    const old = prev.get(pod.uid);
    for (const c of pod.containers) {
      const o = old?.containers.find((x) => x.name === c.name);
      const where = `${pod.name}/${c.name}`;
      if (o && c.restartCount < o.restartCount) out.push(`${where}: restartCount went down from ${o.restartCount} to ${c.restartCount}`);
      if (o && c.restartCount > o.restartCount && !c.lastTerminated && !c.lastNeverStarted)
        out.push(`${where}: restarted with no lastState.terminated`);
      if (!MAY_RESTART.has(pod.kind) && c.restartCount > (o?.restartCount ?? 0) && c.lastStarted && !failedByItself(c.lastExitCode))
        out.push(`${where}: restarted ${c.restartCount}x after it had run, and nothing in it asks for a restart`);
      if (o?.id && c.id && o.id !== c.id && c.restartCount === o.restartCount && o.running && c.running)
        out.push(`${where}: replaced (${o.id.slice(0, 12)} -> ${c.id.slice(0, 12)}) with no restart counted`);
    }
  }
  return out;
}

/**
 * Pods that should be running and are not: not being deleted, of a kind that runs for good,
 * not failed by the node with a reason (evicted, or refused at admission under pressure), and
 * not Running with a container up. And any pod whose Ready condition says False while
 * ContainersReady says True: someone else (the node lifecycle controller, after the node was
 * NotReady) marked it, and the kubelet did not put its own status back.
 */
export function unsettled(pods: PodView[]): string[] {
  const live = pods.filter((p) => !p.deleting);
  return [
    ...live
      .filter((p) => !MAY_RESTART.has(p.kind) && p.kind !== 'once' && !(p.phase === 'Failed' && p.reason))
      .filter((p) => p.phase !== 'Running' || !p.containers.some((c) => c.running))
      .map((p) => `${p.name}: ${p.phase || 'no phase'}, not running`),
    ...live.filter((p) => p.containersReady && !p.ready).map((p) => `${p.name}: Ready=False while ContainersReady=True`),
  ];
}

/** What a node holds for its pods, by kind (sandboxes, netns, ...), each as a set of names. */
export type Inventory = Record<string, string[]>;

/** What the end has that the start did not: left behind by the pods the run made. */
export function leaks(start: Inventory, end: Inventory): Inventory {
  const out: Inventory = {};
  for (const [kind, items] of Object.entries(end)) {
    const had = new Set(start[kind] ?? []);
    out[kind] = items.filter((i) => !had.has(i));
  }
  return out;
}

export interface Sample {
  /** Milliseconds. */
  t: number;
  value: number;
  /** The process sampled: a restarted kubelet starts a new series. */
  pid: number;
}

/**
 * The least-squares slope per hour of the samples taken once each process had run settleMs
 * (a kubelet killed by a fault starts again from nothing: its first minute is start-up, not
 * growth), across processes, and the time they span; undefined with fewer than 3 samples.
 */
export function slopePerHour(samples: Sample[], settleMs: number): { perHour: number; spanMs: number } | undefined {
  const born = new Map<number, number>();
  for (const s of samples) if (!born.has(s.pid)) born.set(s.pid, s.t);
  const kept = samples.filter((s) => s.t - born.get(s.pid)! >= settleMs);
  if (kept.length < 3) return undefined;
  const n = kept.length;
  const mt = kept.reduce((a, s) => a + s.t, 0) / n;
  const mv = kept.reduce((a, s) => a + s.value, 0) / n;
  const num = kept.reduce((a, s) => a + (s.t - mt) * (s.value - mv), 0);
  const den = kept.reduce((a, s) => a + (s.t - mt) ** 2, 0);
  return { perHour: den === 0 ? 0 : (num / den) * 3_600_000, spanMs: kept.at(-1)!.t - kept[0]!.t };
}

/** Rows of the invariant table, aligned for a terminal. */
export function table(rows: [string, string, string][]): string {
  const head: [string, string, string] = ['invariant', 'result', 'detail'];
  const all = [head, ...rows];
  const w = [0, 1].map((i) => Math.max(...all.map((r) => r[i]!.length)));
  return all.map((r) => `${r[0].padEnd(w[0]!)}  ${r[1].padEnd(w[1]!)}  ${r[2]}`.trimEnd()).join('\n');
}

/** Pure: one line for a failed client call: client-node's message spans the status, the body and the headers. */
export function apiErrorLine(e: Error): string {
  const status = /"message":"((?:[^"\\]|\\.)*)"/.exec(e.message.replaceAll('\\"', '"'))?.[1];
  const code = /HTTP-Code: (\d+)/.exec(e.message)?.[1];
  return code && status ? `${code} ${status}` : (e.message.split('\n')[0] ?? '');
}
