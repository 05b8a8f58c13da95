import { test, mock, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod, Probe } from 'kubernetes-types/core/v1.js';
import { Prober } from './prober.ts';
import type { Outcome } from './outcome.ts';
import type { ContainerState, PodRuntimeStatus } from '../container/types.ts';
import { probeRegistry } from '../metrics/probes.ts';
import type { Logger } from '../log/log.ts';

const log = { info() {}, error() {}, warn() {}, v() {} } as unknown as Logger;
const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 }));
afterEach(() => mock.timers.reset());

/** A prober whose probes answer from `answers` (per probe type, in order; the last repeats). */
function setup(answers: Record<string, Outcome['result'][]>) {
  const runs: string[] = [];
  const woken: string[] = [];
  const events: string[] = [];
  const prober = new Prober({
    cri: {
      execSync: async () => {
        throw new Error('not used');
      },
    } as never,
    log,
    events: { event: (ref, type, reason, message) => events.push(`${ref.fieldPath} ${type} ${reason}: ${message}`) },
    onChange: (uid) => woken.push(uid),
    random: () => 0.5,
    run: async (p, t) => {
      const type = p === t.container.livenessProbe ? 'Liveness' : p === t.container.readinessProbe ? 'Readiness' : 'Startup';
      runs.push(`${type}@${t.containerId}`);
      const list = answers[type] ?? ['success'];
      const result = list.length > 1 ? list.shift()! : list[0]!;
      return { result, output: result === 'failure' ? 'HTTP probe failed with statuscode: 500' : '' };
    },
  });
  return { prober, runs, woken, events };
}

const probe = (over: Partial<Probe> = {}): Probe => ({ httpGet: { port: 8080 }, periodSeconds: 1, failureThreshold: 2, ...over });
const podWith = (c: Partial<Container>): Pod => ({
  metadata: { uid: 'u1', name: 'web', namespace: 'ns' },
  spec: { containers: [{ name: 'app', image: 'x', ...c }] },
});
const running = (id: string, over: Partial<ContainerState> = {}): PodRuntimeStatus => ({
  uid: 'u1',
  sandboxes: [],
  containers: [
    {
      id,
      sandboxId: 's',
      name: 'app',
      attempt: 0,
      phase: 'running',
      image: 'x',
      imageRef: 'x',
      hash: 'h',
      createdAtNs: '1',
      startedAtNs: `${1_000_000n * 1_000_000n}`,
      ...over,
    },
  ],
});

test('readiness: not ready until the first success, then a change wakes the pod', async () => {
  const { prober, runs, woken } = setup({ Readiness: ['success'] });
  // Long after the kubelet started: no start-up jitter.
  mock.timers.tick(60_000);
  prober.update(podWith({ readinessProbe: probe() }), running('c1', { startedAtNs: `${1_060_000n * 1_000_000n}` }), '10.88.0.5');
  assert.deepEqual(prober.status('c1'), { ready: false });
  assert.deepEqual(woken, [], 'the initial value is not a change');
  mock.timers.tick(0);
  await flush();
  assert.deepEqual(runs, ['Readiness@c1']);
  assert.deepEqual(prober.status('c1'), { ready: true });
  assert.deepEqual(woken, ['u1']);
  mock.timers.tick(1000);
  await flush();
  assert.equal(runs.length, 2, 'probed every periodSeconds');
  assert.deepEqual(woken, ['u1'], 'no change, no wake');
  prober.stop();
});

test('kubelet just started: a worker waits a random part of its period first', async () => {
  const { prober, runs } = setup({});
  prober.update(podWith({ readinessProbe: probe({ periodSeconds: 10 }) }), running('c1'), '10.88.0.5');
  mock.timers.tick(4999);
  await flush();
  assert.deepEqual(runs, []);
  mock.timers.tick(1);
  await flush();
  assert.deepEqual(runs, ['Readiness@c1']);
  prober.stop();
});

