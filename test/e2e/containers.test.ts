// How a pod's containers run, as a user sees it in `kubectl get pod -o yaml`, events
// and logs: init containers in order, sidecars, lifecycle hooks, restart policies and
// crash-loop back-off.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1Pod } from '@kubernetes/client-node';
import {
  clients,
  crictl,
  ensureStack,
  eventually,
  kubectl,
  nodeName,
  podSpec,
  restartKubelet,
  seriesValue,
  withNamespace,
  BUSYBOX,
  NODE_IP,
} from './stack.ts';

before(() => ensureStack());

const sh = (name: string, script: string, over: object = {}) => ({ name, image: BUSYBOX, command: ['sh', '-c', script], ...over });

async function readPod(ns: string, name: string): Promise<V1Pod> {
  return clients().core.readNamespacedPod({ name, namespace: ns });
}

async function reasons(ns: string, name: string): Promise<string[]> {
  const events = await clients().core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${name}` });
  return events.items.map((e) => `${e.reason}: ${e.message}`);
}

// The host's uptime in seconds (busybox date has no sub-second format).
const uptime = "cut -d' ' -f1 /proc/uptime";

test('init containers run in order, each to success, before the app container', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('ordered', {
        initContainers: [sh('first', `${uptime}; sleep 1`), sh('second', uptime)],
        containers: [sh('main', `${uptime}; sleep 3600`)],
      }),
    });
    const pod = await eventually('pod Running', 40_000, async () => {
      const p = await readPod(ns, 'ordered');
      return p.status?.phase === 'Running' ? p : undefined;
    });
    const st = pod.status!;
    assert.deepEqual(
      st.initContainerStatuses!.map((c) => [c.name, c.state?.terminated?.reason, c.state?.terminated?.exitCode, c.ready]),
      [
        ['first', 'Completed', 0, true],
        ['second', 'Completed', 0, true],
      ],
    );
    assert.equal(st.conditions!.find((c) => c.type === 'Initialized')!.status, 'True');
    // Each one started after the one before had finished.
    const started = (c: string) => Number(kubectl('-n', ns, 'logs', 'ordered', '-c', c).trim());
    const [first, second, main] = [started('first'), started('second'), started('main')];
    assert.ok(second - first >= 1, `second (${second}) started after first (${first}) slept 1 s`);
    assert.ok(main > second, 'main started after second');
  }));

test("an init container's image edited while it runs: it is not restarted, and its status shows the image it ran (upstream's container lifecycle node e2e)", () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('edited', { initContainers: [sh('init', 'sleep 4')], containers: [sh('main', 'exec sleep 3600')] }),
    });
    await eventually(
      'the init container running',
      30_000,
      async () => (await readPod(ns, 'edited')).status?.initContainerStatuses?.[0]?.state?.running,
    );
    const edited = 'registry.invalid/never/pulled:1';
    kubectl(
      '-n',
      ns,
      'patch',
      'pod',
      'edited',
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'replace', path: '/spec/initContainers/0/image', value: edited }]),
    );
    const pod = await eventually('pod Running', 40_000, async () => {
      const p = await readPod(ns, 'edited');
      return p.status?.phase === 'Running' ? p : undefined;
    });
    const init = pod.status!.initContainerStatuses![0]!;
    assert.deepEqual([init.image, init.state?.terminated?.exitCode, init.restartCount], [BUSYBOX, 0, 0]);
    assert.equal(pod.spec!.initContainers![0]!.image, edited);
  }));

test('a failing init container: Init:CrashLoopBackOff with restartPolicy Always, Failed with Never', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({ namespace: ns, body: podSpec('retrying', { initContainers: [sh('setup', 'exit 3')] }) });
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('giving-up', { restartPolicy: 'Never', initContainers: [sh('setup', 'exit 3')] }),
    });
    const retrying = await eventually('init container back-off', 40_000, async () => {
      const p = await readPod(ns, 'retrying');
      return p.status?.initContainerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff' ? p : undefined;
    });
    assert.equal(retrying.status!.phase, 'Pending');
    assert.equal(retrying.status!.initContainerStatuses![0]!.lastState!.terminated!.exitCode, 3);
    assert.equal(retrying.status!.containerStatuses![0]!.state!.waiting!.reason, 'PodInitializing');
    // kubectl exec into the app container, not yet created: upstream's words and status (500).
    assert.throws(
      () => kubectl('-n', ns, 'exec', 'retrying', '-c', 'main', '--', 'true'),
      (e: Error & { stderr?: string }) => /unable to upgrade connection: container not found \("main"\)/.test(e.stderr ?? ''),
    );
    const init = retrying.status!.conditions!.find((c) => c.type === 'Initialized')!;
    assert.deepEqual(
      [init.status, init.reason, init.message],
      ['False', 'ContainersNotInitialized', 'containers with incomplete status: [setup]'],
    );
    const failed = await eventually('pod Failed', 40_000, async () => {
      const p = await readPod(ns, 'giving-up');
      return p.status?.phase === 'Failed' ? p : undefined;
    });
    assert.equal(failed.status!.initContainerStatuses![0]!.state!.terminated!.exitCode, 3);
    const app = failed.status!.containerStatuses![0]!;
    assert.ok(!app.state!.running, 'the app container never ran');
    // As upstream's status of a Failed pod: the never-created container lists its mounts and has no
    // resources; the init container ran, so it has its (empty) resources; the readiness conditions
    // say PodFailed and nothing of the Pending pod's unready containers.
    const specMounts = failed.spec!.containers[0]!.volumeMounts?.map((m) => m.mountPath) ?? [];
    assert.ok(specMounts.length, 'the service account token is mounted');
    assert.deepEqual(
      app.volumeMounts?.map((m) => m.mountPath),
      specMounts,
    );
    assert.equal(app.resources, undefined);
    assert.equal(JSON.stringify(failed.status!.initContainerStatuses![0]!.resources), '{}');
    for (const type of ['Ready', 'ContainersReady']) {
      const c = failed.status!.conditions!.find((x) => x.type === type)!;
      assert.deepEqual([c.status, c.reason, c.message], ['False', 'PodFailed', undefined], type);
    }
  }));

test('a sidecar starts before the app, keeps running, and does not keep a finished Never pod alive', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('job', {
        restartPolicy: 'Never',
        initContainers: [sh('proxy', 'echo proxy-up; sleep 3600', { restartPolicy: 'Always' })],
        containers: [sh('main', 'sleep 3; echo done')],
      }),
    });
    const running = await eventually('app running next to the sidecar', 40_000, async () => {
      const p = await readPod(ns, 'job');
      return p.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
    });
    const side = running.status!.initContainerStatuses![0]!;
    assert.ok(side.state?.running, 'sidecar running');
    assert.deepEqual([side.started, side.ready], [true, true]);
    const done = await eventually('pod Succeeded once the app finished', 40_000, async () => {
      const p = await readPod(ns, 'job');
      return p.status?.phase === 'Succeeded' ? p : undefined;
    });
    assert.ok(done.status!.initContainerStatuses![0]!.state!.terminated, 'the sidecar was stopped');
    assert.equal(done.status!.containerStatuses![0]!.state!.terminated!.exitCode, 0);
  }));

test('postStart runs before the container counts as started; preStop runs within the grace period on delete', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    // An httpGet preStop to a server of this test, and an exec preStop writing to the container's log.
    const hits: string[] = [];
    const server = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, NODE_IP, r));
    const port = (server.address() as AddressInfo).port;
    try {
      await core.createNamespacedPod({
        namespace: ns,
        body: podSpec('hooked', {
          terminationGracePeriodSeconds: 8,
          containers: [
            {
              ...sh('main', 'until [ -f /tmp/post-started ]; do sleep 0.1; done; echo saw-post-start; exec sleep 3600'),
              lifecycle: {
                postStart: { exec: { command: ['touch', '/tmp/post-started'] } },
                preStop: { exec: { command: ['sh', '-c', 'echo pre-stop-ran > /proc/1/fd/1; sleep 2'] } },
              },
            },
            { ...sh('web', 'exec sleep 3600'), lifecycle: { preStop: { httpGet: { host: NODE_IP, port, path: '/pre-stop' } } } },
            // HTTPS to a plain HTTP server: retried over HTTP, with a warning on the pod (upstream's runHTTPHandler).
            {
              ...sh('tls-web', 'exec sleep 3600'),
              lifecycle: { preStop: { httpGet: { host: NODE_IP, port, path: '/pre-stop-https', scheme: 'HTTPS' } } },
            },
          ],
        }),
      });
      await eventually('pod Running', 30_000, async () => (await readPod(ns, 'hooked')).status?.phase === 'Running');
      assert.match(kubectl('-n', ns, 'logs', 'hooked', '-c', 'main'), /saw-post-start/);
      const fallbacks = () =>
        seriesValue(kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`), 'kubelet_lifecycle_handler_http_fallbacks_total');
      const fallbacksBefore = fallbacks();
      const deleted = Date.now();
      kubectl('-n', ns, 'delete', 'pod', 'hooked', '--wait=false');
      await eventually('exec preStop output in the log', 15_000, async () =>
        kubectl('-n', ns, 'logs', 'hooked', '-c', 'main').includes('pre-stop-ran'),
      );
      await eventually('httpGet preStop request', 15_000, async () => hits.includes('/pre-stop'));
      await eventually('the HTTPS preStop, over HTTP', 15_000, async () => hits.includes('/pre-stop-https'));
      const fallback = `LifecycleHTTPFallback: request to HTTPS lifecycle hook ${NODE_IP}:${port} got HTTP response, retry with HTTP succeeded`;
      await eventually('the LifecycleHTTPFallback warning', 15_000, async () => (await reasons(ns, 'hooked')).includes(fallback));
      assert.equal(fallbacks() - fallbacksBefore, 1, 'kubelet_lifecycle_handler_http_fallbacks_total counts it');
      await eventually(
        'pod gone',
        40_000,
        async () => !(await core.readNamespacedPod({ name: 'hooked', namespace: ns }).catch(() => undefined)),
      );
      // sleep 3600 as pid 1 ignores SIGTERM: the kubelet waits out the grace period before SIGKILL.
      assert.ok(Date.now() - deleted >= 7_000, `deletion waited for the 8 s grace period (took ${Date.now() - deleted} ms)`);
    } finally {
      server.close();
    }
  }));

