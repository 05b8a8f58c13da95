import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { generatePodStatus, mergeConditions, needsReadinessReconcile, podPhase } from './pod-status.ts';
import type { ContainerState, PodRuntimeStatus } from '../container/types.ts';
import { qosClass } from '../resources/qos.ts';

const pod = (restartPolicy = 'Always'): Pod => ({
  metadata: { uid: 'u', name: 'p', namespace: 'ns' },
  spec: { restartPolicy, containers: [{ name: 'app', image: 'busybox:1.36' }] },
  status: { conditions: [{ type: 'PodScheduled', status: 'True' }] },
});
const ctr = (over: Partial<ContainerState>): ContainerState => ({
  id: 'c1',
  sandboxId: 's',
  name: 'app',
  attempt: 0,
  phase: 'running',
  image: 'busybox:1.36',
  imageRef: 'sha256:abc',
  hash: 'h',
  createdAtNs: '1',
  startedAtNs: '1763812800000000000',
  ...over,
});
const rt = (containers: ContainerState[], ready = true): PodRuntimeStatus => ({
  uid: 'u',
  sandboxes: [{ id: 's', attempt: 0, ready, ip: '10.88.0.7', ips: ['10.88.0.7'], createdAtNs: '1' }],
  containers,
});
const ctx = (over = {}) => ({
  nodeIPs: ['172.30.255.10'],
  now: new Date('2026-11-22T12:00:00Z'),
  waiting: new Map(),
  terminated: false,
  ...over,
});

test("dual-stack: every IP CRI reports, one of each family, the node's primary family first; hostIPs both", () => {
  const dual = rt([ctr({})]);
  dual.sandboxes[0] = { ...dual.sandboxes[0]!, ip: 'fd00:10:244::7', ips: ['fd00:10:244::7', '10.244.0.7'] };
  const v4first = generatePodStatus(pod(), dual, ctx({ nodeIPs: ['172.30.255.10', 'fd00::10'] }));
  assert.deepEqual([v4first.podIP, v4first.podIPs], ['10.244.0.7', [{ ip: '10.244.0.7' }, { ip: 'fd00:10:244::7' }]]);
  assert.deepEqual([v4first.hostIP, v4first.hostIPs], ['172.30.255.10', [{ ip: '172.30.255.10' }, { ip: 'fd00::10' }]]);
  const v6first = generatePodStatus(pod(), dual, ctx({ nodeIPs: ['fd00::10', '172.30.255.10'] }));
  assert.deepEqual(v6first.podIPs, [{ ip: 'fd00:10:244::7' }, { ip: '10.244.0.7' }]);
  const hostNetPod = pod();
  hostNetPod.spec!.hostNetwork = true;
  const hostNet = generatePodStatus(hostNetPod, rt([ctr({})]), ctx({ nodeIPs: ['172.30.255.10', 'fd00::10'] }));
  assert.deepEqual(hostNet.podIPs, [{ ip: '172.30.255.10' }, { ip: 'fd00::10' }], "a host-network pod's IPs are the node's");
});

test('a running pod: phase, IPs, ready conditions, container status', () => {
  const s = generatePodStatus(pod(), rt([ctr({})]), ctx());
  assert.equal(s.phase, 'Running');
  assert.equal(s.podIP, '10.88.0.7');
  assert.deepEqual(s.podIPs, [{ ip: '10.88.0.7' }]);
  assert.equal(s.hostIP, '172.30.255.10');
  assert.equal(s.qosClass, 'BestEffort');
  const c = s.containerStatuses![0]!;
  assert.deepEqual([c.ready, c.started, c.containerID, c.imageID, c.restartCount], [true, true, 'containerd://c1', 'sha256:abc', 0]);
  assert.equal(c.state!.running!.startedAt, '2025-11-22T12:00:00Z');
  const types = s.conditions!.map((x) => `${x.type}=${x.status}`);
  assert.deepEqual(types, [
    'PodReadyToStartContainers=True',
    'Initialized=True',
    'Ready=True',
    'ContainersReady=True',
    'PodScheduled=True',
  ]);
});

