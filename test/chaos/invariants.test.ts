import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type ContainerView,
  type PodView,
  apiErrorLine,
  divergence,
  leaks,
  restartFindings,
  unsettled,
  slopePerHour,
  table,
} from './invariants.ts';

const c = (over: Partial<ContainerView> = {}): ContainerView => ({
  name: 'main',
  id: 'aaa',
  running: true,
  restartCount: 0,
  lastTerminated: false,
  lastStarted: false,
  lastNeverStarted: false,
  ...over,
});
const pod = (over: Partial<PodView> = {}, ...containers: ContainerView[]): PodView => ({
  uid: 'u1',
  runtimeUid: 'u1',
  name: 'p',
  kind: 'crashloop',
  deleting: false,
  phase: 'Running',
  ready: true,
  containersReady: true,
  containers: containers.length ? containers : [c()],
  ...over,
});
const rc = (id = 'aaa', podUid = 'u1', running = true) => ({ id, podUid, name: 'main', running });

test('divergence: what the statuses and the runtime disagree on', () => {
  const cases: { name: string; pods: PodView[]; runtime: ReturnType<typeof rc>[]; want: RegExp[] }[] = [
    { name: 'agree', pods: [pod()], runtime: [rc()], want: [] },
    {
      name: 'an exited container the status shows exited',
      pods: [pod({}, c({ running: false }))],
      runtime: [rc('aaa', 'u1', false)],
      want: [],
    },
    {
      name: 'runs, status shows another id',
      pods: [pod({}, c({ id: 'bbb' }))],
      runtime: [rc()],
      want: [/runs as aaa/, /shows bbb running, the runtime does not/],
    },
    {
      name: 'runs, status waiting',
      pods: [pod({}, c({ running: false, id: undefined }))],
      runtime: [rc()],
      want: [/status does not show it running/],
    },
    { name: 'status running, runtime exited', pods: [pod()], runtime: [rc('aaa', 'u1', false)], want: [/the runtime does not run it/] },
    { name: 'orphan of a deleted pod', pods: [], runtime: [rc('aaa', 'gone')], want: [/pod uid gone, which the apiserver does not have/] },
    { name: 'a pod being deleted may still run', pods: [pod({ deleting: true }, c({ running: false }))], runtime: [rc()], want: [] },
    {
      name: 'a mirror pod matched by its static pod uid',
      pods: [pod({ uid: 'mirror', runtimeUid: 'static' })],
      runtime: [rc('aaa', 'static')],
      want: [],
    },
  ];
  for (const k of cases) {
    const got = divergence(k.pods, k.runtime);
    assert.equal(got.length, k.want.length, `${k.name}: ${got}`);
    for (const [i, re] of k.want.entries()) assert.match(got[i]!, re, k.name);
  }
});

test('restartFindings: restarts without a reason, counts going down, healthy containers restarted', () => {
  const cases: { name: string; before: PodView[]; now: PodView[]; want: RegExp[] }[] = [
    { name: 'nothing changed', before: [pod()], now: [pod()], want: [] },
    {
      name: 'a crash loop restart with its reason',
      before: [pod()],
      now: [pod({}, c({ id: 'bbb', restartCount: 1, lastTerminated: true }))],
      want: [],
    },
    {
      name: 'a restart with no reason',
      before: [pod()],
      now: [pod({}, c({ id: 'bbb', restartCount: 1 }))],
      want: [/no lastState.terminated/],
    },
    {
      name: 'count went down',
      before: [pod({}, c({ restartCount: 3, lastTerminated: true }))],
      now: [pod({}, c({ restartCount: 1, lastTerminated: true }))],
      want: [/went down from 3 to 1/],
    },
    {
      name: 'a steady container restarted',
      before: [pod({ kind: 'steady' })],
      now: [pod({ kind: 'steady' }, c({ id: 'bbb', restartCount: 1, lastTerminated: true, lastStarted: true }))],
      want: [/restarted 1x after it had run, and nothing in it asks for a restart/],
    },
    {
      name: 'an init container that failed by itself (exit 1 on a full disk) is restarted',
      before: [pod({ kind: 'init' }, c({ running: false }))],
      now: [pod({ kind: 'init' }, c({ id: 'bbb', restartCount: 1, lastTerminated: true, lastStarted: true, lastExitCode: 1 }))],
      want: [],
    },
    {
      name: 'a steady container killed (137) and restarted',
      before: [pod({ kind: 'steady' })],
      now: [pod({ kind: 'steady' }, c({ id: 'bbb', restartCount: 1, lastTerminated: true, lastStarted: true, lastExitCode: 137 }))],
      want: [/restarted 1x after it had run/],
    },
    {
      name: 'a container that was created but never started is started anew',
      before: [pod({ kind: 'once' }, c({ running: false, id: 'aaa' }))],
      now: [pod({ kind: 'once' }, c({ id: 'bbb', restartCount: 1, lastNeverStarted: true }))],
      want: [],
    },
    { name: 'replaced with no restart counted', before: [pod()], now: [pod({}, c({ id: 'bbb' }))], want: [/replaced \(aaa -> bbb\)/] },
    { name: 'a new pod is judged on its own', before: [], now: [pod({ kind: 'steady' }, c({ restartCount: 0 }))], want: [] },
  ];
  for (const k of cases) {
    const got = restartFindings(k.before, k.now);
    assert.equal(got.length, k.want.length, `${k.name}: ${got}`);
    for (const [i, re] of k.want.entries()) assert.match(got[i]!, re, k.name);
  }
});