test('a shorter grace period (kubectl delete --grace-period=1) cuts a graceful deletion short: its preStop sleep ends early, as a deletion ends a postStart one; counted', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    // sleep as PID 1 ignores SIGTERM: without the shorter grace period the deletion takes the full minute.
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('slow', {
        terminationGracePeriodSeconds: 60,
        containers: [{ ...sh('main', 'exec sleep 3600'), lifecycle: { preStop: { sleep: { seconds: 40 } } } }],
      }),
    });
    await eventually('pod Running', 30_000, async () => (await readPod(ns, 'slow')).status?.phase === 'Running');
    const early = () =>
      seriesValue(kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`), 'kubelet_sleep_action_terminated_early_total');
    const earlyBefore = early();
    kubectl('-n', ns, 'delete', 'pod', 'slow', '--wait=false');
    await eventually('the preStop sleep under way', 15_000, async () =>
      (await reasons(ns, 'slow')).includes('Killing: Stopping container main'),
    );
    await new Promise((r) => setTimeout(r, 2000));
    const shortened = Date.now();
    kubectl('-n', ns, 'delete', 'pod', 'slow', '--grace-period=1', '--wait=false');
    await eventually(
      'pod gone',
      30_000,
      async () => !(await core.readNamespacedPod({ name: 'slow', namespace: ns }).catch(() => undefined)),
      250,
    );
    const took = Date.now() - shortened;
    assert.ok(took < 15_000, `gone ${took} ms after the shorter grace period, not after the minute`);
    // As upstream's runSleepHandler: the cut sleep is a failed hook, and counted.
    assert.ok((await reasons(ns, 'slow')).includes('FailedPreStopHook: PreStopHook failed'));
    assert.equal(early() - earlyBefore, 1, 'kubelet_sleep_action_terminated_early_total');

    // A postStart sleep is cut short by the pod's deletion (upstream's SyncPod context): the pod
    // goes within its grace period, not after the sleep.
    await core.createNamespacedPod({
      namespace: ns,
      // A sleep may not outlast the grace period (the apiserver's validation); the container ends on SIGTERM.
      body: podSpec('starting', {
        terminationGracePeriodSeconds: 60,
        containers: [
          { ...sh('main', 'trap "exit 0" TERM; while true; do sleep 1; done'), lifecycle: { postStart: { sleep: { seconds: 50 } } } },
        ],
      }),
    });
    await eventually('the postStart sleep under way', 30_000, async () =>
      (await reasons(ns, 'starting')).includes('Started: Container started'),
    );
    const deleted = Date.now();
    kubectl('-n', ns, 'delete', 'pod', 'starting', '--wait=false');
    await eventually(
      'pod starting gone',
      40_000,
      async () => !(await core.readNamespacedPod({ name: 'starting', namespace: ns }).catch(() => undefined)),
      250,
    );
    assert.ok(Date.now() - deleted < 20_000, `gone ${Date.now() - deleted} ms after its deletion, not after the sleep`);
    assert.equal(early() - earlyBefore, 2, 'the postStart sleep counted too');
  }));

test('a failing postStart hook kills the container with FailedPostStartHook', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('bad-hook', {
        containers: [{ ...sh('main', 'exec sleep 3600'), lifecycle: { postStart: { exec: { command: ['sh', '-c', 'exit 7'] } } } }],
      }),
    });
    // As upstream: the event says only that it failed (what a hook prints stays off the
    // apiserver's events), and the container is killed as any other, with a Killing event.
    const events = await eventually('FailedPostStartHook and Killing events', 30_000, async () => {
      const r = await reasons(ns, 'bad-hook');
      return r.includes('Killing: FailedPostStartHook') ? r : undefined;
    });
    assert.ok(events.includes('FailedPostStartHook: PostStartHook failed'), events.join('\n'));
    assert.ok(!events.some((x) => /exited with 7/.test(x)), events.join('\n'));
  }));

test('restartPolicy OnFailure restarts a failure and leaves a success; CrashLoopBackOff doubles its back-off', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('flaky', { restartPolicy: 'OnFailure', containers: [sh('main', 'exit 1')] }),
    });
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('fine', { restartPolicy: 'OnFailure', containers: [sh('main', 'exit 0')] }),
    });
    await eventually('OnFailure success Succeeded', 30_000, async () => (await readPod(ns, 'fine')).status?.phase === 'Succeeded');
    assert.equal((await readPod(ns, 'fine')).status!.containerStatuses![0]!.restartCount, 0);
    const first = await eventually('back-off 10s', 30_000, async () => {
      const c = (await readPod(ns, 'flaky')).status?.containerStatuses?.[0];
      return c?.state?.waiting?.reason === 'CrashLoopBackOff' ? c : undefined;
    });
    assert.match(first.state!.waiting!.message!, /^back-off 10s restarting failed container=main pod=flaky_/);
    // The restarts that happened, as upstream counts them: the instance that exited is the second run.
    assert.equal(first.restartCount, 1);
    const second = await eventually('back-off 20s', 45_000, async () => {
      const c = (await readPod(ns, 'flaky')).status?.containerStatuses?.[0];
      return c?.state?.waiting?.message?.startsWith('back-off 20s') ? c : undefined;
    });
    assert.equal(second.restartCount, 2);
    assert.equal((await readPod(ns, 'flaky')).status!.phase, 'Running');
    assert.ok(
      (await reasons(ns, 'flaky')).some((r) =>
        /^BackOff: Back-off restarting failed container main in pod flaky_e2e-\w+\([0-9a-f-]+\)$/.test(r),
      ),
    );
  }));

test('an ephemeral container whose process cannot start: Waiting RunContainerError with its StartError as lastState, not restarted, and so it stays', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({ namespace: ns, body: podSpec('target', { containers: [sh('main', 'exec sleep 3600')] }) });
    await eventually('target Running', 60_000, async () => (await readPod(ns, 'target')).status?.phase === 'Running');
    kubectl('-n', ns, 'debug', 'target', `--image=${BUSYBOX}`, '--container=dbg', '--', '/nonexistent');
    const status = async () => (await readPod(ns, 'target')).status?.ephemeralContainerStatuses?.[0];
    const first = await eventually('dbg Waiting', 60_000, async () => {
      const s = await status();
      return s?.state?.waiting ? s : undefined;
    });
    const shape = (s: typeof first) => [
      s.state?.waiting?.reason,
      s.lastState?.terminated?.reason,
      s.lastState?.terminated?.exitCode,
      s.restartCount,
    ];
    assert.deepEqual(shape(first), ['RunContainerError', 'StartError', 128, 0]);
    assert.match(first.state!.waiting!.message!, /nonexistent/);
    // It never started: the runtime's 0, which upstream shows as the epoch.
    assert.equal(new Date(first.lastState!.terminated!.startedAt as unknown as string).getTime(), 0);
    // Later syncs do not try it again, and upstream's reason cache keeps it Waiting.
    kubectl('-n', ns, 'annotate', 'pod', 'target', 'poke=1');
    await new Promise((r) => setTimeout(r, 15_000));
    const later = await status();
    assert.ok(later);
    assert.deepEqual(shape(later), ['RunContainerError', 'StartError', 128, 0]);
    assert.equal((await readPod(ns, 'target')).status?.phase, 'Running');
  }));

test('crashLoopBackOff.maxContainerRestartPeriod: the back-off starts at and stays under the cap', async (t) => {
  t.after(() => restartKubelet());
  // Below the initial 10 s, the cap is the initial delay too (newCrashLoopBackOff).
  restartKubelet('crashLoopBackOff: {maxContainerRestartPeriod: 2s}\n');
  await withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({ namespace: ns, body: podSpec('capped', { containers: [sh('main', 'exit 1')] }) });
    const c = await eventually('back-off 2s', 45_000, async () => {
      const s = (await readPod(ns, 'capped')).status?.containerStatuses?.[0];
      return s?.state?.waiting?.reason === 'CrashLoopBackOff' ? s : undefined;
    });
    assert.match(c.state!.waiting!.message!, /^back-off 2s restarting failed container=main pod=capped_/);
    // With the default 10 s, 20 s, 40 s... five restarts take minutes; under a 2 s cap, seconds.
    await eventually(
      '5 restarts',
      45_000,
      async () => ((await readPod(ns, 'capped')).status?.containerStatuses?.[0]?.restartCount ?? 0) >= 5,
    );
    const later = (await readPod(ns, 'capped')).status?.containerStatuses?.[0]?.state?.waiting?.message;
    if (later) assert.match(later, /^back-off 2s /, 'never more than the cap');
  });
});

test('the termination message: what the container wrote to terminationMessagePath, or its log with FallbackToLogsOnError', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('written', { restartPolicy: 'Never', containers: [sh('main', 'echo -n "disk full" > /dev/termination-log; exit 4')] }),
    });
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('fallback', {
        restartPolicy: 'Never',
        containers: [sh('main', 'echo starting; echo "fatal: no config"; exit 2', { terminationMessagePolicy: 'FallbackToLogsOnError' })],
      }),
    });
    const terminated = (name: string) =>
      eventually(`${name} terminated`, 30_000, async () => (await readPod(ns, name)).status?.containerStatuses?.[0]?.state?.terminated);
    const written = await terminated('written');
    assert.deepEqual([written.exitCode, written.message], [4, 'disk full']);
    const fallback = await terminated('fallback');
    assert.deepEqual([fallback.exitCode, fallback.message], [2, 'starting\nfatal: no config\n']);
  }));

test("readiness gates: Ready waits for the gate's condition, which a controller sets, and the kubelet keeps it", () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('gated', { readinessGates: [{ conditionType: 'example.com/load-balancer' }] }),
    });
    const ready = async () => (await readPod(ns, 'gated')).status?.conditions?.find((c) => c.type === 'Ready');
    const blocked = await eventually('Ready False by the gate', 30_000, async () => {
      const c = await ready();
      return c?.reason === 'ReadinessGatesNotReady' ? c : undefined;
    });
    assert.equal(blocked.message, 'corresponding condition of pod readiness gate "example.com/load-balancer" does not exist.');
    kubectl(
      '-n',
      ns,
      'patch',
      'pod',
      'gated',
      '--subresource=status',
      '--type=strategic',
      '-p',
      JSON.stringify({
        status: {
          conditions: [
            { type: 'example.com/load-balancer', status: 'True', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
          ],
        },
      }),
    );
    await eventually('Ready True', 30_000, async () => (await ready())?.status === 'True');
    const gate = (await readPod(ns, 'gated')).status!.conditions!.find((c) => c.type === 'example.com/load-balancer');
    assert.equal(gate?.status, 'True', "the controller's condition stays after the kubelet's patches");
  }));

test("resources: the pod cgroup and the sandbox carry the pod's CPU quota and memory limit; a container over its limit is OOMKilled", () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const limits = { cpu: '200m', memory: '64Mi' };
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('bounded', { containers: [{ ...sh('main', 'sleep 3600'), resources: { limits } }] }),
    });
    const pod = await eventually('pod Running', 30_000, async () => {
      const p = await readPod(ns, 'bounded');
      return p.status?.phase === 'Running' ? p : undefined;
    });
    assert.equal(pod.status!.qosClass, 'Guaranteed');
    const cg = (ctl: string, file: string) => readFileSync(`/sys/fs/cgroup/${ctl}/kubepods/pod${pod.metadata!.uid}/${file}`, 'utf8').trim();
    assert.equal(cg('memory', 'memory.limit_in_bytes'), String(64 * 1024 * 1024));
    assert.equal(cg('cpu', 'cpu.cfs_quota_us'), '20000');
    assert.equal(cg('cpu', 'cpu.shares'), '204');
    // The pod's resources on its sandbox (upstream's applySandboxResources), which containerd
    // writes into the sandbox's OCI spec for VM runtimes: what Kata would size the VM from.
    const sandbox = crictl('pods', '-q', '--label', `io.kubernetes.pod.uid=${pod.metadata!.uid}`).trim();
    const annotations = JSON.parse(crictl('inspectp', sandbox)).info.runtimeSpec.annotations as Record<string, string>;
    assert.deepEqual(
      ['cpu-period', 'cpu-quota', 'cpu-shares', 'memory'].map((k) => annotations[`io.kubernetes.cri.sandbox-${k}`]),
      ['100000', '20000', '204', String(64 * 1024 * 1024)],
    );
    // tail keeps its whole input in memory, waiting for a newline that never comes.
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('hungry', {
        restartPolicy: 'Never',
        containers: [{ ...sh('main', 'head -c 200m /dev/zero | tail'), resources: { limits: { memory: '32Mi' } } }],
      }),
    });
    const t = await eventually(
      'OOMKilled',
      60_000,
      async () => (await readPod(ns, 'hungry')).status?.containerStatuses?.[0]?.state?.terminated,
    );
    assert.deepEqual([t.reason, t.exitCode], ['OOMKilled', 137]);
  }));

// upstream's qosContainerManager: BestEffort pods share the least CPU weight there is, Burstable
// pods the weight of their CPU requests together (UpdateCgroups, before each pod cgroup and
// every minute); Guaranteed pods sit in kubepods itself, each with its own.
test("QoS cgroups: kubepods/besteffort has the least CPU weight, kubepods/burstable its pods' CPU requests", () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const shares = (qos: string) => Number(readFileSync(`/sys/fs/cgroup/cpu/kubepods/${qos}/cpu.shares`, 'utf8'));
    const milli = (q = '0') => (q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000);
    /** upstream's MilliCPUToShares of what the Burstable pods on the node request (test pods: no init containers or overhead). */
    const burstableShares = async () => {
      const pods = await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName()}` });
      const m = pods.items
        .filter((p) => p.status?.qosClass === 'Burstable' && !['Succeeded', 'Failed'].includes(p.status?.phase ?? ''))
        .flatMap((p) => p.spec!.containers)
        .reduce((n, c) => n + milli(c.resources?.requests?.cpu), 0);
      return Math.max(2, Math.floor((m * 1024) / 1000));
    };
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('burst', { containers: [{ ...sh('main', 'sleep 3600'), resources: { requests: { cpu: '300m' } } }] }),
    });
    await eventually('burst Running', 60_000, async () => (await readPod(ns, 'burst')).status?.phase === 'Running');
    assert.equal(shares('besteffort'), 2);
    const want = await eventually(
      "kubepods/burstable's cpu.shares: the Burstable pods' CPU requests",
      90_000,
      async () => {
        const w = await burstableShares();
        return shares('burstable') === w ? w : undefined;
      },
      1000,
    );
    assert.ok(want >= 307, `the new pod's 300m among them: ${want}`);
  }));

