// Graceful node shutdown as an operator sees it (upstream's node e2e "GracefulNodeShutdown"):
// hack/logind.sh starts a system bus of its own and elogind (this host has no systemd), the
// kubelet is restarted with shutdownGracePeriod 20s / shutdownGracePeriodCriticalPods 10s on
// that bus, and logind's PrepareForShutdown(true) is simulated with dbus-send, as upstream's
// test emits it. The Node goes NotReady with the shutdown message, the normal pod is
// terminated before the critical one, both Failed/Terminated with DisruptionTarget, a new pod
// is refused with NodeShutdown, the state file and metrics record the shutdown, and the lock
// is released; PrepareForShutdown(false) cancels it. Nothing powers the host off.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { ROOT, clients, ensureStack, eventually, kubectl, nodeName, podSpec, restartKubelet, seriesValue, withNamespace } from './stack.ts';

const STATE_FILE = '/var/lib/kubelet/graceful_node_shutdown_state';
const MESSAGE = 'Pod was terminated in response to imminent node shutdown.';
let address = '';

const logind = (cmd: 'start' | 'stop') =>
  execFileSync('bash', [`${ROOT}/hack/logind.sh`, cmd], { encoding: 'utf8', timeout: 180_000 })
    .trim()
    .split('\n')
    .pop() ?? '';
const busEnv = () => ({ ...process.env, DBUS_SYSTEM_BUS_ADDRESS: address });
/** logind's PrepareForShutdown signal, as upstream's emitSignalPrepareForShutdown sends it. */
const emitPrepareForShutdown = (active: boolean) =>
  execFileSync(
    'dbus-send',
    ['--system', '--type=signal', '/org/freedesktop/login1', 'org.freedesktop.login1.Manager.PrepareForShutdown', `boolean:${active}`],
    { env: busEnv() },
  );
const inhibitors = () =>
  execFileSync(
    'dbus-send',
    [
      '--system',
      '--print-reply',
      '--dest=org.freedesktop.login1',
      '/org/freedesktop/login1',
      'org.freedesktop.login1.Manager.ListInhibitors',
    ],
    { env: busEnv(), encoding: 'utf8' },
  );
const kubeletHoldsLock = () => inhibitors().includes('"Kubelet needs time to handle node shutdown"');
const readyCondition = async () =>
  (await clients().core.readNode({ name: nodeName() })).status?.conditions?.find((c) => c.type === 'Ready');

before(() => {
  ensureStack();
  address = logind('start');
  rmSync(STATE_FILE, { force: true });
  restartKubelet('shutdownGracePeriod: 20s\nshutdownGracePeriodCriticalPods: 10s\n', { DBUS_SYSTEM_BUS_ADDRESS: address });
});

// Whatever happens: the shutdown cancelled, the kubelet back on its own configuration (no
// bus), the bus and elogind stopped, the state file gone, the Node Ready again.
after(async () => {
  try {
    emitPrepareForShutdown(false);
  } catch {
    /* the bus may be gone already */
  }
  restartKubelet();
  logind('stop');
  rmSync(STATE_FILE, { force: true });
  await eventually('the Node Ready again', 90_000, async () => (await readyCondition())?.status === 'True', 1000);
});

/** A pod that takes 3 s to stop on SIGTERM: the window in which the next group must not have started. */
const slowToStop = (name: string, over: Partial<V1Pod['spec']> = {}): V1Pod => {
  const p = podSpec(name, { terminationGracePeriodSeconds: 20, nodeName: nodeName(), ...over });
  p.spec!.containers[0]!.command = ['sh', '-c', "trap 'sleep 3; exit 0' TERM; sleep 3600 & wait"];
  return p;
};

