// The node's own life: kubelet restarts (SIGTERM, SIGKILL) leave pods alone and are
// adopted back; a stopped runtime turns the node NotReady and back; a deleted Node
// object comes back.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { alive } from '../proc.ts';
import { ROOT, clients, ensureStack, eventually, kubectl, nodeName, podSpec, restartKubelet, seriesValue, withNamespace } from './stack.ts';

before(() => ensureStack());

const kubeletPid = () => Number(readFileSync(`${ROOT}/_output/local/pids/kubelet-ts.child.pid`, 'utf8'));
const ready = async () => (await clients().core.readNode({ name: nodeName() })).status?.conditions?.find((c) => c.type === 'Ready');

for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
  test(`kubelet ${signal}: it stops, the supervisor restarts it, no container restarts`, () =>
    withNamespace(async (ns) => {
      const { core } = clients();
      await core.createNamespacedPod({ namespace: ns, body: podSpec('survivor') });
      const before = await eventually('pod Running', 20_000, async () => {
        const p = await core.readNamespacedPod({ name: 'survivor', namespace: ns });
        return p.status?.phase === 'Running' ? p.status.containerStatuses![0]! : undefined;
      });
      const pid = kubeletPid();
      const t0 = Date.now();
      process.kill(pid, signal);
      await eventually('the old kubelet gone', 10_000, async () => !alive(pid), 100);
      if (signal === 'SIGTERM') assert.ok(Date.now() - t0 < 6_000, `SIGTERM took ${Date.now() - t0} ms`);
      await eventually('a new kubelet', 20_000, async () => kubeletPid() !== pid && alive(kubeletPid()), 200);
      // Give the new kubelet time to relist, sync and (wrongly) restart anything.
      await eventually('node Ready again', 30_000, async () => (await ready())?.status === 'True');
      await new Promise((r) => setTimeout(r, 3000));
      const after = (await core.readNamespacedPod({ name: 'survivor', namespace: ns })).status!.containerStatuses![0]!;
      assert.equal(after.containerID, before.containerID, 'same container');
      assert.equal(after.restartCount, 0);
      assert.equal(after.state?.running?.startedAt?.toString(), before.state?.running?.startedAt?.toString());
      // Each start says so on the Node (upstream's BirthCry), and so does the node allocatable cgroup's update.
      const event = async (reason: string) =>
        (await eventually(`a ${reason} event`, 20_000, async () => (await nodeEvents(reason, t0))[0])).message;
      assert.equal(await event('Starting'), 'Starting kubelet.');
      assert.equal(await event('NodeAllocatableEnforced'), 'Updated Node Allocatable limit across pods');
    }));
}