test("podPidsLimit: a pod's cgroup gets pids.max, and its containers cannot fork past it", async (t) => {
  t.after(() => restartKubelet());
  restartKubelet('podPidsLimit: 20\n');
  await withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({ namespace: ns, body: podSpec('forks', { containers: [sh('main', 'sleep 3600')] }) });
    const pod = await eventually('pod Running', 60_000, async () => {
      const p = await readPod(ns, 'forks');
      return p.status?.phase === 'Running' ? p : undefined;
    });
    assert.equal(readFileSync(`/sys/fs/cgroup/pids/kubepods/besteffort/pod${pod.metadata!.uid}/pids.max`, 'utf8').trim(), '20');
    // 30 more processes in a pod that may hold 20 (the pause process and this shell among them);
    // busybox sh gives up at the fork that fails (exit 2): its message is what counts.
    let out: string;
    try {
      out = kubectl(
        'exec',
        '-n',
        ns,
        'forks',
        '--',
        'sh',
        '-c',
        'i=0; while [ $i -lt 30 ]; do sleep 600 >/dev/null 2>&1 & i=$((i+1)); done 2>&1',
      );
    } catch (e) {
      out = `${(e as { stdout?: string }).stdout ?? ''}${(e as { stderr?: string }).stderr ?? ''}`;
    }
    assert.match(out, /can't fork|Resource temporarily unavailable/, out);
  });
});

