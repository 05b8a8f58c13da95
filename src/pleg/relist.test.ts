import { test } from 'node:test';
import assert from 'node:assert/strict';
import { notSeenStopped, POD_RELISTS_MAX, startPleg, withPods } from './relist.ts';
import type { RuntimeView } from '../runtime/cri-runtime.ts';
import { logger } from '../log/log.ts';
import type { ContainerState, PodRuntimeStatus, SandboxState } from '../container/types.ts';

const pods = (...cs: [string, ContainerState['phase']][]): Map<string, PodRuntimeStatus> =>
  new Map([
    [
      'u',
      {
        uid: 'u',
        sandboxes: [{ id: 'sb', ready: cs.some(([id, phase]) => id === 'sb' && phase === 'running') } as SandboxState],
        containers: cs.filter(([id]) => id !== 'sb').map(([id, phase]) => ({ id, phase }) as ContainerState),
      },
    ],
  ]);

test('notSeenStopped: which exits the relists after a TaskExit must still look for', () => {
  const cases: { name: string; exited: [string, number][]; listedAt: number; pods: Map<string, PodRuntimeStatus>; left: string[] }[] = [
    { name: 'a relist shows the container exited: done', exited: [['a', 100]], listedAt: 150, pods: pods(['a', 'exited']), left: [] },
    { name: 'CRI still reports it running: look again', exited: [['a', 100]], listedAt: 150, pods: pods(['a', 'running']), left: ['a'] },
    { name: 'gone from the list (removed): done', exited: [['a', 100]], listedAt: 150, pods: pods(), left: [] },
    {
      name: "a sandbox's pause container: done once it is not ready",
      exited: [['sb', 100]],
      listedAt: 150,
      pods: pods(['sb', 'exited']),
      left: [],
    },
    { name: 'a sandbox still ready: look again', exited: [['sb', 100]], listedAt: 150, pods: pods(['sb', 'running']), left: ['sb'] },
    {
      name: 'a relist begun before the exit was told proves nothing, even if it lacks the container',
      exited: [['a', 200]],
      listedAt: 150,
      pods: pods(),
      left: ['a'],
    },
    {
      name: 'several exits: each on its own',
      exited: [
        ['a', 100],
        ['b', 100],
      ],
      listedAt: 150,
      pods: pods(['a', 'exited'], ['b', 'running']),
      left: ['b'],
    },
  ];
  for (const c of cases) assert.deepEqual([...notSeenStopped(new Map(c.exited), c.listedAt, c.pods).keys()], c.left, c.name);
});

test("withPods: a pod's own relist replaces its entry, drops it when the runtime has nothing of it, and leaves the others", () => {
  const pod = (uid: string, ...ids: string[]): PodRuntimeStatus => ({
    uid,
    sandboxes: [],
    containers: ids.map((id) => ({ id, phase: 'running' }) as ContainerState),
  });
  const last = new Map([
    ['a', pod('a', 'a1')],
    ['b', pod('b', 'b1')],
  ]);
  const cases: { name: string; read: PodRuntimeStatus[]; want: Record<string, string[]> }[] = [
    { name: 'replaced', read: [pod('a', 'a1', 'a2')], want: { a: ['a1', 'a2'], b: ['b1'] } },
    { name: 'gone from the runtime', read: [pod('a')], want: { b: ['b1'] } },
    { name: 'new to the view', read: [pod('c', 'c1')], want: { a: ['a1'], b: ['b1'], c: ['c1'] } },
    { name: 'none read', read: [], want: { a: ['a1'], b: ['b1'] } },
  ];
  for (const c of cases) {
    const got = Object.fromEntries([...withPods(last, c.read)].map(([u, p]) => [u, p.containers.map((x) => x.id)]));
    assert.deepEqual(got, c.want, c.name);
  }
  assert.deepEqual([...last.keys()], ['a', 'b'], 'the last view is left as it was');
});

/** A runtime of one pod with container a in the phase the test sets; counts the relists, and that pod's own. */
function oneContainer() {
  const rt = {
    lists: 0,
    podReads: 0,
    phase: 'running' as ContainerState['phase'],
    stopping: new Set<string>(),
    view: undefined as unknown as RuntimeView,
  };
  rt.view = {
    isStopping: (uid: string) => rt.stopping.has(uid),
    pods: async () => {
      rt.lists++;
      return pods(['a', rt.phase]);
    },
    pod: async (uid: string) => {
      rt.podReads++;
      return pods(['a', rt.phase]).get(uid) ?? { uid, sandboxes: [], containers: [] };
    },
  } as unknown as RuntimeView;
  return rt;
}

test('startPleg: after an exit, relists run until one sees it stopped, then no more; a delete of it, or CRI saying it stopped, relists at once', async () => {
  const rt = oneContainer();
  const seen: string[] = [];
  const pleg = startPleg(rt.view, { periodMs: 60_000, log: logger('test'), onEvents: (evs) => seen.push(...evs.map((e) => e.type)) });
  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
  await wait(50);
  assert.equal(rt.lists, 1, 'the first relist');
  pleg.runtimeEvent({ kind: 'exit', containerID: 'a' });
  await wait(180); // the relist at 120 ms still shows it running (CRI's lag)
  assert.equal(rt.lists, 2);
  rt.phase = 'exited';
  await wait(600); // the one at 250 ms sees the exit; the one at 500 ms does not run
  assert.equal(rt.lists, 3);
  assert.ok(seen.length > 0, 'the exit reached the sync loop');

  rt.phase = 'running';
  await wait(1); // a new instance runs and exits; its task is deleted at once
  pleg.runtimeEvent({ kind: 'exit', containerID: 'a' });
  rt.phase = 'exited';
  pleg.runtimeEvent({ kind: 'delete', containerID: 'a' });
  await wait(80);
  assert.equal(rt.lists, 4, 'the relist right after the TaskDelete saw the exit: no other');
  await wait(600);
  assert.equal(rt.lists, 4);

  // CRI's stopped event: the runtime shows the exit already, one relist at once and no other.
  rt.phase = 'running';
  await wait(1);
  rt.phase = 'exited';
  pleg.runtimeEvent({ kind: 'stopped', containerID: 'a' });
  await wait(30);
  assert.equal(rt.lists, 5, 'one relist right after the stopped event');
  await wait(600);
  assert.equal(rt.lists, 5);
  pleg.stop();
});

