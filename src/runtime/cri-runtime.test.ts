import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RuntimeClient } from '../cri/runtime-client.ts';
import { cachedStands, POD_READS_ALONE, RuntimeView } from './cri-runtime.ts';
import type { ContainerPhase } from '../container/types.ts';

/** A runtime whose lists answer when told to, with the containers it had when asked. */
function fakeCri() {
  const containers: { id: string; uid: string }[] = [];
  const pending: (() => void)[] = [];
  const filters: unknown[] = [];
  let lists = 0;
  const status = { calls: 0, gate: Promise.resolve() };
  const cri = {
    listPodSandbox: async () => ({ items: [] }),
    listContainers: (r: { filter?: { labelSelector?: Record<string, string> } } = {}) => {
      lists++;
      const uid = r.filter?.labelSelector?.['io.kubernetes.pod.uid'];
      if (r.filter) filters.push(r.filter.labelSelector);
      const had = containers.filter((c) => uid === undefined || c.uid === uid);
      return new Promise((resolve) =>
        pending.push(() =>
          resolve({
            containers: had.map((c) => ({
              id: c.id,
              podSandboxId: 's',
              state: 'CONTAINER_RUNNING',
              createdAt: '1',
              metadata: { name: c.id, attempt: 0 },
              labels: { 'io.kubernetes.pod.uid': c.uid },
              annotations: {},
            })),
          }),
        ),
      );
    },
    containerStatus: async ({ containerId }: { containerId: string }) => {
      status.calls++;
      await status.gate;
      return {
        status: {
          id: containerId,
          state: 'CONTAINER_RUNNING',
          createdAt: '1',
          startedAt: '2',
          finishedAt: '0',
          mounts: [],
          annotations: {},
        },
      };
    },
  } as unknown as RuntimeClient;
  /** Answers the oldest list asked (or the nth, counting from 0) that waits. */
  const answer = async (nth = 0) => {
    while (pending.length <= nth) await new Promise((r) => setImmediate(r));
    pending.splice(nth, 1)[0]!();
    await new Promise((r) => setImmediate(r));
  };
  return { cri, containers, answer, lists: () => lists, filters, status };
}

test('RuntimeView: overlapping reads share the list that follows the one in flight, which sees what came before each read', async () => {
  const f = fakeCri();
  const view = new RuntimeView(f.cri);
  const first = view.pods();
  // A container is started while the first list is in flight: reads from now on must see it.
  f.containers.push({ id: 'c1', uid: 'a' });
  const reads = Array.from({ length: 10 }, () => view.pods());
  await f.answer();
  await f.answer();
  assert.equal((await first).get('a'), undefined, 'the first list began before the container');
  for (const r of await Promise.all(reads))
    assert.deepEqual(
      r.get('a')?.containers.map((c) => c.id),
      ['c1'],
    );
  assert.equal(f.lists(), 2, 'eleven reads, two lists');
  const later = view.pods();
  await f.answer();
  assert.equal((await later).size, 1);
  assert.equal(f.lists(), 3, 'a read after the others are done lists again');
  assert.deepEqual(f.filters, [], 'whole lists');
});

test("RuntimeView: pod(uid) lists that pod's sandboxes and containers alone, by its UID label, at each read", async () => {
  const f = fakeCri();
  const view = new RuntimeView(f.cri);
  f.containers.push({ id: 'c1', uid: 'a' }, { id: 'c2', uid: 'b' });
  for (let i = 1; i <= 2; i++) {
    const read = view.pod('a');
    await f.answer();
    assert.deepEqual(
      (await read).containers.map((c) => c.id),
      ['c1'],
    );
    assert.equal(f.lists(), i);
  }
  assert.deepEqual(f.filters, [{ 'io.kubernetes.pod.uid': 'a' }, { 'io.kubernetes.pod.uid': 'a' }]);
  const none = view.pod('c');
  await f.answer();
  assert.deepEqual(await none, { uid: 'c', sandboxes: [], containers: [] }, 'a pod the runtime does not have');
});