// KubeletConfiguration cpuCFSQuotaPeriod (CustomCPUCFSQuotaPeriod, GA) and cpuCFSQuota: the
// period of every quota, and with quota off no cpu limit enforced (calculateLinuxResources,
// ResourceConfigForPod's enforceCPULimits); the pod still shows its limit in status.resources.
test('cpuCFSQuotaPeriod and cpuCFSQuota: the quota of a cpu limit at the configured period, and none with quota off', async (t) => {
  t.after(() => restartKubelet());
  const limited = async (ns: string, name: string) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec(name, { containers: [{ ...sh('main', 'sleep 3600'), resources: { limits: { cpu: '200m', memory: '64Mi' } } }] }),
    });
    const pod = await eventually(`${name} Running`, 60_000, async () => {
      const p = await readPod(ns, name);
      return p.status?.phase === 'Running' ? p : undefined;
    });
    const id = pod.status!.containerStatuses![0]!.containerID!.replace(/^\w+:\/\//, '');
    const dir = `/sys/fs/cgroup/cpu/kubepods/pod${pod.metadata!.uid}`;
    const read = (f: string) => readFileSync(f, 'utf8').trim();
    return {
      pod: [read(`${dir}/cpu.cfs_period_us`), read(`${dir}/cpu.cfs_quota_us`)],
      container: [read(`${dir}/${id}/cpu.cfs_period_us`), read(`${dir}/${id}/cpu.cfs_quota_us`)],
      statusLimit: pod.status!.containerStatuses![0]!.resources?.limits?.cpu,
    };
  };
  restartKubelet('cpuCFSQuotaPeriod: 50ms\n');
  await withNamespace(async (ns) => {
    const got = await limited(ns, 'period');
    assert.deepEqual(got.pod, ['50000', '10000'], 'the pod cgroup: 200m of a 50 ms period');
    assert.deepEqual(got.container, ['50000', '10000'], "the container's cgroup");
    assert.equal(got.statusLimit, '200m');
  });
  restartKubelet('cpuCFSQuota: false\n');
  await withNamespace(async (ns) => {
    const got = await limited(ns, 'unbounded');
    assert.equal(got.pod[1], '-1', 'the pod cgroup: no quota');
    assert.equal(got.container[1], '-1', "the container's cgroup: no quota");
    assert.equal(got.statusLimit, '200m', 'the limit as allocated, which no cgroup holds');
  });
});