test('startPleg: every periodMs without the event stream, every eventedPeriodMs with it, but periodMs while an exit is awaited', async () => {
  const rt = oneContainer();
  const pleg = startPleg(rt.view, { periodMs: 40, eventedPeriodMs: 60_000, log: logger('test'), onEvents: () => {} });
  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
  await wait(300);
  assert.ok(rt.lists >= 4, `no stream: relists every 40 ms (${rt.lists})`);
  pleg.eventStream(true);
  await wait(20);
  const up = rt.lists;
  await wait(300);
  assert.equal(rt.lists, up, 'the stream up: no periodic relist within the minute');
  // containerd's TaskExit: its relists at 120, 250 and 500 ms find it still running, then the short period.
  pleg.runtimeEvent({ kind: 'exit', containerID: 'a' });
  await wait(800);
  assert.ok(rt.lists - up >= 6, `an awaited exit keeps the 40 ms period (${rt.lists - up} relists)`);
  rt.phase = 'exited';
  await wait(100);
  const seen = rt.lists;
  await wait(300);
  assert.equal(rt.lists, seen, 'seen stopped: the long period again');
  pleg.eventStream(false);
  await wait(20);
  assert.equal(rt.lists, seen + 1, 'the stream down: a relist at once');
  await wait(300);
  assert.ok(rt.lists >= seen + 5, 'then every 40 ms');
  pleg.stop();
});

test("startPleg: CRI's stopped event naming its pod relists that pod alone, and does not put off the periodic relist", async (t) => {
  const rt = oneContainer();
  const seen: string[] = [];
  const pleg = startPleg(rt.view, {
    periodMs: 200,
    log: logger('test'),
    onEvents: (evs) => seen.push(...evs.map((e) => `${e.type} ${e.containerID}`)),
  });
  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
  t.after(() => pleg.stop());
  await wait(30);
  assert.equal(rt.lists, 1, 'the first relist');
  seen.length = 0;
  rt.phase = 'exited';
  pleg.runtimeEvent({ kind: 'stopped', containerID: 'a', podUID: 'u' });
  await wait(20);
  assert.deepEqual([rt.lists, rt.podReads], [1, 1], "the pod's own relist, no whole one");
  assert.deepEqual(seen, ['ContainerDied a']);
  assert.equal(pleg.pods().get('u')?.containers[0]?.phase, 'exited', 'the view has the exit');
  // Events every 50 ms: the whole relist still comes 200 ms after the last one.
  for (let i = 0; i < 5; i++) {
    pleg.runtimeEvent({ kind: 'stopped', containerID: 'a', podUID: 'u' });
    await wait(50);
  }
  assert.equal(rt.lists, 2, `the periodic relist ran (${rt.lists})`);
  assert.deepEqual(seen, ['ContainerDied a'], 'nothing changed since');
  // The pod gone from the runtime: its containers are removed from the view.
  const gone = oneContainer();
  gone.view.pod = async (uid: string) => ({ uid, sandboxes: [], containers: [] });
  pleg.stop();
  const events: string[] = [];
  const p2 = startPleg(gone.view, {
    periodMs: 60_000,
    log: logger('test'),
    onEvents: (evs) => events.push(...evs.map((e) => `${e.type} ${e.containerID}`)),
  });
  t.after(() => p2.stop());
  await wait(20);
  events.length = 0;
  p2.runtimeEvent({ kind: 'stopped', containerID: 'sb', podUID: 'u' });
  await wait(20);
  assert.deepEqual(events.sort(), ['ContainerDied a', 'ContainerRemoved a', 'ContainerRemoved sb']);
  assert.equal(p2.pods().size, 0);
  // More pods due at once than POD_RELISTS_MAX: one relist of every pod instead.
  const lists = gone.lists;
  for (let i = 0; i <= POD_RELISTS_MAX; i++) p2.runtimeEvent({ kind: 'stopped', containerID: `c${i}`, podUID: `u${i}` });
  await wait(20);
  assert.equal(gone.lists, lists + 1);
});

test("startPleg: CRI's stopped event of a pod the kubelet is stopping reads nothing (the stopping step reads it after)", async (t) => {
  const rt = oneContainer();
  const pleg = startPleg(rt.view, { periodMs: 60_000, log: logger('test'), onEvents: () => {} });
  t.after(() => pleg.stop());
  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
  await wait(20);
  rt.stopping.add('u');
  rt.phase = 'exited';
  pleg.runtimeEvent({ kind: 'stopped', containerID: 'a', podUID: 'u' });
  await wait(20);
  assert.deepEqual([rt.lists, rt.podReads], [1, 0], "no relist for the kubelet's own stop");
  rt.stopping.delete('u');
  pleg.runtimeEvent({ kind: 'stopped', containerID: 'a', podUID: 'u' });
  await wait(20);
  assert.deepEqual([rt.lists, rt.podReads], [1, 1], 'once the stop is over, a stopped event relists the pod');
});