test('RuntimeView: current() answers from the last list unless the kubelet changed the pod after that list began', async () => {
  const f = fakeCri();
  const view = new RuntimeView(f.cri);
  f.containers.push({ id: 'c1', uid: 'a' });
  const relist = view.pods(); // the PLEG's
  await f.answer();
  await relist;
  assert.deepEqual(
    (await view.current('a')).containers.map((c) => c.id),
    ['c1'],
  );
  assert.deepEqual(await view.current('b'), { uid: 'b', sandboxes: [], containers: [] }, 'a pod the list did not have');
  assert.equal(f.lists(), 1, 'neither read listed');

  // The kubelet starts a second container: the next read of that pod lists again, others do not.
  f.containers.push({ id: 'c2', uid: 'a' });
  view.changed('a');
  const fresh = view.current('a');
  await f.answer();
  assert.deepEqual((await fresh).containers.map((c) => c.id).sort(), ['c1', 'c2']);
  assert.equal(f.lists(), 2);
  await view.current('b');
  assert.equal(f.lists(), 2, 'another pod is read from the last list');
  const next = view.pods();
  await f.answer();
  await next;
  await view.current('a');
  assert.equal(f.lists(), 3, 'a whole list begun after the change serves the changed pod again');
});

test('RuntimeView: more pod reads at once than POD_READS_ALONE share the next whole list', async () => {
  const f = fakeCri();
  const view = new RuntimeView(f.cri);
  f.containers.push({ id: 'c1', uid: 'a' }, { id: 'c2', uid: 'b' });
  const reads = ['a', 'b', 'a', 'b', 'a'].map((u) => view.pod(u));
  // The fourth begins a whole list; the fifth shares the one after it (a read begun after the call).
  for (let i = 0; i < POD_READS_ALONE + 2; i++) await f.answer();
  assert.deepEqual(
    (await Promise.all(reads)).map((p) => p.containers.map((c) => c.id).join()),
    ['c1', 'c2', 'c1', 'c2', 'c1'],
  );
  assert.equal(f.lists(), POD_READS_ALONE + 2, 'the first ones alone, the rest whole lists');
  assert.equal(f.filters.length, POD_READS_ALONE);
  // Alone again once they are answered.
  const alone = view.pod('a');
  await f.answer();
  await alone;
  assert.equal(f.filters.length, POD_READS_ALONE + 1);
});

test("RuntimeView: current() answers from a pod's own read begun after the last list and the kubelet's last change", async () => {
  const f = fakeCri();
  const view = new RuntimeView(f.cri);
  f.containers.push({ id: 'c1', uid: 'a' });
  const relist = view.pods();
  await f.answer();
  await relist;
  // The PLEG relists pod a alone after CRI's stopped event: the sync it wakes reads what it found.
  f.containers.push({ id: 'c2', uid: 'a' });
  const own = view.pod('a');
  await f.answer();
  await own;
  assert.deepEqual((await view.current('a')).containers.map((c) => c.id).sort(), ['c1', 'c2']);
  assert.equal(f.lists(), 2, 'no read of its own');
  // The kubelet changes the pod after that read: it is read again.
  view.changed('a');
  const fresh = view.current('a');
  await f.answer();
  await fresh;
  assert.equal(f.lists(), 3);
  // A whole list begun after the own read serves the pod from then on.
  f.containers.splice(1);
  const next = view.pods();
  await f.answer();
  await next;
  assert.deepEqual(
    (await view.current('a')).containers.map((c) => c.id),
    ['c1'],
  );
  assert.equal(f.lists(), 4);
});