test("PodReadyToStartContainersCondition off: no such condition written; one on the apiserver's copy is kept as anyone's", () => {
  const types = (conditions: { type: string; status: string }[] | undefined) => (conditions ?? []).map((x) => `${x.type}=${x.status}`);
  const off = generatePodStatus(pod(), rt([ctr({})]), ctx({ readyToStartContainers: false }));
  assert.deepEqual(types(off.conditions), ['Initialized=True', 'Ready=True', 'ContainersReady=True', 'PodScheduled=True']);
  // Written by a kubelet before the gate went off: the apiserver's object keeps it, nobody updates it.
  const old = { type: 'PodReadyToStartContainers', status: 'False' };
  const merged = mergeConditions([{ type: 'Ready', status: 'True' }], [old, { type: 'Ready', status: 'False' }], false);
  assert.deepEqual(types(merged), ['Ready=True', 'PodReadyToStartContainers=False']);
  const kept = generatePodStatus({ ...pod(), status: { conditions: merged } }, rt([ctr({})]), ctx({ readyToStartContainers: false }));
  assert.deepEqual(types(kept.conditions).slice(-1), ['PodReadyToStartContainers=False']);
  // On (the default), the kubelet's own replaces the apiserver's.
  assert.deepEqual(types(mergeConditions([], [old])), []);
});

test('an instance created and never started (the kubelet killed before StartContainer) is a waiting lastState, not a run', () => {
  const initPod: Pod = { ...pod('Never'), spec: { ...pod('Never').spec!, initContainers: [{ name: 'init', image: 'busybox:1.36' }] } };
  const never = ctr({ id: 'i0', name: 'init', phase: 'created', startedAtNs: undefined });
  const rerun = ctr({ id: 'i1', name: 'init', attempt: 1, phase: 'exited', exitCode: 0, finishedAtNs: '1763812801000000000' });
  const s = generatePodStatus(initPod, rt([rerun, never, ctr({})]), ctx());
  const init = s.initContainerStatuses![0]!;
  assert.deepEqual([init.restartCount, init.lastState, init.state?.terminated?.exitCode], [1, { waiting: {} }, 0]);
  // One that ran before is terminated, as ever.
  const ran = generatePodStatus(initPod, rt([rerun, ctr({ id: 'i0', name: 'init', phase: 'exited', exitCode: 1 }), ctr({})]), ctx());
  assert.equal(ran.initContainerStatuses![0]!.lastState?.terminated?.exitCode, 1);
});

test("a container's image is its instance's, until one from the edited spec exists (upstream's cs.Image)", () => {
  const edited = { ...pod(), spec: { containers: [{ name: 'app', image: 'busybox:1.37' }] } };
  const image = (containers: ContainerState[]) => generatePodStatus(edited, rt(containers), ctx()).containerStatuses![0]!.image;
  assert.equal(image([ctr({})]), 'busybox:1.36');
  assert.equal(image([ctr({ id: 'c2', attempt: 1, image: 'busybox:1.37' }), ctr({ phase: 'exited' })]), 'busybox:1.37');
  assert.equal(image([]), 'busybox:1.37');
});

test('needsReadinessReconcile: only a pod with readiness gates whose Ready condition others left stale (upstream NeedToReconcilePodReadiness)', () => {
  const gated = (ready: string, gate?: string, message?: string): Pod => ({
    ...pod(),
    spec: { ...pod().spec!, readinessGates: [{ conditionType: 'example.com/lb' }] },
    status: {
      phase: 'Running',
      containerStatuses: [{ name: 'app', image: 'busybox:1.36', imageID: '', ready: true, restartCount: 0 }],
      conditions: [
        { type: 'Ready', status: ready, ...(message ? { message } : {}) },
        ...(gate ? [{ type: 'example.com/lb', status: gate }] : []),
      ],
    },
  });
  const missing = 'corresponding condition of pod readiness gate "example.com/lb" does not exist.';
  const rows: [string, Pod, boolean][] = [
    ['no readiness gates', { ...pod(), status: { conditions: [{ type: 'Ready', status: 'False' }] } }, false],
    ['the gate turned True, Ready still False', gated('False', 'True'), true],
    ['the gate and Ready both True', gated('True', 'True'), false],
    ['the gate turned False, Ready still True', gated('True', 'False'), true],
    ['no gate condition yet, Ready False with its message', gated('False', undefined, missing), false],
    ['no gate condition yet, the message differs', gated('False'), true],
    ['no Ready condition yet', { ...gated('True'), status: { phase: 'Pending', conditions: [] } }, false],
  ];
  for (const [name, p, want] of rows) assert.equal(needsReadinessReconcile(p), want, name);
});

