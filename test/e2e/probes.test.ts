// Liveness, readiness and startup probes as a user sees them: the pod's Ready condition
// and containerStatuses[].ready/started, restarts with Unhealthy and Killing events, and
// the prober's metrics on /metrics/probes, in the manner of upstream's container_probe.go.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { clients, ensureStack, eventually, kubectl, nodeName, podSpec, withNamespace, BUSYBOX } from './stack.ts';

before(() => ensureStack());

const readPod = (ns: string, name: string): Promise<V1Pod> => clients().core.readNamespacedPod({ name, namespace: ns });
const condition = (p: V1Pod, type: string) => p.status?.conditions?.find((c) => c.type === type)?.status;

async function events(ns: string, name: string): Promise<string[]> {
  const list = await clients().core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${name}` });
  return list.items.map((e) => `${e.type} ${e.reason}: ${e.message}`);
}

const sleepFor = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('readiness exec probe: Running but not Ready until the file exists, not Ready again once it is gone', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('ready-file', {
        containers: [
          {
            name: 'main',
            image: BUSYBOX,
            command: ['sleep', '3600'],
            readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1, failureThreshold: 1 },
          },
        ],
      }),
    });
    await eventually('pod Running', 40_000, async () => (await readPod(ns, 'ready-file')).status?.phase === 'Running');
    // Several failed probes later it is still not ready, and says why.
    await sleepFor(3000);
    let p = await readPod(ns, 'ready-file');
    const c = p.status!.containerStatuses![0]!;
    assert.deepEqual([c.started, c.ready, condition(p, 'ContainersReady'), condition(p, 'Ready')], [true, false, 'False', 'False']);
    assert.equal(p.status!.conditions!.find((x) => x.type === 'Ready')!.message, 'containers with unready status: [main]');
    const unhealthy = await eventually('an Unhealthy event', 20_000, async () =>
      (await events(ns, 'ready-file')).find((e) => e.includes('Unhealthy')),
    );
    assert.match(unhealthy, /^Warning Unhealthy: Readiness probe failed: cat: can't open '\/tmp\/ready': No such file or directory/);

    kubectl('-n', ns, 'exec', 'ready-file', '--', 'touch', '/tmp/ready');
    p = await eventually('pod Ready once the file exists', 20_000, async () => {
      const x = await readPod(ns, 'ready-file');
      return condition(x, 'Ready') === 'True' ? x : undefined;
    });
    assert.equal(p.status!.containerStatuses![0]!.ready, true);
    assert.equal(condition(p, 'ContainersReady'), 'True');

    kubectl('-n', ns, 'exec', 'ready-file', '--', 'rm', '/tmp/ready');
    p = await eventually('pod not Ready once the file is gone', 20_000, async () => {
      const x = await readPod(ns, 'ready-file');
      return condition(x, 'Ready') === 'False' ? x : undefined;
    });
    assert.equal(p.status!.containerStatuses![0]!.ready, false);
    assert.equal(p.status!.containerStatuses![0]!.restartCount, 0, 'readiness never restarts a container');

    // The prober's metrics, through the apiserver's node proxy.
    const metrics = kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics/probes`);
    const series = (result: string) =>
      new RegExp(
        `^prober_probe_total\\{probe_type="Readiness",result="${result}",container="main",pod="ready-file",namespace="${ns}",pod_uid="${p.metadata!.uid}"\\} (\\d+)$`,
        'm',
      );
    assert.ok(Number(series('successful').exec(metrics)?.[1]) >= 1, metrics);
    assert.ok(Number(series('failed').exec(metrics)?.[1]) >= 3, metrics);
    assert.match(
      metrics,
      new RegExp(
        `^prober_probe_duration_seconds_count\\{probe_type="Readiness",container="main",pod="ready-file",namespace="${ns}"\\} \\d+$`,
        'm',
      ),
    );
  }));

test('liveness: a container its probe keeps killing goes into CrashLoopBackOff, as upstream backs restarts off', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('always-sick', {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'main',
            image: BUSYBOX,
            command: ['sleep', '3600'],
            livenessProbe: { exec: { command: ['false'] }, periodSeconds: 1, failureThreshold: 1 },
          },
        ],
      }),
    });
    // Upstream restarts the first two kills at once, then waits 10 s, 20 s, ...: the pod shows
    // CrashLoopBackOff between restarts instead of restarting every second.
    const waiting = await eventually('CrashLoopBackOff', 60_000, async () => {
      const c = (await readPod(ns, 'always-sick')).status?.containerStatuses?.[0];
      return c?.state?.waiting?.reason === 'CrashLoopBackOff' ? c : undefined;
    });
    assert.match(waiting.state!.waiting!.message!, /^back-off 10s restarting failed container=main pod=always-sick_/);
    assert.ok(waiting.restartCount! >= 2 && waiting.restartCount! <= 3, `restartCount ${waiting.restartCount}`);
    const evs = await events(ns, 'always-sick');
    assert.ok(
      evs.some((e) => e.startsWith('Warning BackOff: Back-off restarting failed container main in pod always-sick_')),
      evs.join('\n'),
    );
    // The probe fails every second with the same words: one event whose count goes up, as
    // upstream's recorder correlates repeats (kubectl describe's "(x5 over 10s)").
    const unhealthy = await eventually('one Unhealthy event, counted up', 30_000, async () => {
      const list = await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=always-sick,reason=Unhealthy' });
      return list.items.length === 1 && (list.items[0]!.count ?? 0) >= 3 ? list.items[0] : undefined;
    });
    assert.ok(
      new Date(unhealthy.lastTimestamp!).getTime() > new Date(unhealthy.firstTimestamp!).getTime(),
      `first ${unhealthy.firstTimestamp}, last ${unhealthy.lastTimestamp}`,
    );
  }));

