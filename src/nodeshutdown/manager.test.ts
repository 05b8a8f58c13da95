import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import type { KillPodOptions } from '../pods/lifecycle.ts';
import type { InhibitLock, Logind } from './logind.ts';
import { nodeShutdownManager, type NodeShutdownDeps } from './manager.ts';
import type { ShutdownConfig } from './periods.ts';
import type { ShutdownState } from './state-file.ts';

const pod = (name: string, priority: number, grace?: number): Pod => ({
  metadata: { name, namespace: 'ns', uid: name },
  spec: { containers: [], priority, terminationGracePeriodSeconds: grace },
});

/** A logind over plain data: what was asked of it, and the signal to send. */
function fakeLogind(o: { delaysMs?: number[]; monitorFails?: boolean } = {}) {
  const calls: string[] = [];
  const delays = [...(o.delaysMs ?? [60_000])];
  let nextLock = 0;
  const held = new Set<number>();
  let emit: (active: boolean) => void = () => {};
  let closed: (err?: Error) => void = () => {};
  const logind: Logind = {
    async currentInhibitDelayMs() {
      calls.push('currentInhibitDelay');
      return delays.length > 1 ? delays.shift()! : delays[0]!;
    },
    async overrideInhibitDelay(ms) {
      calls.push(`override ${ms}`);
    },
    async reloadLogindConf() {
      calls.push('reload');
    },
    async inhibitShutdown(): Promise<InhibitLock> {
      const id = ++nextLock;
      held.add(id);
      calls.push(`lock ${id}`);
      return {
        release: async () => {
          held.delete(id);
          calls.push(`release ${id}`);
        },
      };
    },
    async monitorShutdown(onEvent, onClosed) {
      if (o.monitorFails) throw new Error('AddMatch refused');
      calls.push('monitor');
      emit = onEvent;
      closed = onClosed;
    },
    close: () => calls.push('close'),
  };
  return { logind, calls, held, emit: (active: boolean) => emit(active), endWatch: () => closed(new Error('bus gone')) };
}

function setup(
  config: Partial<ShutdownConfig>,
  pods: Pod[],
  o: { logind?: ReturnType<typeof fakeLogind>; stuck?: string[]; connect?: NodeShutdownDeps['connect'] } = {},
) {
  const f = o.logind ?? fakeLogind();
  const killed: [string, KillPodOptions][] = [];
  const stored: ShutdownState[] = [];
  const observed: string[] = [];
  const events: string[] = [];
  const logs: string[] = [];
  const waits: number[] = [];
  let statusSyncs = 0;
  const statusAtKills: (string | undefined)[] = [];
  const log: Logger = {
    info: (m) => void logs.push(m),
    v: (_l, m) => void logs.push(m),
    warn: (m) => void logs.push(m),
    error: (m, f2) => void logs.push(`${m}: ${(f2?.err as Error | undefined)?.message ?? ''}`),
  };
  const m = nodeShutdownManager({
    config: {
      shutdownGracePeriodMs: 0,
      shutdownGracePeriodCriticalPodsMs: 0,
      shutdownGracePeriodByPodPriority: [],
      featureGates: {},
      ...config,
    },
    connect: o.connect ?? (async () => f.logind),
    state: { load: () => ({ startTime: new Date(1_000_000), endTime: new Date(1_020_000) }), store: (s) => void stored.push({ ...s }) },
    pods: () => pods,
    // A stuck pod never stops; the others at once.
    killPod: (p, k) => {
      statusAtKills.push(m.shutdownStatus());
      killed.push([p.metadata!.name!, k]);
      return o.stuck?.includes(p.metadata!.name!) ? new Promise(() => {}) : Promise.resolve(true);
    },
    syncNodeStatus: () => void statusSyncs++,
    events: { event: (_o, type, reason, message) => void events.push(`${type} ${reason}: ${message}`) },
    node: { kind: 'Node', name: 'n', uid: 'n' },
    log,
    observe: { startTime: (s) => void observed.push(`start ${s}`), endTime: (s) => void observed.push(`end ${s}`) },
    // The group waits pass at once (a few ms, after the pods that stop at once).
    sleep: (ms, signal) => {
      waits.push(ms);
      return new Promise((r) => {
        const t = setTimeout(r, 5);
        signal?.addEventListener('abort', () => {
          clearTimeout(t);
          r();
        });
      });
    },
    reconnect: { initialMs: 1, maxMs: 2 },
  });
  return { m, f, statusAtKills, killed, stored, observed, events, logs, waits, statusSyncs: () => statusSyncs };
}