test("PodScheduled: True also for a pod bound by spec.nodeName (no scheduler), keeping the scheduler's transition time", () => {
  const bound = { ...pod(), status: {} };
  const s = generatePodStatus(bound, rt([ctr({})]), ctx());
  const c = s.conditions!.find((x) => x.type === 'PodScheduled')!;
  assert.deepEqual([c.status, c.lastTransitionTime], ['True', '2026-11-22T12:00:00Z']);
  const scheduled = {
    ...pod(),
    status: { conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-11-22T11:00:00Z' }] },
  };
  const t = generatePodStatus(scheduled, rt([ctr({})]), ctx());
  assert.equal(t.conditions!.filter((x) => x.type === 'PodScheduled').length, 1);
  assert.equal(t.conditions!.find((x) => x.type === 'PodScheduled')!.lastTransitionTime, '2026-11-22T11:00:00Z');
});

test('an image that cannot be pulled shows its waiting reason and keeps the pod Pending', () => {
  const s = generatePodStatus(
    pod(),
    rt([]),
    ctx({ waiting: new Map([['app', { reason: 'ImagePullBackOff', message: 'Back-off pulling image' }]]) }),
  );
  assert.equal(s.phase, 'Pending');
  assert.deepEqual(s.containerStatuses![0]!.state, { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image' } });
  const ready = s.conditions!.find((c) => c.type === 'Ready')!;
  assert.deepEqual([ready.status, ready.reason, ready.message], ['False', 'ContainersNotReady', 'containers with unready status: [app]']);
});

test('crash loop: waiting with the last termination, counting the restarts that happened (the exited instance is attempt 2)', () => {
  const s = generatePodStatus(
    pod(),
    rt([ctr({ phase: 'exited', exitCode: 1, attempt: 2 })]),
    ctx({ waiting: new Map([['app', { reason: 'CrashLoopBackOff' }]]) }),
  );
  const c = s.containerStatuses![0]!;
  assert.equal(c.restartCount, 2);
  assert.equal(c.state!.waiting!.reason, 'CrashLoopBackOff');
  assert.deepEqual([c.lastState!.terminated!.exitCode, c.lastState!.terminated!.reason], [1, 'Error']);
  assert.equal(s.phase, 'Running');
});

test('phase by restart policy once containers stopped', () => {
  const done = (code: number) => generatePodStatus(pod('Never'), rt([ctr({ phase: 'exited', exitCode: code })]), ctx()).phase;
  assert.equal(done(0), 'Succeeded');
  assert.equal(done(3), 'Failed');
  const killed = generatePodStatus(pod('Always'), rt([ctr({ phase: 'exited', exitCode: 137 })], false), ctx({ terminated: true }));
  assert.equal(killed.phase, 'Failed');
  assert.equal(killed.conditions!.find((c) => c.type === 'Ready')!.reason, 'PodFailed');
  assert.equal(podPhase(pod(), [], false), 'Pending');
});

const withInits = (restartPolicy: string, initContainers: Container[]): Pod => ({
  ...pod(restartPolicy),
  spec: { ...pod(restartPolicy).spec!, initContainers },
});
const inits = [
  { name: 'init1', image: 'busybox:1.36' },
  { name: 'init2', image: 'busybox:1.36' },
];
const condition = (s: { conditions?: { type: string; status: string; reason?: string; message?: string }[] }, type: string) => {
  const c = s.conditions!.find((x) => x.type === type)!;
  return [c.status, c.reason, c.message];
};

test('init containers: Pending and not Initialized while they run; app containers wait PodInitializing', () => {
  const s = generatePodStatus(
    withInits('Always', inits),
    rt([ctr({ id: 'i1', name: 'init1', phase: 'exited', exitCode: 0 }), ctr({ id: 'i2', name: 'init2' })]),
    ctx(),
  );
  assert.equal(s.phase, 'Pending');
  assert.deepEqual(condition(s, 'Initialized'), ['False', 'ContainersNotInitialized', 'containers with incomplete status: [init2]']);
  assert.deepEqual(
    s.initContainerStatuses!.map((c) => [c.name, Object.keys(c.state!)[0], c.ready]),
    [
      ['init1', 'terminated', true],
      ['init2', 'running', false],
    ],
  );
  assert.equal(s.containerStatuses![0]!.state!.waiting!.reason, 'PodInitializing');
});

test('init containers: a failure fails a Never pod, and crash-loops (Pending) otherwise', () => {
  const failed = rt([ctr({ id: 'i1', name: 'init1', phase: 'exited', exitCode: 2 })]);
  assert.equal(generatePodStatus(withInits('Never', inits), failed, ctx()).phase, 'Failed');
  const looping = generatePodStatus(
    withInits('Always', inits),
    failed,
    ctx({ waiting: new Map([['init1', { reason: 'CrashLoopBackOff' }]]) }),
  );
  assert.equal(looping.phase, 'Pending');
  assert.equal(looping.initContainerStatuses![0]!.restartCount, 0, 'failed once, not restarted yet');
});

test('init containers: done, the app runs and the pod is Initialized and Ready', () => {
  const s = generatePodStatus(
    withInits('Always', inits),
    rt([
      ctr({}),
      ctr({ id: 'i2', name: 'init2', phase: 'exited', exitCode: 0 }),
      ctr({ id: 'i1', name: 'init1', phase: 'exited', exitCode: 0 }),
    ]),
    ctx(),
  );
  assert.equal(s.phase, 'Running');
  assert.deepEqual(condition(s, 'Initialized'), ['True', undefined, undefined]);
  assert.deepEqual(condition(s, 'Ready'), ['True', undefined, undefined]);
});

test('sidecar: counts for readiness while running; stopped after the app succeeded it leaves the pod Succeeded', () => {
  const side = [{ name: 'side', image: 'busybox:1.36', restartPolicy: 'Always' }];
  const running = generatePodStatus(withInits('Never', side), rt([ctr({}), ctr({ id: 's1', name: 'side' })]), ctx());
  assert.equal(running.phase, 'Running');
  assert.deepEqual([running.initContainerStatuses![0]!.ready, running.initContainerStatuses![0]!.started], [true, true]);
  const appDone = generatePodStatus(
    withInits('Never', side),
    rt([ctr({ phase: 'exited', exitCode: 0 }), ctr({ id: 's1', name: 'side' })]),
    ctx(),
  );
  assert.equal(appDone.phase, 'Running'); // until the kubelet stops the sidecar
  const allDone = generatePodStatus(
    withInits('Never', side),
    rt([ctr({ phase: 'exited', exitCode: 0 }), ctr({ id: 's1', name: 'side', phase: 'exited', exitCode: 143 })]),
    ctx(),
  );
  assert.equal(allDone.phase, 'Succeeded');
  assert.deepEqual(condition(allDone, 'Initialized'), ['True', 'PodCompleted', undefined]);
});

test('observedGeneration follows metadata.generation', () => {
  const s = generatePodStatus({ ...pod(), metadata: { ...pod().metadata, generation: 3 } }, rt([ctr({})]), ctx());
  // kubernetes-types predates the field
  const gen = (x: object) => (x as { observedGeneration?: number }).observedGeneration;
  assert.equal(gen(s), 3);
  assert.ok(s.conditions!.filter((c) => c.type !== 'PodScheduled').every((c) => gen(c) === 3));
});

test('QoS classes', () => {
  const withRes = (resources: object): Pod => ({ spec: { containers: [{ name: 'a', resources }] } });
  assert.equal(qosClass(withRes({})), 'BestEffort');
  assert.equal(qosClass(withRes({ limits: { cpu: '1', memory: '1Gi' } })), 'Guaranteed');
  assert.equal(qosClass(withRes({ requests: { cpu: '100m' } })), 'Burstable');
  assert.equal(qosClass(withRes({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } })), 'Burstable');
});

// Probes: what the prober says of the running instance c1 decides ready and started.
const probedPod = (probes: Partial<Container>, sidecarProbes?: Partial<Container>): Pod => ({
  ...pod(),
  spec: {
    restartPolicy: 'Always',
    containers: [{ name: 'app', image: 'busybox:1.36', ...probes }],
    ...(sidecarProbes ? { initContainers: [{ name: 'side', image: 'busybox:1.36', restartPolicy: 'Always', ...sidecarProbes }] } : {}),
  },
});
const exec = { exec: { command: ['true'] } };
const probeTable: [string, Partial<Container>, { ready?: boolean; started?: boolean } | undefined, [boolean, boolean]][] = [
  ['no probes: ready and started while running', {}, {}, [true, true]],
  ['readiness without a result yet: not ready', { readinessProbe: exec }, {}, [false, true]],
  ['readiness failed: not ready', { readinessProbe: exec }, { ready: false }, [false, true]],
  ['readiness succeeded: ready', { readinessProbe: exec }, { ready: true }, [true, true]],
  ['startup not run yet: neither started nor ready', { startupProbe: exec }, {}, [false, false]],
  ['startup succeeded, no readiness probe: started and ready', { startupProbe: exec }, { started: true }, [true, true]],
  [
    'startup succeeded, readiness not yet: started, not ready',
    { startupProbe: exec, readinessProbe: exec },
    { started: true },
    [false, true],
  ],
  ['ready is never true before started', { startupProbe: exec, readinessProbe: exec }, { started: false, ready: true }, [false, false]],
  ['a liveness probe alone changes nothing', { livenessProbe: exec }, {}, [true, true]],
];
for (const [name, probes, result, [ready, started]] of probeTable) {
  test(`probes: ${name}`, () => {
    const s = generatePodStatus(probedPod(probes), rt([ctr({})]), ctx({ probes: (id: string) => (id === 'c1' ? (result ?? {}) : {}) }));
    const c = s.containerStatuses![0]!;
    assert.deepEqual([c.ready, c.started], [ready, started]);
    const cond = (t: string) => s.conditions!.find((x) => x.type === t)!.status;
    assert.deepEqual([cond('ContainersReady'), cond('Ready')], ready ? ['True', 'True'] : ['False', 'False']);
    assert.equal(s.phase, 'Running');
  });
}

test('probes: without a prober, a container with probes is ready at once (as before)', () => {
  const s = generatePodStatus(probedPod({ readinessProbe: exec, startupProbe: exec }), rt([ctr({})]), ctx());
  assert.deepEqual([s.containerStatuses![0]!.ready, s.containerStatuses![0]!.started], [true, true]);
});

test('probes: a sidecar follows its probes; not started, it keeps the pod Pending and not Initialized', () => {
  const side = ctr({ id: 'c2', name: 'side' });
  const results: Record<string, { ready?: boolean; started?: boolean }> = { c2: {} };
  const gen = () =>
    generatePodStatus(
      probedPod({}, { startupProbe: exec, readinessProbe: exec }),
      rt([side]),
      ctx({ probes: (id: string) => results[id] ?? {} }),
    );
  let s = gen();
  assert.deepEqual([s.initContainerStatuses![0]!.started, s.initContainerStatuses![0]!.ready], [false, false]);
  assert.equal(s.phase, 'Pending');
  assert.equal(s.conditions!.find((x) => x.type === 'Initialized')!.status, 'False');
  results.c2 = { started: true };
  s = gen();
  assert.deepEqual([s.initContainerStatuses![0]!.started, s.initContainerStatuses![0]!.ready], [true, false]);
  assert.equal(s.conditions!.find((x) => x.type === 'Initialized')!.status, 'True');
  results.c2 = { started: true, ready: true };
  s = gen();
  assert.equal(s.initContainerStatuses![0]!.ready, true);
});

test("readiness gates: Ready waits for each gate's condition; conditions others own are kept from the apiserver", () => {
  const gated: Pod = { ...pod(), spec: { ...pod().spec!, readinessGates: [{ conditionType: 'example.com/lb' }] } };
  const missing = generatePodStatus(gated, rt([ctr({})]), ctx());
  assert.deepEqual(condition(missing, 'Ready'), [
    'False',
    'ReadinessGatesNotReady',
    'corresponding condition of pod readiness gate "example.com/lb" does not exist.',
  ]);
  assert.deepEqual(condition(missing, 'ContainersReady'), ['True', undefined, undefined]);
  const withGate = (status: string) => ({
    ...gated,
    status: {
      conditions: mergeConditions(missing.conditions, [
        { type: 'example.com/lb', status },
        { type: 'Ready', status: 'False' },
      ]),
    },
  });
  assert.deepEqual(condition(generatePodStatus(withGate('False'), rt([ctr({})]), ctx()), 'Ready'), [
    'False',
    'ReadinessGatesNotReady',
    'the status of pod readiness gate "example.com/lb" is not "True", but False',
  ]);
  const open = generatePodStatus(withGate('True'), rt([ctr({})]), ctx());
  assert.deepEqual(condition(open, 'Ready'), ['True', undefined, undefined]);
  assert.equal(open.conditions!.find((c) => c.type === 'example.com/lb')?.status, 'True', 'the gate condition is kept');
});

test('ephemeral containers get statuses of their own and do not change phase or readiness', () => {
  const p = pod();
  p.spec!.ephemeralContainers = [
    { name: 'debugger', image: 'busybox:1.36' },
    { name: 'pending', image: 'busybox:1.36' },
  ];
  const s = generatePodStatus(p, rt([ctr({}), ctr({ id: 'e1', name: 'debugger', phase: 'exited', exitCode: 1 })]), ctx());
  assert.equal(s.phase, 'Running');
  assert.equal(s.conditions!.find((c) => c.type === 'Ready')!.status, 'True');
  assert.deepEqual(
    s.ephemeralContainerStatuses!.map((c) => [c.name, c.state?.terminated?.exitCode ?? c.state?.waiting?.reason]),
    [
      ['debugger', 1],
      ['pending', 'ContainerCreating'],
    ],
  );
  assert.equal(generatePodStatus(pod(), rt([ctr({})]), ctx()).ephemeralContainerStatuses, undefined);
});

test('in-place resize: allocatedResources, resources of a running container, and the resize conditions', () => {
  const sized: Pod = {
    ...pod(),
    metadata: { ...pod().metadata, generation: 3 },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'busybox:1.36',
          resources: { requests: { cpu: '200m', memory: '64Mi', 'ephemeral-storage': '1' }, limits: { cpu: '300m' } },
        },
      ],
    },
  };
  const allocated = { app: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '300m' } } };
  const s = generatePodStatus(
    sized,
    {
      ...rt([ctr({})]),
      resize: {
        allocated,
        actual: { c1: { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '300m' } } },
        pending: { reason: 'Deferred', message: 'no room', generation: 3 },
        inProgress: { generation: 2 },
      },
    },
    ctx(),
  );
  const c = s.containerStatuses![0]!;
  // ephemeral-storage (not resizable) as the spec has it, in both (upstream's whole allocated ResourceRequirements).
  assert.deepEqual(c.allocatedResources, { 'ephemeral-storage': '1', cpu: '100m', memory: '64Mi' });
  assert.deepEqual(c.resources, { requests: { 'ephemeral-storage': '1', cpu: '50m', memory: '64Mi' }, limits: { cpu: '300m' } });
  assert.deepEqual(
    s
      .conditions!.filter((x) => x.type.startsWith('PodResize'))
      .map((x) => [x.type, x.status, x.reason, (x as { observedGeneration?: number }).observedGeneration]),
    [
      ['PodResizePending', 'True', 'Deferred', 3],
      ['PodResizeInProgress', 'True', undefined, 2],
    ],
  );
  // Done: the conditions go, even those the apiserver still shows.
  const done = generatePodStatus(
    { ...sized, status: { conditions: s.conditions } },
    { ...rt([ctr({})]), resize: { allocated, actual: {} } },
    ctx(),
  );
  assert.equal(
    done.conditions!.some((x) => x.type.startsWith('PodResize')),
    false,
  );
  assert.deepEqual(done.containerStatuses![0]!.resources, {
    ...allocated.app,
    requests: { 'ephemeral-storage': '1', ...allocated.app.requests },
  });
  assert.deepEqual(mergeConditions([], [{ type: 'PodResizePending', status: 'True' }]), [], 'the kubelet owns them');
});