test('pod-level resources (spec.resources): QoS, the pod cgroup and the limits of containers that set none come from them', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    const body = podSpec('pod-level', {
      resources: { requests: { cpu: '100m', memory: '48Mi' }, limits: { cpu: '100m', memory: '48Mi' } },
      containers: [sh('b', 'sleep 3600'), sh('a', 'sleep 3600')],
    } as never);
    await core.createNamespacedPod({ namespace: ns, body });
    const pod = await eventually('pod Running', 30_000, async () => {
      const p = await readPod(ns, 'pod-level');
      return p.status?.phase === 'Running' ? p : undefined;
    });
    assert.equal(pod.status!.qosClass, 'Guaranteed');
    assert.deepEqual(
      pod.status!.containerStatuses!.map((c) => c.name),
      ['a', 'b'],
      "the containers' statuses sorted by name, as upstream's",
    );
    const cg = (ctl: string, file: string) => readFileSync(`/sys/fs/cgroup/${ctl}/kubepods/pod${pod.metadata!.uid}/${file}`, 'utf8').trim();
    assert.equal(cg('memory', 'memory.limit_in_bytes'), String(48 * 1024 * 1024));
    assert.equal(cg('cpu', 'cpu.cfs_quota_us'), '10000');
    assert.equal(cg('cpu', 'cpu.shares'), '102');
    // A container without limits of its own is bounded by the pod's (upstream's getMemoryLimit).
    assert.equal(
      kubectl('exec', '-n', ns, 'pod-level', '-c', 'a', '--', 'cat', '/sys/fs/cgroup/memory/memory.limit_in_bytes').trim(),
      String(48 * 1024 * 1024),
    );
  }));