test('PrepareForShutdown: NotReady, pods terminated lowest priority first with Terminated/DisruptionTarget, new pods refused, state recorded, lock released', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await eventually('the kubelet holding a delay inhibitor lock', 60_000, async () => kubeletHoldsLock(), 1000);
    await core.createNamespacedPod({ namespace: ns, body: slowToStop('normal') });
    await core.createNamespacedPod({ namespace: ns, body: slowToStop('critical', { priorityClassName: 'system-node-critical' }) });
    const get = (name: string) => core.readNamespacedPod({ name, namespace: ns });
    for (const name of ['normal', 'critical'])
      await eventually(`${name} Running`, 120_000, async () => (await get(name)).status?.phase === 'Running', 500);
    assert.ok(((await get('critical')).spec?.priority ?? 0) >= 2_000_000_000, 'the critical pod has system-critical priority');

    emitPrepareForShutdown(true);

    const ready = await eventually('the Node NotReady', 30_000, async () => {
      const c = await readyCondition();
      return c?.status === 'False' && c;
    });
    assert.equal(ready.reason, 'KubeletNotReady');
    assert.match(ready.message ?? '', /node is shutting down/);

    // The normal pod's group goes first; the critical pod is untouched until it is done.
    const disrupted = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'DisruptionTarget' && c.status === 'True');
    await eventually(
      'the normal pod terminated while the critical pod still runs',
      30_000,
      async () => disrupted(await get('normal')) && !disrupted(await get('critical')),
      100,
    );
    for (const name of ['normal', 'critical']) {
      const p = await eventually(`${name} Failed`, 60_000, async () => {
        const x = await get(name);
        return x.status?.phase === 'Failed' && x;
      });
      assert.equal(p.status?.reason, 'Terminated', name);
      assert.equal(p.status?.message, MESSAGE, name);
      const c = p.status?.conditions?.find((x) => x.type === 'DisruptionTarget');
      assert.deepEqual([c?.status, c?.reason, c?.message], ['True', 'TerminationByKubelet', MESSAGE], name);
    }

    // A new pod, bound here directly (the scheduler keeps away from a NotReady node), is refused.
    await core.createNamespacedPod({ namespace: ns, body: podSpec('late', { nodeName: nodeName() }) });
    const late = await eventually('the late pod refused', 30_000, async () => {
      const x = await get('late');
      return x.status?.phase === 'Failed' && x;
    });
    assert.equal(late.status?.reason, 'NodeShutdown');
    assert.equal(late.status?.message, 'Pod was rejected: Pod was rejected as the node is shutting down.');

    // Done: the state file has both times, the metrics too, the lock is gone, the Node has the event.
    await eventually('the state file with an end time', 30_000, async () => {
      if (!existsSync(STATE_FILE)) return false;
      const s = JSON.parse(readFileSync(STATE_FILE, 'utf8')) as { startTime: string; endTime: string };
      return Date.parse(s.endTime) >= Date.parse(s.startTime) && Date.parse(s.startTime) > Date.now() - 600_000;
    });
    const metrics = kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`);
    const start = seriesValue(metrics, 'kubelet_graceful_shutdown_start_time_seconds');
    assert.ok(start > Date.now() / 1000 - 600, `start time ${start}`);
    assert.ok(seriesValue(metrics, 'kubelet_graceful_shutdown_end_time_seconds') >= start);
    assert.equal(kubeletHoldsLock(), false, 'the lock is released once the pods are done');
    const events = kubectl(
      'get',
      'events',
      '-A',
      '--field-selector',
      `involvedObject.kind=Node,involvedObject.name=${nodeName()},reason=Shutdown`,
      '-o',
      'json',
    );
    assert.match(events, /Shutdown manager detected shutdown event/);

    // Cancelled: the lock is taken again, the Node is Ready again, pods are admitted again.
    emitPrepareForShutdown(false);
    await eventually('the lock taken again', 30_000, async () => kubeletHoldsLock(), 500);
    await eventually('the Node Ready again', 60_000, async () => (await readyCondition())?.status === 'True', 1000);
    await core.createNamespacedPod({ namespace: ns, body: podSpec('after', { nodeName: nodeName() }) });
    await eventually(
      'a new pod Running after the cancellation',
      120_000,
      async () => (await get('after')).status?.phase === 'Running',
      500,
    );
  }));