test('in-place resize: without the sync, the spec is the allocation and the runtime says what runs; a stopped container shows its allocation, one not created neither', () => {
  const sized: Pod = {
    ...pod(),
    spec: { containers: [{ name: 'app', image: 'busybox:1.36', resources: { requests: { cpu: '20m' }, limits: { cpu: '30m' } } }] },
  };
  const running = generatePodStatus(
    sized,
    rt([ctr({ linux: { cpuShares: 20, cpuPeriod: 100000, cpuQuota: 3000, memoryLimitInBytes: 0 } })]),
    ctx(),
  ).containerStatuses![0]!;
  assert.deepEqual([running.allocatedResources, running.resources], [{ cpu: '20m' }, { requests: { cpu: '20m' }, limits: { cpu: '30m' } }]);
  const stopped = generatePodStatus(sized, rt([ctr({ phase: 'exited', exitCode: 0 })]), ctx()).containerStatuses![0]!;
  assert.deepEqual([stopped.allocatedResources, stopped.resources], [{ cpu: '20m' }, { requests: { cpu: '20m' }, limits: { cpu: '30m' } }]);
  const creating = generatePodStatus(sized, rt([]), ctx()).containerStatuses![0]!;
  assert.deepEqual([creating.allocatedResources, creating.resources], [undefined, undefined]);
  const bare = generatePodStatus(pod(), rt([ctr({ phase: 'exited', exitCode: 1 })]), ctx()).containerStatuses![0]!;
  assert.deepEqual(bare.resources, {}, 'a container without resources: an empty one, as upstream');
});