test('liveness httpGet probe: a server that starts failing is restarted, with Unhealthy and Killing events', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('live-http', {
        containers: [
          {
            name: 'main',
            image: BUSYBOX,
            command: ['sh', '-c', 'mkdir -p /www && echo ok > /www/healthz && exec httpd -f -p 8080 -h /www'],
            ports: [{ name: 'http', containerPort: 8080 }],
            livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 2 },
          },
        ],
      }),
    });
    await eventually('pod Ready', 40_000, async () => condition(await readPod(ns, 'live-http'), 'Ready') === 'True');
    // Healthy for a while: no restart.
    await sleepFor(3000);
    assert.equal((await readPod(ns, 'live-http')).status!.containerStatuses![0]!.restartCount, 0);

    kubectl('-n', ns, 'exec', 'live-http', '--', 'rm', '/www/healthz');
    const p = await eventually('the container restarted', 40_000, async () => {
      const x = await readPod(ns, 'live-http');
      const c = x.status?.containerStatuses?.[0];
      return c?.restartCount === 1 && c.state?.running ? x : undefined;
    });
    assert.ok(p.status!.containerStatuses![0]!.lastState?.terminated, 'the killed instance is the last state');
    const evs = await eventually('Unhealthy and Killing events', 20_000, async () => {
      const e = await events(ns, 'live-http');
      return e.some((x) => x.startsWith('Warning Unhealthy')) && e.some((x) => x.includes('Killing')) ? e : undefined;
    });
    assert.ok(evs.includes('Warning Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 404'), evs.join('\n'));
    assert.ok(evs.includes('Normal Killing: Container main failed liveness probe, will be restarted'), evs.join('\n'));
    // The new instance serves again and stays up.
    await sleepFor(4000);
    const after = await readPod(ns, 'live-http');
    assert.equal(after.status!.containerStatuses![0]!.restartCount, 1);
    assert.equal(condition(after, 'Ready'), 'True');
  }));

test('startup probe: not started, and so not Ready, until it succeeds', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('slow-start', {
        containers: [
          {
            name: 'main',
            image: BUSYBOX,
            command: ['sh', '-c', 'sleep 5; touch /tmp/started; sleep 3600'],
            startupProbe: { exec: { command: ['cat', '/tmp/started'] }, periodSeconds: 1, failureThreshold: 60 },
            // Liveness and readiness wait for the start: a liveness probe that fails before it must not kill.
            livenessProbe: { exec: { command: ['cat', '/tmp/started'] }, periodSeconds: 1, failureThreshold: 1 },
          },
        ],
      }),
    });
    const early = await eventually('pod Running', 40_000, async () => {
      const x = await readPod(ns, 'slow-start');
      return x.status?.phase === 'Running' ? x : undefined;
    });
    const c = early.status!.containerStatuses![0]!;
    assert.deepEqual([c.started, c.ready, condition(early, 'Ready')], [false, false, 'False']);
    const ready = await eventually('started and Ready', 40_000, async () => {
      const x = await readPod(ns, 'slow-start');
      return condition(x, 'Ready') === 'True' ? x : undefined;
    });
    const s = ready.status!.containerStatuses![0]!;
    assert.deepEqual([s.started, s.ready, s.restartCount], [true, true, 0]);
    const startedAt = Date.parse(s.state!.running!.startedAt as unknown as string);
    const readyAt = Date.parse(ready.status!.conditions!.find((x) => x.type === 'Ready')!.lastTransitionTime as unknown as string);
    assert.ok(readyAt - startedAt >= 4000, `Ready ${readyAt - startedAt} ms after the start: the startup probe held it`);
  }));

test('tcpSocket readiness probe: Ready once the port accepts connections', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    await core.createNamespacedPod({
      namespace: ns,
      body: podSpec('tcp-ready', {
        containers: [
          {
            name: 'main',
            image: BUSYBOX,
            command: ['sh', '-c', 'sleep 4; mkdir -p /www; exec httpd -f -p 9000 -h /www'],
            readinessProbe: { tcpSocket: { port: 9000 }, periodSeconds: 1 },
          },
        ],
      }),
    });
    const running = await eventually('pod Running', 40_000, async () => {
      const x = await readPod(ns, 'tcp-ready');
      return x.status?.phase === 'Running' ? x : undefined;
    });
    assert.equal(condition(running, 'Ready'), 'False');
    await eventually('pod Ready once the port is open', 30_000, async () => condition(await readPod(ns, 'tcp-ready'), 'Ready') === 'True');
    const evs = await events(ns, 'tcp-ready');
    assert.ok(
      evs.some((e) => /^Warning Unhealthy: Readiness probe failed: dial tcp [\d.]+:9000: connect: connection refused$/.test(e)),
      evs.join('\n'),
    );
  }));
