// The faults the chaos run injects on the local stack, each by name. A fault returns once what
// it broke is started again (by hack/supervise.sh for the kubelet, by the hack scripts for the
// rest); run.ts then waits for the node to be healthy and the statuses to converge.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statfsSync, truncateSync, writeFileSync } from 'node:fs';
import { NODE_IP } from '../e2e/stack.ts';
import { alive } from '../proc.ts';
import { KUBELET_ROOT, condition, cutFromApiserver, fill, onOwnFilesystem, pidOf, startAgain } from './node.ts';
import type { Churn } from './churn.ts';

export interface FaultContext {
  churn: Churn;
  /** The node's name. */
  node: string;
  /** Says what went wrong while the fault lasted (the run counts it as a failure). */
  problem: (what: string) => void;
  /** Random in [0, 1), from the run's seed. */
  rnd: () => number;
  /** The longest a control plane outage may last, ms. */
  maxOutageMs: number;
}

export interface Fault {
  name: string;
  /** Injects the fault, heals it, and says what it did. */
  inject(ctx: FaultContext): Promise<string>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const between = (ctx: FaultContext, lo: number, hi: number) => Math.round(lo + ctx.rnd() * (hi - lo));

async function gone(pid: number): Promise<void> {
  for (let i = 0; i < 300 && alive(pid); i++) await sleep(100);
  if (alive(pid)) throw new Error(`pid ${pid} still alive 30 s after its signal`);
}

/** Signals the kubelet (the supervisor starts a new one) and waits for the old one to go. */
async function signalKubelet(signal: NodeJS.Signals): Promise<number> {
  const pid = pidOf('kubelet-ts.child');
  process.kill(pid, signal);
  await gone(pid);
  return pid;
}

/** Stops a control plane process with SIGSTOP for a while, then lets it go on. */
async function freeze(name: 'kube-apiserver' | 'etcd', ctx: FaultContext): Promise<string> {
  const pid = pidOf(name);
  const ms = between(ctx, ctx.maxOutageMs / 4, ctx.maxOutageMs);
  process.kill(pid, 'SIGSTOP');
  try {
    await sleep(ms);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  return `${name} (pid ${pid}) stopped for ${(ms / 1000).toFixed(0)} s`;
}

/** Kills a control plane process, and starts it again (hack/control-plane.sh) a while later. */
async function kill(name: 'kube-apiserver' | 'etcd', ctx: FaultContext): Promise<string> {
  const pid = pidOf(name);
  // Its process group: hack/lib.sh's start_bg makes it a session leader.
  process.kill(-pid, 'SIGKILL');
  await gone(pid);
  const ms = between(ctx, 1000, ctx.maxOutageMs / 2);
  await sleep(ms);
  startAgain('control-plane.sh');
  return `${name} pid ${pid} killed, started again ${(ms / 1000).toFixed(0)} s later`;
}

/** Sets the system clock (CLOCK_REALTIME) to ms since the epoch. */
const setClock = (ms: number) => execFileSync('date', ['-u', '-s', `@${(ms / 1000).toFixed(3)}`], { stdio: 'ignore' });

/** The files kubelet-ts writes and reads back at start. */
export const CHECKPOINTS = [
  'allocated_pods_state',
  'dra_manager_state',
  'device-plugins/kubelet_internal_checkpoint',
  'graceful_node_shutdown_state',
];

export const FAULTS: Fault[] = [
  {
    name: 'kubelet SIGKILL',
    inject: async () => `kubelet pid ${await signalKubelet('SIGKILL')} killed`,
  },
  {
    name: 'kubelet SIGTERM',
    inject: async () => `kubelet pid ${await signalKubelet('SIGTERM')} terminated`,
  },
  {
    name: 'kubelet SIGKILL during a pod start',
    async inject(ctx) {
      const created = await ctx.churn.create();
      const ms = between(ctx, 0, 1500);
      await sleep(ms);
      return `${created}, kubelet pid ${await signalKubelet('SIGKILL')} killed ${ms} ms later`;
    },
  },
  {
    name: 'kubelet SIGKILL during a graceful delete',
    async inject(ctx) {
      let name = await ctx.churn.remove('graceful');
      if (!name) {
        // None yet: make one, let it start, then delete it.
        await ctx.churn.create('graceful');
        await sleep(8000);
        name = await ctx.churn.remove('graceful');
      }
      const ms = between(ctx, 200, 2500);
      await sleep(ms);
      // The churn may have deleted it first: then the kill lands amid the churn's deletes.
      const what = name ? `deleted ${name}` : 'no slow-stopping pod left to delete';
      return `${what}, kubelet pid ${await signalKubelet('SIGKILL')} killed ${ms} ms later`;
    },
  },
  {
    name: 'containerd SIGKILL',
    async inject(ctx) {
      const pid = pidOf('containerd');
      process.kill(pid, 'SIGKILL');
      await gone(pid);
      const ms = between(ctx, 1000, 10_000);
      await sleep(ms);
      startAgain('containerd.sh');
      return `containerd pid ${pid} killed, started again ${(ms / 1000).toFixed(0)} s later`;
    },
  },
  { name: 'kube-apiserver SIGSTOP', inject: (ctx) => freeze('kube-apiserver', ctx) },
  {
    name: 'kubelet cut from the apiserver',
    async inject(ctx) {
      const pid = pidOf('kubelet-ts.child');
      const ms = between(ctx, ctx.maxOutageMs / 4, ctx.maxOutageMs);
      const restore = cutFromApiserver(pid, NODE_IP);
      try {
        await sleep(ms);
      } finally {
        restore();
      }
      return `kubelet pid ${pid} cut from ${NODE_IP}:6443 for ${(ms / 1000).toFixed(0)} s`;
    },
  },
  { name: 'etcd SIGSTOP', inject: (ctx) => freeze('etcd', ctx) },
  { name: 'kube-apiserver SIGKILL', inject: (ctx) => kill('kube-apiserver', ctx) },
  // The apiserver stays up and answers with errors (and from its watch cache) until etcd is back.
  { name: 'etcd SIGKILL', inject: (ctx) => kill('etcd', ctx) },
  {
    // A full disk degrades the node (DiskPressure, evictions, pods refused), not the agent.
    name: 'kubelet root dir full',
    async inject(ctx) {
      if (!onOwnFilesystem(KUBELET_ROOT))
        throw new Error(`${KUBELET_ROOT} is not a filesystem of its own (hack/kubelet.sh mounts one): filling it would fill the host's`);
      const pid = pidOf('kubelet-ts.child');
      // Long enough for the eviction manager (every 10 s) and the node status to say so.
      const ms = between(ctx, 30_000, Math.max(30_000, ctx.maxOutageMs));
      const t0 = Date.now();
      const { bytes, undo } = fill(KUBELET_ROOT);
      let seen: number | undefined;
      try {
        const left = statfsSync(KUBELET_ROOT).bavail;
        if (left > 0) ctx.problem(`${KUBELET_ROOT} not full: ${left} blocks left`);
        while (Date.now() - t0 < ms) {
          if (seen === undefined && (await condition(ctx.node, 'DiskPressure').catch(() => undefined)) === 'True') seen = Date.now() - t0;
          await sleep(1000);
        }
      } finally {
        undo();
      }
      if (seen === undefined) ctx.problem(`no DiskPressure in ${(ms / 1000).toFixed(0)} s of a full ${KUBELET_ROOT}`);
      if (pidOf('kubelet-ts.child') !== pid) ctx.problem(`the kubelet restarted while ${KUBELET_ROOT} was full`);
      const pressure = seen === undefined ? 'no DiskPressure' : `DiskPressure after ${(seen / 1000).toFixed(0)} s`;
      return `${KUBELET_ROOT} filled (${(bytes / 2 ** 30).toFixed(1)} GiB) to 100% for ${(ms / 1000).toFixed(0)} s: ${pressure}`;
    },
  },
  {
    // The whole host's clock: the control plane shares it, as on a one-machine cluster. It is put
    // back from the monotonic clock afterwards (a second step, backwards), so the run's own time
    // and the host stay right. A kubeadm cluster's node lifecycle controller has taken the steps
    // for a node gone stale and marked its pods Ready=False within seconds of the step back (make
    // test's cluster did): the fault lasts 15 s more, so that the run's check after it sees whether
    // the kubelet put its pods' Ready back.
    name: 'system clock stepped forward',
    async inject(ctx) {
      const stepMs = between(ctx, 30_000, 120_000);
      const holdMs = between(ctx, 10_000, 30_000);
      const offset = Date.now() - performance.now();
      setClock(Date.now() + stepMs);
      try {
        await sleep(holdMs);
      } finally {
        setClock(performance.now() + offset);
      }
      let notReady = 0;
      for (const end = performance.now() + 15_000; performance.now() < end; await sleep(1000))
        if ((await condition(ctx.node, 'Ready').catch(() => undefined)) !== 'True') notReady++;
      const marked = notReady ? `, the node not Ready for ${notReady} s after it` : '';
      return `clock stepped ${(stepMs / 1000).toFixed(0)} s forward for ${(holdMs / 1000).toFixed(0)} s, then back${marked}`;
    },
  },
  {
    name: 'corrupted checkpoint, kubelet SIGKILL',
    async inject(ctx) {
      const present = CHECKPOINTS.map((f) => `${KUBELET_ROOT}/${f}`).filter((f) => existsSync(f));
      if (!present.length) return `no checkpoint file yet; kubelet pid ${await signalKubelet('SIGKILL')} killed`;
      const file = present[Math.floor(ctx.rnd() * present.length)]!;
      const size = readFileSync(file).length;
      // The kubelet is killed first: a live one would write its checkpoint over the damage.
      const pid = pidOf('kubelet-ts.child');
      process.kill(pid, 'SIGSTOP');
      const how = ctx.rnd() < 0.5 ? 'truncated to half' : 'overwritten with garbage';
      if (how.startsWith('truncated')) truncateSync(file, Math.floor(size / 2));
      else writeFileSync(file, '{"Data": not json \u0000\u00ff');
      process.kill(pid, 'SIGKILL');
      await gone(pid);
      return `${file} ${how}; kubelet pid ${pid} killed`;
    },
  },
];