test("volumeMounts of every container, read-only ones with their recursive mode, kept once the runtime has it (upstream's convertToAPIContainerStatuses)", () => {
  const p = pod();
  p.spec!.containers[0]!.volumeMounts = [
    { name: 'data', mountPath: '/data' },
    { name: 'conf', mountPath: '/conf', readOnly: true },
  ];
  const s = generatePodStatus(p, rt([ctr({})]), ctx());
  assert.deepEqual(s.containerStatuses![0]!.volumeMounts, [
    { name: 'data', mountPath: '/data' },
    { name: 'conf', mountPath: '/conf', readOnly: true, recursiveReadOnly: 'Disabled' },
  ]);
  assert.deepEqual(
    generatePodStatus(p, rt([]), ctx()).containerStatuses![0]!.volumeMounts,
    s.containerStatuses![0]!.volumeMounts,
    "the spec's before the runtime has it (a pull backing off, an init container failing)",
  );
  p.spec!.containers[0]!.volumeMounts[1]!.recursiveReadOnly = 'Enabled';
  const rro = generatePodStatus(p, rt([ctr({})]), ctx({ recursiveReadOnlyMounts: true }));
  assert.equal(rro.containerStatuses![0]!.volumeMounts![1]!.recursiveReadOnly, 'Enabled', 'the runtime handler makes RRO mounts');
  const final = generatePodStatus({ ...p, status: rro }, rt([ctr({ phase: 'exited', exitCode: 0 })]), ctx());
  assert.equal(final.containerStatuses![0]!.volumeMounts![1]!.recursiveReadOnly, 'Enabled', 'kept as first written');
});