const critical = pod('critical', 2_000_000_000, 30);
const normal = pod('normal', 0, 30);
const quick = pod('quick', 100, 3);

test('off by default: nothing is connected, everything admitted', async () => {
  let connected = false;
  const { m } = setup({}, [normal], {
    connect: async () => {
      connected = true;
      throw new Error('no');
    },
  });
  await m.start();
  assert.equal(connected, false);
  assert.deepEqual(m.admit(normal), { admit: true });
  assert.equal(m.shutdownStatus(), undefined);
  m.stop();
});

test('shutdown begins: groups killed lowest priority first with their grace periods, lock released, state written', async () => {
  const s = setup({ shutdownGracePeriodMs: 20_000, shutdownGracePeriodCriticalPodsMs: 10_000 }, [critical, normal, quick]);
  await s.m.start();
  assert.deepEqual(s.f.calls, ['currentInhibitDelay', 'lock 1', 'monitor']);
  // The times of the previous shutdown, from the state file.
  assert.deepEqual(s.observed, ['start 1000', 'end 1020']);
  assert.deepEqual(s.m.admit(normal), { admit: true });

  s.f.emit(true);
  await s.m.idle();
  // The node was shutting down (NotReady, no new pods) before the first pod was stopped.
  assert.deepEqual(s.statusAtKills, ['node is shutting down', 'node is shutting down', 'node is shutting down']);
  assert.deepEqual(
    s.killed.map(([name, k]) => [name, k.gracePeriodSeconds, k.reason]),
    [
      ['normal', 10, 'Terminated'],
      ['quick', 3, 'Terminated'],
      ['critical', 10, 'Terminated'],
    ],
  );
  assert.equal(s.killed[0]![1].condition?.type, 'DisruptionTarget');
  assert.equal(s.statusSyncs(), 1);
  assert.deepEqual(s.events, ['Normal Shutdown: Shutdown manager detected shutdown event']);
  // The lock goes only once the pods are done.
  assert.deepEqual(s.f.calls.slice(3), ['release 1']);
  assert.equal(s.f.held.size, 0);
  assert.equal(s.stored.length, 2);
  assert.ok(s.stored[0]!.startTime && !s.stored[0]!.endTime);
  assert.ok(s.stored[1]!.endTime! >= s.stored[1]!.startTime!);
  assert.deepEqual(s.observed.slice(2, 4), [`start ${Math.floor(s.stored[0]!.startTime!.getTime() / 1000)}`, 'end 0']);
  assert.match(s.observed[4]!, /^end \d+$/);
  assert.deepEqual(s.m.admit(pod('new', 0)), {
    admit: false,
    reason: 'NodeShutdown',
    message: 'Pod was rejected: Pod was rejected as the node is shutting down.',
  });
  assert.ok(s.logs.includes('Shutdown manager completed processing shutdown event, node will shutdown shortly'));
  s.m.stop();
});

test('a group whose pods do not stop in time: the next group starts after its grace period', async () => {
  const s = setup({ shutdownGracePeriodMs: 20_000, shutdownGracePeriodCriticalPodsMs: 10_000 }, [critical, normal], { stuck: ['normal'] });
  await s.m.start();
  s.f.emit(true);
  await s.m.idle();
  assert.deepEqual(
    s.killed.map(([name]) => name),
    ['normal', 'critical'],
  );
  assert.deepEqual(s.waits, [10_000, 10_000]);
  assert.ok(s.logs.includes('Shutdown manager pod killing time out'));
  assert.ok(s.logs.includes('Done waiting for all pods in group to terminate'));
  assert.deepEqual(s.f.calls.slice(-1), ['release 1']);
  s.m.stop();
});