// qosReserved (QOSReserved, alpha): the QoS cgroups keep a share of the higher classes' memory
// requests for them (upstream's setMemoryReserve): kubepods/burstable is held to allocatable
// (capacity less system and kube reserved) less 50% of the Guaranteed pods' requests, besteffort
// to that less 50% of the Burstable pods' too.
test('qosReserved memory 50%: the burstable and besteffort QoS cgroups held to allocatable less half the requests above them', async (t) => {
  t.after(() => restartKubelet());
  restartKubelet('featureGates: {QOSReserved: true}\nqosReserved: {memory: "50%"}\n');
  await withNamespace(async (ns) => {
    const { core } = clients();
    const UNIT: Record<string, number> = { '': 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, k: 1e3, M: 1e6, G: 1e9 };
    const bytes = (q = '0') => {
      const m = /^(\d+)([KMG]i?|k)?$/.exec(q);
      assert.ok(m, `a memory quantity: ${q}`);
      return Number(m[1]) * UNIT[m[2] ?? '']!;
    };
    const limit = (qos: string) => Number(readFileSync(`/sys/fs/cgroup/memory/kubepods/${qos}/memory.limit_in_bytes`, 'utf8'));
    /** setMemoryReserve's figures from the Node and the node's pods (test pods: no init containers or overhead). */
    const want = async () => {
      const node = await core.readNode({ name: nodeName() });
      const configz = JSON.parse(kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/configz`)).kubeletconfig;
      const allocatable =
        bytes(node.status!.capacity!.memory) - bytes(configz.systemReserved?.memory) - bytes(configz.kubeReserved?.memory);
      const pods = await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName()}` });
      const requests = (qos: string) =>
        pods.items
          .filter((p) => p.status?.qosClass === qos && !['Succeeded', 'Failed'].includes(p.status?.phase ?? ''))
          .flatMap((p) => p.spec!.containers)
          .reduce((n, c) => n + bytes(c.resources?.requests?.memory), 0);
      const burstable = allocatable - Math.trunc(requests('Guaranteed') / 2);
      const page = (n: number) => Math.floor(n / 4096) * 4096;
      return { burstable: page(burstable), besteffort: page(burstable - Math.trunc(requests('Burstable') / 2)) };
    };
    const resources = (memory: string, guaranteed: boolean) => ({
      requests: { memory, cpu: '50m' },
      ...(guaranteed ? { limits: { memory, cpu: '50m' } } : {}),
    });
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('guaranteed', { containers: [{ ...sh('main', 'sleep 3600'), resources: resources('256Mi', true) }] }),
    });
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('burstable', { containers: [{ ...sh('main', 'sleep 3600'), resources: resources('128Mi', false) }] }),
    });
    for (const p of ['guaranteed', 'burstable'])
      await eventually(`${p} Running`, 60_000, async () => (await readPod(ns, p)).status?.phase === 'Running');
    let last = {};
    await eventually(
      'the QoS cgroups at allocatable less half the requests above them',
      90_000,
      async () => {
        const w = await want();
        last = { want: w, got: { burstable: limit('burstable'), besteffort: limit('besteffort') } };
        return limit('burstable') === w.burstable && limit('besteffort') === w.besteffort;
      },
      2000,
    ).catch((e) => assert.fail(`${(e as Error).message}: ${JSON.stringify(last)}`));
    assert.ok(limit('burstable') < 2 ** 62, 'a limit, not the unlimited default');
  });
});