test('user: the IDs the runtime reports for the newest instance (upstream convertContainerStatus), none when it reports none', () => {
  const user = { uid: 1000, gid: 1000, supplementalGroups: [1000, 50000, 60000] };
  // Not in kubernetes-types yet (ContainerStatus.user, 1.31).
  const userOf = (c: ContainerState) => (generatePodStatus(pod(), rt([c]), ctx()).containerStatuses![0] as { user?: unknown }).user;
  assert.deepEqual(userOf(ctr({ user })), { linux: user });
  assert.equal(userOf(ctr({})), undefined);
});

test('pod-level resources: allocatedResources as allocated, resources from the pod cgroup once Running', () => {
  const p: Pod = {
    ...pod(),
    spec: {
      ...pod().spec!,
      resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } },
    } as Pod['spec'],
  };
  const allocatedPod = { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '100m', memory: '128Mi' } };
  const resize = {
    allocated: { app: {} },
    allocatedPod,
    actual: {},
    podCgroup: { cpuShares: 102, cpuQuotaUs: 20000, memoryLimitBytes: 128 * 2 ** 20 },
  };
  type WithPodLevel = { resources?: unknown; allocatedResources?: unknown };
  // Pending: the allocation; the spec's pending resize does not show.
  const pending = generatePodStatus(p, { ...rt([ctr({})]), resize }, ctx()) as WithPodLevel;
  assert.deepEqual(pending.allocatedResources, { cpu: '50m', memory: '64Mi' });
  assert.deepEqual(pending.resources, allocatedPod);
  // Running: what the pod cgroup enforces (a resize not yet applied).
  const running = generatePodStatus(
    { ...p, status: { ...p.status, phase: 'Running' } },
    { ...rt([ctr({})]), resize },
    ctx(),
  ) as WithPodLevel;
  assert.deepEqual(running.resources, { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } });
  // A pod without pod-level resources shows its containers' aggregate.
  const plain = generatePodStatus(pod(), rt([ctr({})]), ctx()) as WithPodLevel;
  assert.deepEqual([plain.allocatedResources, plain.resources], [undefined, {}]);
});