test('RuntimeView: pods(maxAgeMs) takes the last list while it is that young and the kubelet changed nothing since', async (t) => {
  const f = fakeCri();
  const view = new RuntimeView(f.cri);
  let now = 1000;
  t.mock.method(performance, 'now', () => now);
  /** A read; the runtime answers when it listed (a list begins within the call). */
  const list = async (maxAgeMs?: number) => {
    const before = f.lists();
    const p = view.pods(maxAgeMs);
    if (f.lists() > before) await f.answer();
    return p;
  };
  await list(); // the PLEG's
  const cases: [string, () => void, number, number][] = [
    ['just listed', () => {}, 10_000, 1],
    ['10 s old', () => (now += 10_000), 10_000, 1],
    ['older than the age asked', () => (now += 1), 10_000, 2],
    ['a fresh list asked for (no age)', () => {}, 0, 3],
    [
      'the kubelet changed a pod since',
      () => {
        view.changed('a');
        now += 1;
      },
      10_000,
      4,
    ],
    ['that change listed: young again', () => (now += 5), 10_000, 4],
  ];
  for (const [name, step, age, lists] of cases) {
    step();
    await list(age);
    assert.equal(f.lists(), lists, name);
  }
});

test("RuntimeView: listed(maxAgeMs) is the runtime's own answers behind the same list, by the same age rule", async (t) => {
  const f = fakeCri();
  const view = new RuntimeView(f.cri);
  let now = 1000;
  t.mock.method(performance, 'now', () => now);
  f.containers.push({ id: 'c1', uid: 'a' });
  const first = view.listed();
  await f.answer();
  assert.deepEqual(
    (await first).containers.map((c) => [c.id, c.labels['io.kubernetes.pod.uid']]),
    [['c1', 'a']],
  );
  f.containers.push({ id: 'c2', uid: 'b' });
  assert.deepEqual(
    (await view.listed(10_000)).containers.map((c) => c.id),
    ['c1'],
    'young: no list',
  );
  assert.equal(f.lists(), 1);
  const fresh = view.listed();
  await f.answer();
  assert.deepEqual(
    (await fresh).containers.map((c) => c.id),
    ['c1', 'c2'],
    'no age: a list of its own',
  );
  assert.deepEqual([...(await view.pods(10_000)).keys()].sort(), ['a', 'b'], 'the view from that same list');
  assert.equal(f.lists(), 2);
  // Two aged reads at once (the stats' sandboxes and containers) share the list in flight...
  view.changed('b');
  now += 1;
  const both = Promise.all([view.listed(10_000), view.listed(10_000)]);
  await f.answer();
  await both;
  assert.equal(f.lists(), 3, 'one list for both');
  // ...but not one that began before the kubelet's last change.
  const inFlight = view.pods();
  now += 1;
  view.changed('a');
  const after = view.listed(10_000);
  await f.answer();
  await inFlight;
  await f.answer();
  await after;
  assert.equal(f.lists(), 5, 'a change after the list in flight began: the next list');
});

test('RuntimeView: sandboxStatus() reads one sandbox, and the next list does not ask for its IP again', async () => {
  let statusCalls = 0;
  const sb = { id: 's1', state: 'SANDBOX_READY', createdAt: '5', metadata: { uid: 'a', attempt: 2 }, labels: {} };
  const cri = {
    podSandboxStatus: async () => {
      statusCalls++;
      return { status: { ...sb, network: { ip: '10.0.0.7' } } };
    },
    listPodSandbox: async () => ({ items: [sb] }),
    listContainers: async () => ({ containers: [] }),
  } as unknown as RuntimeClient;
  const view = new RuntimeView(cri);
  assert.deepEqual(await view.sandboxStatus('s1'), {
    id: 's1',
    attempt: 2,
    ready: true,
    ip: '10.0.0.7',
    ips: ['10.0.0.7'],
    createdAtNs: '5',
  });
  assert.equal((await view.pod('a')).sandboxes[0]?.ip, '10.0.0.7');
  assert.equal(statusCalls, 1);
});