test('unsettled: pods of kinds that run for good that are not running, and pods marked not ready by someone else', () => {
  const got = unsettled([
    pod({ kind: 'steady' }),
    pod({ kind: 'steady', name: 'pending', phase: 'Pending' }, c({ running: false })),
    pod({ kind: 'steady', name: 'going', deleting: true, phase: 'Pending' }),
    pod({ kind: 'crashloop', name: 'looping' }, c({ running: false })),
    pod({ kind: 'once', name: 'done', phase: 'Succeeded' }, c({ running: false })),
    pod({ kind: 'volumes', name: 'evicted', phase: 'Failed', reason: 'Evicted' }, c({ running: false })),
    pod({ kind: 'volumes', name: 'failed', phase: 'Failed' }, c({ running: false })),
    pod({ kind: 'steady', name: 'marked', ready: false }),
    pod({ kind: 'failing-probe', name: 'unready', ready: false, containersReady: false }),
  ]);
  assert.deepEqual(got, ['pending: Pending, not running', 'failed: Failed, not running', 'marked: Ready=False while ContainersReady=True']);
});

test('leaks: only what the end has beyond the start', () => {
  assert.deepEqual(leaks({ netns: ['a'], ips: ['10.0.0.2'] }, { netns: ['a', 'b'], ips: [], mounts: ['/m'] }), {
    netns: ['b'],
    ips: [],
    mounts: ['/m'],
  });
});

test('slopePerHour: over the samples of settled processes, across restarts', () => {
  const s = (min: number, value: number, pid = 1) => ({ t: min * 60_000, value, pid });
  assert.equal(slopePerHour([s(0, 1), s(1, 2), s(2, 3)], 2 * 60_000), undefined, 'only one settled sample');
  // 1 MB a minute is 60 an hour; the restarted process's first minute is left out.
  const got = slopePerHour([s(0, 100), s(1, 101), s(2, 102), s(3, 103), s(4, 50, 2), s(5, 105, 2), s(6, 106, 2)], 60_000);
  assert.equal(Math.round(got!.perHour), 60);
  assert.equal(got!.spanMs, 5 * 60_000);
  assert.equal(slopePerHour([s(0, 5), s(1, 5), s(2, 5), s(3, 5)], 0)!.perHour, 0);
});

test('table: aligned columns', () => {
  assert.equal(
    table([
      ['leaks', 'ok', '0'],
      ['restarts', 'FAIL', 'x'],
    ]),
    'invariant  result  detail\nleaks      ok      0\nrestarts   FAIL    x',
  );
});

test("apiErrorLine: client-node's multi-line error as the code and the apiserver's message", () => {
  const e = new Error(
    'HTTP-Code: 504\nMessage: Unknown API Status Code!\nBody: "{\\"kind\\":\\"Status\\",\\"message\\":\\"Timeout: request did not complete within requested timeout - context deadline exceeded\\",\\"code\\":504}\\n"\nHeaders: {"audit-id":"x"}',
  );
  assert.equal(apiErrorLine(e), '504 Timeout: request did not complete within requested timeout - context deadline exceeded');
  assert.equal(apiErrorLine(new Error('connect ECONNREFUSED 172.30.255.10:6443\nmore')), 'connect ECONNREFUSED 172.30.255.10:6443');
});