test('a cancelled shutdown: the lock is taken again and pods are admitted again', async () => {
  const s = setup({ shutdownGracePeriodMs: 20_000, shutdownGracePeriodCriticalPodsMs: 10_000 }, []);
  await s.m.start();
  s.f.emit(true);
  await s.m.idle();
  s.f.emit(false);
  await s.m.idle();
  assert.deepEqual(s.f.calls, ['currentInhibitDelay', 'lock 1', 'monitor', 'release 1', 'lock 2']);
  assert.deepEqual(s.f.held, new Set([2]));
  assert.deepEqual(s.m.admit(normal), { admit: true });
  assert.equal(s.m.shutdownStatus(), undefined);
  assert.deepEqual(s.events, [
    'Normal Shutdown: Shutdown manager detected shutdown event',
    'Normal Shutdown: Shutdown manager detected shutdown cancellation',
  ]);
  s.m.stop();
  await new Promise((r) => setImmediate(r));
  assert.equal(s.f.held.size, 0, 'stop releases the lock');
});

test("logind's delay too short: the drop-in, a reload, and upstream's error when it stays short", async () => {
  const raised = fakeLogind({ delaysMs: [5_000, 5_000, 20_000] });
  const ok = setup({ shutdownGracePeriodMs: 20_000, shutdownGracePeriodCriticalPodsMs: 10_000 }, [], { logind: raised });
  await ok.m.start();
  assert.deepEqual(raised.calls, [
    'currentInhibitDelay',
    'override 20000',
    'reload',
    'currentInhibitDelay',
    'currentInhibitDelay',
    'lock 1',
    'monitor',
  ]);
  ok.m.stop();

  const short = setup({ shutdownGracePeriodMs: 20_000, shutdownGracePeriodCriticalPodsMs: 10_000 }, [], {
    logind: fakeLogind({ delaysMs: [5_000] }),
  });
  await assert.rejects(
    short.m.start(),
    new Error(
      'node shutdown manager was timed out after 5 attempts waiting for logind InhibitDelayMaxSec to update to 20s (ShutdownGracePeriod), current value is 5s',
    ),
  );
  assert.deepEqual(short.waits, [100, 200, 400, 800]);
  assert.ok(short.f.calls.includes('close'));
  assert.ok(!short.f.calls.some((c) => c.startsWith('lock')));
});

test('no system bus: start fails with the reason (the kubelet logs it and runs on); a failed watch releases the lock', async () => {
  const none = setup({ shutdownGracePeriodMs: 20_000 }, [], {
    connect: async () => {
      throw new Error('dial unix /var/run/dbus/system_bus_socket: connect ENOENT /var/run/dbus/system_bus_socket');
    },
  });
  await assert.rejects(none.m.start(), /dial unix \/var\/run\/dbus\/system_bus_socket/);
  assert.deepEqual(none.m.admit(normal), { admit: true });

  const f = fakeLogind({ monitorFails: true });
  const s = setup({ shutdownGracePeriodMs: 20_000 }, [], { logind: f });
  await assert.rejects(s.m.start(), new Error('failed to monitor shutdown: AddMatch refused'));
  assert.deepEqual(f.calls, ['currentInhibitDelay', 'lock 1', 'release 1', 'close']);
});

test('the watch ends (logind or the bus restarted): watched again after a back-off, with a new lock', async () => {
  const s = setup({ shutdownGracePeriodMs: 20_000, shutdownGracePeriodCriticalPodsMs: 10_000 }, []);
  await s.m.start();
  s.f.endWatch();
  await new Promise((r) => setTimeout(r, 30));
  assert.deepEqual(s.f.calls, ['currentInhibitDelay', 'lock 1', 'monitor', 'currentInhibitDelay', 'lock 2', 'release 1', 'monitor']);
  assert.ok(s.logs.some((l) => l.startsWith('Ended watching the node for shutdown events')));
  s.m.stop();
});

test('shutdownGracePeriodByPodPriority: as many groups as given, in priority order', async () => {
  const s = setup(
    {
      shutdownGracePeriodByPodPriority: [
        { priority: 2_000_000_000, shutdownGracePeriodSeconds: 5 },
        { priority: 100, shutdownGracePeriodSeconds: 7 },
        { priority: 0, shutdownGracePeriodSeconds: 4 },
      ],
    },
    [critical, quick, normal],
  );
  await s.m.start();
  s.f.emit(true);
  await s.m.idle();
  assert.deepEqual(
    s.killed.map(([name, k]) => [name, k.gracePeriodSeconds]),
    [
      ['normal', 4],
      ['quick', 3],
      ['critical', 5],
    ],
  );
  s.m.stop();
});