test('RuntimeView: the latest instance of a container is its highest attempt, whatever the clock said at creation', async () => {
  // The wall clock stepped back between the two: the exited attempt 2 looks created after the running attempt 3.
  const instances = [
    { id: 'c2', attempt: 2, state: 'CONTAINER_EXITED', createdAt: '300' },
    { id: 'c3', attempt: 3, state: 'CONTAINER_RUNNING', createdAt: '200' },
  ];
  const cri = {
    listPodSandbox: async () => ({ items: [] }),
    listContainers: async () => ({
      containers: instances.map((c) => ({
        id: c.id,
        podSandboxId: 's',
        state: c.state,
        createdAt: c.createdAt,
        metadata: { name: 'main', attempt: c.attempt },
        labels: { 'io.kubernetes.pod.uid': 'a' },
        annotations: {},
      })),
    }),
    containerStatus: async ({ containerId }: { containerId: string }) => {
      const c = instances.find((x) => x.id === containerId)!;
      return { status: { id: c.id, state: c.state, createdAt: c.createdAt, startedAt: '1', finishedAt: '0', mounts: [], annotations: {} } };
    },
  } as unknown as RuntimeClient;
  const p = await new RuntimeView(cri).pod('a');
  assert.deepEqual(
    p.containers.map((c) => [c.id, c.phase]),
    [
      ['c3', 'running'],
      ['c2', 'exited'],
    ],
  );
});

test('RuntimeView: stopping() marks the pod while its stops run (two at once: until both end), then changed', async () => {
  const f = fakeCri();
  const view = new RuntimeView(f.cri);
  const relist = view.pods();
  await f.answer();
  await relist;
  const first = Promise.withResolvers<void>();
  const second = Promise.withResolvers<void>();
  const a = view.stopping('a', () => first.promise);
  const b = view.stopping('a', () => second.promise);
  assert.deepEqual([view.isStopping('a'), view.isStopping('b')], [true, false]);
  first.resolve();
  await a;
  assert.equal(view.isStopping('a'), true, 'the other stop still runs');
  second.reject(new Error('StopContainer failed'));
  await assert.rejects(b, /StopContainer failed/);
  assert.equal(view.isStopping('a'), false, 'a failed stop ends the mark too');
  const read = view.current('a');
  await f.answer();
  await read;
  assert.equal(f.lists(), 2, 'current() reads the stopped pod anew');
});

test("RuntimeView: a container's status is asked once: reads that overlap share the call, and a list begun before it keeps it", async () => {
  const f = fakeCri();
  const view = new RuntimeView(f.cri);
  f.containers.push({ id: 'c1', uid: 'a' });
  const held = Promise.withResolvers<void>();
  f.status.gate = held.promise;
  // The PLEG's whole list and a sync's read of its pod see the new container at once.
  const whole = view.pods();
  const own = view.pod('a');
  await f.answer();
  await f.answer();
  assert.equal(f.status.calls, 1, 'one status call for both reads');
  held.resolve();
  assert.deepEqual([(await whole).get('a')?.containers[0]?.id, (await own).containers[0]?.id], ['c1', 'c1']);

  // A whole list begins; the kubelet then creates c2 and reads its pod; the list answers without c2.
  f.status.gate = Promise.resolve();
  const before = view.pods();
  f.containers.push({ id: 'c2', uid: 'a' });
  const read = view.pod('a');
  await f.answer(1); // the pod's own read first: c1 and c2, c2's status cached
  await f.answer(); // then the whole list, as it was when it began: c1 alone
  await before;
  assert.deepEqual((await read).containers.map((c) => c.id).sort(), ['c1', 'c2']);
  assert.equal(f.status.calls, 2, "c2's status, asked by the pod's read");
  const next = view.pods();
  await f.answer();
  assert.deepEqual(
    (await next)
      .get('a')
      ?.containers.map((c) => c.id)
      .sort(),
    ['c1', 'c2'],
  );
  assert.equal(f.status.calls, 2, 'the next list finds c2 known: the list begun before c2 did not forget it');
});

test('cachedStands: a status answered stands for a list showing the same phase or an earlier one, never a later or unknown one', () => {
  const cases: [ContainerPhase, ContainerPhase, boolean][] = [
    ['running', 'running', true],
    ['running', 'created', true], // the list began before the start the status call saw
    ['exited', 'running', true],
    ['exited', 'created', true],
    ['created', 'running', false], // started since: ask again
    ['running', 'exited', false], // exited since: its code and reason are asked for
    ['unknown', 'unknown', true],
    ['unknown', 'running', false],
    ['running', 'unknown', false],
  ];
  for (const [cached, listed, want] of cases) assert.equal(cachedStands(cached, listed), want, `${cached} for ${listed}`);
});
