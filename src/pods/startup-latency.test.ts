import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { StartupLatencyTracker, initContainersTime, pullingTime, type StartupObservation } from './startup-latency.ts';

const T0 = Date.parse('2026-11-22T10:00:00Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();
const pending = (uid: string, over: Partial<Pod['spec']> = {}): Pod => ({
  metadata: { uid, name: uid, namespace: 'ns', creationTimestamp: iso(0) },
  spec: { containers: [{ name: 'c' }], ...over },
  status: { phase: 'Pending' },
});
const running = (p: Pod, extra: Pod['status'] = {}): Pod => ({
  ...p,
  status: {
    phase: 'Running',
    startTime: iso(100),
    containerStatuses: [
      { name: 'c', ready: true, restartCount: 0, image: 'i', imageID: 'i', state: { running: { startedAt: iso(2000) } } },
    ],
    ...extra,
  },
});

function tracker() {
  let now = T0;
  const seen: StartupObservation[] = [];
  const t = new StartupLatencyTracker(
    (o) => seen.push(o),
    () => now,
  );
  return {
    t,
    seen,
    at: (ms: number) => {
      now = T0 + ms;
    },
  };
}

test('startup latency: total from creation to the watch showing all containers running, SLI without pulls; once per pod', () => {
  const { t, seen, at } = tracker();
  const p = pending('a');
  at(50);
  t.observedOnWatch(p);
  at(200);
  t.pullStarted('a');
  at(1200);
  t.pullFinished('a');
  at(2500);
  t.observedOnWatch(running(p));
  at(9000);
  t.observedOnWatch(running(p));
  assert.equal(seen.length, 1);
  assert.deepEqual(
    { total: seen[0]!.totalSeconds, sli: seen[0]!.sliSeconds, first: seen[0]!.firstNetworkPod },
    { total: 2.5, sli: 1.5, first: true },
  );
});

test('startup latency: pods seen already started, unschedulable for a while, or ended are not reported', () => {
  const { t, seen, at } = tracker();
  at(3000);
  t.observedOnWatch(running(pending('old'))); // first seen with a startTime: a kubelet restart
  t.observedOnWatch(running(pending('old')));
  const u = {
    ...pending('u'),
    status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
  };
  t.observedOnWatch(pending('u'));
  t.observedOnWatch(u);
  t.observedOnWatch(running(pending('u')));
  t.observedOnWatch(pending('f'));
  t.observedOnWatch({ ...pending('f'), status: { phase: 'Failed' } });
  t.observedOnWatch(running(pending('f')));
  assert.deepEqual(seen, []);
});

test('startup latency: a stateful pod counts in total only; the first network pod is the first non-hostNetwork one', () => {
  const { t, seen, at } = tracker();
  const host = pending('h', { hostNetwork: true });
  const pvc = pending('s', { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'x' } }] });
  const net = pending('n', { volumes: [{ name: 'cfg', configMap: { name: 'x' } }] });
  for (const p of [host, pvc, net]) t.observedOnWatch(p);
  at(3000);
  for (const p of [host, pvc, net]) t.observedOnWatch(running(p));
  assert.deepEqual(
    seen.map((o) => [o.pod.metadata!.uid, o.sliSeconds, o.firstNetworkPod]),
    [
      ['h', 3, false],
      ['s', undefined, false],
      ['n', 3, true],
    ],
  );
});

test('pullingTime: overlapping pulls count once', () => {
  assert.equal(pullingTime([]), 0);
  assert.equal(
    pullingTime([
      [0, 100],
      [50, 150],
      [120, 130],
      [200, 260],
    ]),
    210,
  );
});

test('initContainersTime: finished run-to-completion init containers, not sidecars', () => {
  const pod: Pod = {
    spec: { initContainers: [{ name: 'i1' }, { name: 'side', restartPolicy: 'Always' }], containers: [{ name: 'c' }] },
    status: {
      initContainerStatuses: [
        {
          name: 'i1',
          ready: false,
          restartCount: 0,
          image: '',
          imageID: '',
          state: { terminated: { exitCode: 0, startedAt: iso(1000), finishedAt: iso(4000) } },
        },
        {
          name: 'side',
          ready: true,
          restartCount: 0,
          image: '',
          imageID: '',
          state: { terminated: { exitCode: 0, startedAt: iso(0), finishedAt: iso(9000) } },
        },
      ],
    },
  };
  assert.equal(initContainersTime(pod), 3000);
});