// cgroupsPerQOS: false (upstream's noop QoS and pod container managers): no kubepods tiers and
// no pod cgroups; the sandbox gets no cgroup parent, so the runtime puts each container where
// its default spec does (/k8s.io/<ID>), with the container's own limits there.
test('cgroupsPerQOS false: no pod cgroup, containers under the runtime default with their limits, stats and deletion as usual', async (t) => {
  t.after(() => restartKubelet());
  restartKubelet('cgroupsPerQOS: false\nenforceNodeAllocatable: []\n');
  await withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('flat', { containers: [{ ...sh('main', 'sleep 3600'), resources: { limits: { memory: '64Mi', cpu: '100m' } } }] }),
    });
    const pod = await eventually('flat Running', 60_000, async () => {
      const p = await readPod(ns, 'flat');
      return p.status?.phase === 'Running' ? p : undefined;
    });
    const uid = pod.metadata!.uid!;
    const id = pod.status!.containerStatuses![0]!.containerID!.replace(/^containerd:\/\//, '');
    const sandbox = crictl('pods', '--namespace', ns, '--name', 'flat', '-q').trim();
    const parent = JSON.parse(crictl('inspectp', sandbox)).info?.config?.linux?.cgroup_parent ?? '';
    assert.equal(parent, '', 'no cgroup parent for the sandbox');
    for (const c of ['cpu', 'memory'])
      assert.equal(
        execFileSync('find', [`/sys/fs/cgroup/${c}`, '-maxdepth', '4', '-name', `pod${uid}`], { encoding: 'utf8' }).trim(),
        '',
        `no pod cgroup in ${c}`,
      );
    assert.equal(readFileSync(`/sys/fs/cgroup/memory/k8s.io/${id}/memory.limit_in_bytes`, 'utf8').trim(), String(64 * 2 ** 20));
    assert.equal(readFileSync(`/sys/fs/cgroup/cpu/k8s.io/${id}/cpu.cfs_quota_us`, 'utf8').trim(), '10000');
    const summary = await eventually('the pod in /stats/summary with its memory', 60_000, async () => {
      const s = JSON.parse(kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/stats/summary`));
      const p = s.pods.find((x: { podRef: { name: string; namespace: string } }) => x.podRef.name === 'flat' && x.podRef.namespace === ns);
      return p?.memory?.workingSetBytes > 0 ? p : undefined;
    });
    assert.ok(summary.cpu, 'cpu stats of the pod');
    await core.deleteNamespacedPod({ name: 'flat', namespace: ns, gracePeriodSeconds: 1 });
    await eventually('flat deleted', 60_000, async () =>
      readPod(ns, 'flat').then(
        () => false,
        () => true,
      ),
    );
    assert.equal(existsSync(`/sys/fs/cgroup/memory/k8s.io/${id}`), false, "the container's cgroup gone with it");
  });
});