// server.go: --lock-file is held while the kubelet runs; with --exit-on-lock-contention a
// second kubelet waiting for it (flock.Acquire) makes this one exit cleanly and hand it over,
// pods untouched: the in-place upgrade the flags exist for.
test('--lock-file with --exit-on-lock-contention: held while running; a waiter makes the kubelet exit 0 and takes the lock; pods keep running', (t) =>
  withNamespace(async (ns) => {
    const lock = '/run/kts-e2e-kubelet.lock';
    const log = `${ROOT}/_output/local/logs/kubelet-ts.log`;
    t.after(() => {
      restartKubelet();
      rmSync(lock, { force: true });
    });
    restartKubelet(undefined, { KTS_KUBELET_FLAGS: `--lock-file=${lock} --exit-on-lock-contention` });
    const { core } = clients();
    await core.createNamespacedPod({ namespace: ns, body: podSpec('survivor') });
    const before = await eventually('pod Running', 20_000, async () => {
      const p = await core.readNamespacedPod({ name: 'survivor', namespace: ns });
      return p.status?.phase === 'Running' ? p.status.containerStatuses![0]! : undefined;
    });
    assert.equal(statSync(lock).mode & 0o777, 0o600);
    assert.equal(spawnSync('flock', ['--nonblock', lock, 'true']).status, 1, 'the lock is held while the kubelet runs');
    const pid = kubeletPid();
    const from = statSync(log).size;
    // The next kubelet: waits for the lock, then holds it a while (as a running kubelet would).
    const next = spawn('flock', ['--exclusive', lock, 'sh', '-c', 'echo acquired; sleep 3'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const acquired = new Promise<number>((resolve) => next.stdout.once('data', () => resolve(Date.now())));
    const t0 = Date.now();
    await eventually('the old kubelet gone', 15_000, async () => !alive(pid), 100);
    const took = (await acquired) - t0;
    assert.ok(took < 10_000, `the waiter got the lock after ${took} ms`);
    assert.match(readFileSync(log).subarray(from).toString(), /Lock file contention: shutting down; pods keep running/);
    // The supervisor writes its line after its wait returns, which may be after the pid is gone.
    await eventually('the supervisor saw exit code 0 (a clean exit, as upstream)', 5_000, async () =>
      /exited with 0; restarting/.test(readFileSync(log).subarray(from).toString()),
    );
    // The supervisor's new kubelet waits for the waiter to let go, then holds the lock and runs.
    const released = await new Promise<number>((resolve) => next.once('exit', () => resolve(Date.now())));
    await eventually('the new kubelet holds the lock', 30_000, async () => {
      const since = readFileSync(log).subarray(from).toString();
      return /Watching for lock file contention/.test(since) && spawnSync('flock', ['--nonblock', lock, 'true']).status === 1;
    });
    assert.ok(Date.now() >= released);
    assert.notEqual(kubeletPid(), pid);
    await eventually('node Ready again', 40_000, async () => (await ready())?.status === 'True');
    const after = (await core.readNamespacedPod({ name: 'survivor', namespace: ns })).status!.containerStatuses![0]!;
    assert.equal(after.containerID, before.containerID, 'same container');
    assert.equal(after.restartCount, 0);
  }));

/** The Node's events of a reason since a time (the kubelet names its Node by name, as upstream's nodeRef). */
async function nodeEvents(reason: string, since: number) {
  const list = await clients().core.listNamespacedEvent({
    namespace: 'default',
    fieldSelector: `involvedObject.kind=Node,involvedObject.name=${nodeName()},reason=${reason}`,
  });
  return list.items.filter((e) => new Date(e.lastTimestamp ?? e.eventTime ?? 0).getTime() >= since - 1000);
}

test('containerd stopped: Ready=False with "container runtime is down" within 40 s, Ready again after it restarts; NodeNotReady and NodeReady events', async () => {
  const since = Date.now();
  const pid = Number(readFileSync(`${ROOT}/_output/local/pids/containerd.pid`, 'utf8'));
  process.kill(pid, 'SIGTERM');
  try {
    const cond = await eventually(
      'Ready=False',
      40_000,
      async () => {
        const c = await ready();
        return c?.status === 'False' ? c : undefined;
      },
      500,
    );
    assert.equal(cond.reason, 'KubeletNotReady');
    assert.match(cond.message ?? '', /container runtime is down/);
  } finally {
    execFileSync('bash', [`${ROOT}/hack/containerd.sh`], { stdio: 'ignore' });
  }
  await eventually('Ready=True', 40_000, async () => (await ready())?.status === 'True', 500);
  // As upstream's ReadyCondition setter records each transition (recordNodeStatusEvent).
  for (const reason of ['NodeNotReady', 'NodeReady'])
    assert.equal(
      (await eventually(`a ${reason} event`, 20_000, async () => (await nodeEvents(reason, since))[0]))?.message,
      `Node ${nodeName()} status is now: ${reason}`,
    );
});

test('a deleted Node object is registered again', async () => {
  const { core } = clients();
  const old = await core.readNode({ name: nodeName() });
  await core.deleteNode({ name: nodeName() });
  const again = await eventually(
    'the Node back',
    30_000,
    async () => {
      const n = await core.readNode({ name: nodeName() }).catch(() => undefined);
      return n && n.metadata!.uid !== old.metadata!.uid ? n : undefined;
    },
    250,
  );
  assert.equal(again.metadata!.labels!['kubernetes.io/hostname'], nodeName());
  await eventually('Ready again', 40_000, async () => (await ready())?.status === 'True', 500);
  // The new Node has no conditions: each pressure condition set is an event, as upstream's setters record it.
  const deleted = new Date(again.metadata!.creationTimestamp!).getTime();
  for (const reason of ['NodeHasSufficientMemory', 'NodeHasNoDiskPressure', 'NodeHasSufficientPID'])
    assert.equal(
      (await eventually(`a ${reason} event`, 20_000, async () => (await nodeEvents(reason, deleted))[0]))?.message,
      `Node ${nodeName()} status is now: ${reason}`,
    );
  // The old Lease was owned by the old Node (the garbage collector removes it): the new one must be owned by the new Node.
  await leaseOwnedBy(again.metadata!.uid!);
});

/** Until the node's Lease is owned by the Node of this UID (after a Node deleted and made again). */
async function leaseOwnedBy(uid: string): Promise<void> {
  const { coordination } = clients();
  await eventually(
    'a Lease owned by the new Node',
    40_000,
    async () => {
      const l = await coordination.readNamespacedLease({ name: nodeName(), namespace: 'kube-node-lease' }).catch(() => undefined);
      return l?.metadata?.ownerReferences?.[0]?.uid === uid;
    },
    500,
  );
}

test('the node start-up SLI: a kubelet that creates its Node sets the kubelet_node_startup_* phases, which add up to the total', async () => {
  const { core } = clients();
  // Stopped first, so that the kubelet's start, not a watch event, finds the Node missing.
  execFileSync('bash', [`${ROOT}/hack/kubelet.sh`, 'stop'], { stdio: 'ignore', timeout: 60_000 });
  await core.deleteNode({ name: nodeName() });
  restartKubelet();
  const scrape = () => kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`);
  const text = await eventually(
    'the node start-up total',
    60_000,
    async () => {
      const t = scrape();
      return seriesValue(t, 'kubelet_node_startup_duration_seconds') > 0 && t;
    },
    500,
  );
  const phase = (name: string) => seriesValue(text, `kubelet_node_startup_${name}_duration_seconds`);
  const [preKubelet, preRegistration, registration, postRegistration] = [
    'pre_kubelet',
    'pre_registration',
    'registration',
    'post_registration',
  ].map(phase) as [number, number, number, number];
  const uptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  assert.ok(preKubelet > 0 && preKubelet < uptime, `boot to kubelet: ${preKubelet} s of ${uptime} s up`);
  assert.ok(preRegistration > 0 && preRegistration < 30, `kubelet to registration: ${preRegistration} s`);
  assert.ok(registration > 0 && registration < 30, `registration: ${registration} s`);
  assert.ok(postRegistration > 0 && postRegistration < 60, `registration to Ready: ${postRegistration} s`);
  const total = seriesValue(text, 'kubelet_node_startup_duration_seconds');
  assert.ok(
    Math.abs(total - (preKubelet + preRegistration + registration + postRegistration)) < 0.01,
    `the total ${total} s is the phases' sum`,
  );
  // The stack as the next tests expect it: the new Node's Lease (the old one goes with the old Node).
  await leaseOwnedBy((await core.readNode({ name: nodeName() })).metadata!.uid!);
});

test('a watch that expired (410 Gone after an apiserver restart) is answered by a relist that drops no pod', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({ namespace: ns, body: podSpec('steady') });
    const before = await eventually('pod Running', 20_000, async () => {
      const p = await core.readNamespacedPod({ name: 'steady', namespace: ns });
      return p.status?.phase === 'Running' ? p.status.containerStatuses![0]! : undefined;
    });
    const log = `${ROOT}/_output/local/logs/kubelet-ts.log`;
    const logged = readFileSync(log, 'utf8').length;
    // The kubelet's resourceVersion is made too old for certain: a write it does not watch,
    // etcd compacted up to it, and a new apiserver (whose watch cache starts at the current
    // revision). Its resumed watch then gets 410 Gone, from the cache or from etcd.
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'bump' } } });
    const etcd = async (path: string, body: object) =>
      (await fetch(`http://127.0.0.1:2379/v3/kv/${path}`, { method: 'POST', body: JSON.stringify(body) })).json() as Promise<{
        header: { revision: string };
      }>;
    const { header } = await etcd('range', { key: Buffer.from('kts-e2e').toString('base64') });
    await etcd('compaction', { revision: header.revision, physical: true });
    const pid = Number(readFileSync(`${ROOT}/_output/local/pids/kube-apiserver.pid`, 'utf8'));
    // SIGKILL: a terminating apiserver can wait minutes for its watches to drain.
    process.kill(-pid, 'SIGKILL');
    await eventually('the old apiserver gone', 10_000, async () => !alive(pid), 200);
    execFileSync('bash', [`${ROOT}/hack/control-plane.sh`], { stdio: 'ignore' });
    const since = () => readFileSync(log, 'utf8').slice(logged);
    try {
      await eventually(
        'the kubelet relisted pods after a 410',
        60_000,
        async () => since().includes('Watch of pods expired, listing again'),
        500,
      );
    } catch (e) {
      const lines = since()
        .split('\n')
        .filter((l) => /Watch of pods|certificate\]/.test(l));
      throw new Error(`${(e as Error).message}; the kubelet's log since:\n${lines.slice(-15).join('\n')}`);
    }
    // The watch works again: a new pod starts, and the old one was never touched. It is bound
    // here: the scheduler's own watches back off for up to 30 s after the restart (403s while
    // the new apiserver's RBAC caches fill), and the kubelet's watch is what this test is about.
    await core.createNamespacedPod({ namespace: ns, body: podSpec('after', { nodeName: nodeName() }) });
    await eventually(
      'new pod Running',
      30_000,
      async () => (await core.readNamespacedPod({ name: 'after', namespace: ns })).status?.phase === 'Running',
    );
    const after = (await core.readNamespacedPod({ name: 'steady', namespace: ns })).status!.containerStatuses![0]!;
    assert.equal(after.containerID, before.containerID, 'same container');
    assert.equal(after.restartCount, 0);
  }));