test('phase with container restart policies and rules (upstream getPhase with ContainerRestartRules)', () => {
  const rules = [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }];
  const phase = (podPolicy: string, c: object, exitCode: number, waiting = false) => {
    const p = { ...pod(podPolicy), spec: { restartPolicy: podPolicy, containers: [{ name: 'app', image: 'busybox:1.36', ...c }] } };
    const w = waiting ? new Map([['app', { reason: 'CrashLoopBackOff' }]]) : new Map();
    return generatePodStatus(p, rt([ctr({ phase: 'exited', exitCode })]), ctx({ waiting: w })).phase;
  };
  assert.equal(phase('Never', { restartPolicy: 'Never', restartPolicyRules: rules }, 42), 'Running', 'a matching rule restarts it');
  assert.equal(phase('Never', { restartPolicy: 'Never', restartPolicyRules: rules }, 42, true), 'Running', 'also while it backs off');
  assert.equal(phase('Never', { restartPolicy: 'Never', restartPolicyRules: rules }, 1), 'Failed');
  assert.equal(phase('Always', { restartPolicy: 'Never' }, 1), 'Failed', "the container's Never wins");
  assert.equal(phase('Always', { restartPolicy: 'Never' }, 0), 'Succeeded');
  assert.equal(phase('Never', { restartPolicy: 'Always' }, 0), 'Running', "the container's Always wins");
  assert.equal(phase('Never', { restartPolicy: 'OnFailure' }, 3), 'Running');
  assert.equal(phase('Always', { restartPolicy: 'OnFailure' }, 0), 'Succeeded');
  // A failed init container: the pod fails unless it will run again.
  const initPod = (c: object) => withInits('Always', [{ name: 'init1', image: 'busybox:1.36', ...c }]);
  const failed = rt([ctr({ id: 'i1', name: 'init1', phase: 'exited', exitCode: 42 })]);
  assert.equal(generatePodStatus(initPod({ restartPolicy: 'Never' }), failed, ctx()).phase, 'Failed');
  assert.equal(generatePodStatus(initPod({ restartPolicy: 'Never', restartPolicyRules: rules }), failed, ctx()).phase, 'Pending');
  assert.equal(
    generatePodStatus(withInits('Never', [{ name: 'init1', image: 'busybox:1.36', restartPolicy: 'OnFailure' }]), failed, ctx()).phase,
    'Pending',
  );
});