test('liveness: failures up to the threshold publish Failure, leave Unhealthy events, wake the pod, and hold', async () => {
  const { prober, runs, woken, events } = setup({ Liveness: ['failure'] });
  mock.timers.tick(60_000);
  prober.update(podWith({ livenessProbe: probe() }), running('c1'), '10.88.0.5');
  assert.deepEqual(prober.health('c1'), { liveness: 'Success' });
  mock.timers.tick(0);
  await flush();
  assert.deepEqual(prober.health('c1'), { liveness: 'Success' }, 'one failure is below failureThreshold 2');
  mock.timers.tick(1000);
  await flush();
  assert.deepEqual(prober.health('c1'), { liveness: 'Failure' });
  assert.deepEqual(woken, ['u1']);
  assert.deepEqual(
    events,
    Array(2).fill('spec.containers{app} Warning Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 500'),
  );
  mock.timers.tick(5000);
  await flush();
  assert.equal(runs.length, 2, 'on hold until a new instance');
  const text = await probeRegistry.metrics();
  assert.match(text, /prober_probe_total\{probe_type="Liveness",result="failed",container="app",pod="web",namespace="ns",pod_uid="u1"\} 2/);
  // The restarted instance is probed afresh, and the old one's results are gone.
  prober.update(podWith({ livenessProbe: probe() }), running('c2', { attempt: 1 }), '10.88.0.5');
  assert.deepEqual(prober.health('c1'), {});
  assert.deepEqual(prober.health('c2'), { liveness: 'Success' });
  mock.timers.tick(0);
  await flush();
  assert.deepEqual(runs.slice(2), ['Liveness@c2']);
  prober.removePod('u1');
  assert.doesNotMatch(await probeRegistry.metrics(), /probe_type="Liveness"/, 'series forgotten with the pod');
});

test('startup gates readiness and liveness; its success probes them at once', async () => {
  const { prober, runs, woken } = setup({ Startup: ['failure', 'success'] });
  mock.timers.tick(60_000);
  const pod = podWith({
    startupProbe: probe({ failureThreshold: 5 }),
    readinessProbe: probe({ periodSeconds: 10 }),
    livenessProbe: probe({ periodSeconds: 10 }),
  });
  prober.update(pod, running('c1'), '10.88.0.5');
  assert.deepEqual(prober.status('c1'), { ready: false, started: false });
  mock.timers.tick(0);
  await flush();
  assert.deepEqual(runs, ['Startup@c1'], 'readiness and liveness wait for the start');
  mock.timers.tick(1000);
  await flush();
  assert.deepEqual(prober.status('c1'), { ready: false, started: true });
  // Readiness and liveness run right away, not a period later.
  mock.timers.tick(0);
  await flush();
  assert.deepEqual(prober.status('c1'), { ready: true, started: true });
  assert.deepEqual(runs.sort(), ['Liveness@c1', 'Readiness@c1', 'Startup@c1', 'Startup@c1']);
  assert.deepEqual(woken, ['u1', 'u1'], 'started, then ready');
  mock.timers.tick(1000);
  await flush();
  assert.equal(runs.filter((r) => r.startsWith('Startup')).length, 2, 'the startup probe stops once started');
  prober.stop();
});

test('initialDelaySeconds counts from the container start', async () => {
  const { prober, runs } = setup({});
  mock.timers.tick(60_000);
  prober.update(
    podWith({ readinessProbe: probe({ initialDelaySeconds: 3 }) }),
    running('c1', { startedAtNs: `${1_060_000n * 1_000_000n}` }),
    '10.88.0.5',
  );
  mock.timers.tick(2999);
  await flush();
  assert.deepEqual(runs, []);
  mock.timers.tick(1);
  await flush();
  assert.deepEqual(runs, ['Readiness@c1']);
  prober.stop();
});

test('a container that stopped is no longer probed, and its results go', async () => {
  const { prober, runs } = setup({});
  mock.timers.tick(60_000);
  const pod = podWith({ readinessProbe: probe() });
  prober.update(pod, running('c1'), '10.88.0.5');
  mock.timers.tick(0);
  await flush();
  prober.update(pod, running('c1', { phase: 'exited', exitCode: 1 }), '10.88.0.5');
  assert.deepEqual(prober.status('c1'), {});
  mock.timers.tick(5000);
  await flush();
  assert.deepEqual(runs, ['Readiness@c1']);
});

test('a pod being deleted: liveness succeeds and stops, readiness goes on', async () => {
  const { prober, runs } = setup({ Liveness: ['failure'] });
  mock.timers.tick(60_000);
  const pod = {
    ...podWith({ livenessProbe: probe({ failureThreshold: 1 }), readinessProbe: probe() }),
    metadata: { uid: 'u1', name: 'web', namespace: 'ns', deletionTimestamp: '2026-01-01T00:00:00Z' },
  };
  prober.update(pod, running('c1'), '10.88.0.5');
  mock.timers.tick(0);
  await flush();
  assert.deepEqual(prober.health('c1'), { liveness: 'Success' });
  for (let i = 0; i < 3; i++) {
    mock.timers.tick(1000);
    await flush();
  }
  assert.deepEqual(
    runs.filter((r) => r.startsWith('Liveness')),
    [],
  );
  assert.ok(runs.filter((r) => r.startsWith('Readiness')).length >= 3);
  prober.stop();
});