test('AllContainersRestarting: only on a pod with a RestartAllContainers rule; kubelet-owned', () => {
  const rules = [{ action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [42] } }];
  const p = {
    ...pod('Never'),
    spec: {
      restartPolicy: 'Never',
      containers: [{ name: 'app', image: 'busybox:1.36', restartPolicy: 'Never', restartPolicyRules: rules }],
    },
  };
  assert.equal(
    generatePodStatus(pod('Never'), rt([ctr({})]), ctx()).conditions!.find((c) => c.type === 'AllContainersRestarting'),
    undefined,
  );
  assert.deepEqual(condition(generatePodStatus(p, rt([ctr({})]), ctx()), 'AllContainersRestarting'), ['False', undefined, undefined]);
  const s = generatePodStatus(p, rt([ctr({ phase: 'exited', exitCode: 42 })]), ctx());
  assert.deepEqual(condition(s, 'AllContainersRestarting'), [
    'True',
    'RestartAllContainersStarted',
    'container exited with restart policy rule',
  ]);
  assert.equal(s.phase, 'Running');
  assert.deepEqual(condition(generatePodStatus(p, rt([ctr({ phase: 'exited', exitCode: 1 })]), ctx()), 'AllContainersRestarting'), [
    'False',
    'PodFailed',
    undefined,
  ]);
  assert.deepEqual(mergeConditions([], [{ type: 'AllContainersRestarting', status: 'True' }]), [], 'the kubelet owns it');
});

test("a container that never started (StartError): startedAt is the epoch, as upstream's time.Unix(0, 0)", () => {
  const failed = ctr({ phase: 'exited', startedAtNs: undefined, finishedAtNs: '1763812800000000000', exitCode: 128, reason: 'StartError' });
  const t = generatePodStatus(pod(), rt([failed]), ctx()).containerStatuses![0]!.state!.terminated!;
  assert.deepEqual([t.reason, t.startedAt, t.finishedAt], ['StartError', '1970-01-01T00:00:00Z', '2025-11-22T12:00:00Z']);
});

test("container statuses sorted by name, as upstream's SortedContainerStatuses; init containers in the spec's order", () => {
  const p: Pod = {
    ...pod(),
    spec: {
      initContainers: [
        { name: 'z-init', image: 'busybox:1.36' },
        { name: 'a-init', image: 'busybox:1.36' },
      ],
      containers: [
        { name: 'poststart', image: 'busybox:1.36' },
        { name: 'httphook', image: 'busybox:1.36' },
      ],
    },
  };
  const s = generatePodStatus(p, rt([]), ctx());
  assert.deepEqual(
    s.containerStatuses!.map((c) => c.name),
    ['httphook', 'poststart'],
  );
  assert.deepEqual(
    s.initContainerStatuses!.map((c) => c.name),
    ['z-init', 'a-init'],
  );
});
