import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { computePodActions, type PodActions, type ProbeHealth } from './actions.ts';
import { containerHash } from './hash.ts';
import type { ContainerState, PodRuntimeStatus, SandboxState } from '../container/types.ts';

const app = { name: 'app', image: 'busybox:1.36' };
const side = { name: 'side', image: 'busybox:1.36' };
const pod = (restartPolicy = 'Always', containers = [app]): Pod => ({ metadata: { uid: 'u' }, spec: { restartPolicy, containers } });
const sb = (over: Partial<SandboxState> = {}): SandboxState => ({
  id: 's1',
  attempt: 0,
  ready: true,
  ip: '10.88.0.5',
  createdAtNs: '1',
  ...over,
});
const ctr = (over: Partial<ContainerState> = {}): ContainerState => ({
  id: 'c1',
  sandboxId: 's1',
  name: 'app',
  attempt: 0,
  phase: 'running',
  image: 'busybox:1.36',
  imageRef: 'sha256:x',
  hash: containerHash(app),
  createdAtNs: '1',
  ...over,
});
const status = (sandboxes: SandboxState[], containers: ContainerState[] = []): PodRuntimeStatus => ({ uid: 'u', sandboxes, containers });
const none = {
  killPod: false,
  createSandbox: false,
  sandboxId: 's1',
  sandboxAttempt: 0,
  initContainersToStart: [],
  containersToStart: [],
  ephemeralContainersToStart: [],
  containersToKill: [],
  containersToUpdate: [],
};

const cases: [string, Pod, PodRuntimeStatus, Partial<PodActions>][] = [
  [
    'new pod: sandbox and every container',
    pod('Always', [app, side]),
    status([]),
    {
      createSandbox: true,
      sandboxId: undefined,
      containersToStart: [
        { name: 'app', reason: 'not started yet' },
        { name: 'side', reason: 'not started yet' },
      ],
    },
  ],
  ['everything running: nothing to do', pod(), status([sb()], [ctr()]), {}],
  [
    'dead sandbox: kill and recreate with the next attempt',
    pod(),
    status([sb({ ready: false, attempt: 2 })], [ctr()]),
    {
      killPod: true,
      createSandbox: true,
      sandboxId: undefined,
      sandboxAttempt: 3,
      containersToStart: [{ name: 'app', reason: 'pod sandbox changed' }],
    },
  ],
  [
    'the next attempt is above every existing one (their names stay reserved)',
    pod(),
    status([sb({ ready: false, attempt: 2 }), sb({ id: 's0', ready: false, attempt: 5 })], [ctr()]),
    {
      killPod: true,
      createSandbox: true,
      sandboxId: undefined,
      sandboxAttempt: 6,
      containersToStart: [{ name: 'app', reason: 'pod sandbox changed' }],
    },
  ],
  [
    'sandbox without IP is not usable',
    pod(),
    status([sb({ ip: undefined })], [ctr()]),
    {
      killPod: true,
      createSandbox: true,
      sandboxId: undefined,
      sandboxAttempt: 1,
      containersToStart: [{ name: 'app', reason: 'pod sandbox changed' }],
    },
  ],
  [
    'finished Never pod with dead sandbox stays finished',
    pod('Never'),
    status([sb({ ready: false })], [ctr({ phase: 'exited', exitCode: 1 })]),
    {},
  ],
  [
    'Always restarts an exited container',
    pod('Always'),
    status([sb()], [ctr({ phase: 'exited', exitCode: 0 })]),
    { containersToStart: [{ name: 'app', reason: 'restart' }] },
  ],
  [
    'OnFailure restarts a failure',
    pod('OnFailure'),
    status([sb()], [ctr({ phase: 'exited', exitCode: 2 })]),
    { containersToStart: [{ name: 'app', reason: 'restart' }] },
  ],
  [
    'OnFailure leaves a success alone (and stops the sandbox)',
    pod('OnFailure'),
    status([sb()], [ctr({ phase: 'exited', exitCode: 0 })]),
    { killPod: true },
  ],
  [
    'Never leaves a failure alone (and stops the sandbox)',
    pod('Never'),
    status([sb()], [ctr({ phase: 'exited', exitCode: 1 })]),
    { killPod: true },
  ],
  [
    'a created, never started container gets a new instance',
    pod(),
    status([sb()], [ctr({ phase: 'created' })]),
    { containersToStart: [{ name: 'app', reason: 'never started' }] },
  ],
  [
    'changed spec: kill and start again',
    pod(),
    status([sb()], [ctr({ hash: 'old' })]),
    {
      containersToKill: [{ id: 'c1', name: 'app', reason: 'Container spec hash changed' }],
      containersToStart: [{ name: 'app', reason: 'spec changed' }],
    },
  ],
  [
    'an ephemeral container added to a running pod starts once',
    { ...pod(), spec: { ...pod().spec!, containers: [app], ephemeralContainers: [{ name: 'debugger', image: 'busybox' }] } },
    status([sb()], [ctr()]),
    { ephemeralContainersToStart: [{ name: 'debugger', reason: 'not started yet' }] },
  ],
  [
    'an ephemeral container that exited is not started again, one that runs is not killed',
    {
      ...pod(),
      spec: {
        ...pod().spec!,
        containers: [app],
        ephemeralContainers: [
          { name: 'dbg1', image: 'busybox' },
          { name: 'dbg2', image: 'busybox' },
        ],
      },
    },
    status([sb()], [ctr(), ctr({ id: 'e1', name: 'dbg1', phase: 'exited', exitCode: 0 }), ctr({ id: 'e2', name: 'dbg2' })]),
    {},
  ],
  [
    'a running container not in the spec is killed',
    pod(),
    status([sb()], [ctr(), ctr({ id: 'c9', name: 'gone' })]),
    { containersToKill: [{ id: 'c9', name: 'gone', reason: 'Container is not in the pod spec' }] },
  ],
  [
    'only the newest instance counts',
    pod('Never'),
    status([sb()], [ctr({ id: 'c2', attempt: 1, phase: 'exited', exitCode: 0 }), ctr({ phase: 'exited', exitCode: 1 })]),
    { killPod: true },
  ],
  [
    'finished Never pod whose sandbox died gets no new sandbox',
    pod('Never'),
    status([sb({ ready: false })], [ctr({ phase: 'exited', exitCode: 0 })]),
    {},
  ],
];

// Init containers: two regular ones, or a sidecar then a regular one.
const init1 = { name: 'init1', image: 'busybox:1.36' };
const init2 = { name: 'init2', image: 'busybox:1.36' };
const sidecar = { name: 'sidecar', image: 'busybox:1.36', restartPolicy: 'Always' };
const withInits = (restartPolicy: string, initContainers: Container[]): Pod => ({
  metadata: { uid: 'u' },
  spec: { restartPolicy, initContainers, containers: [app] },
});
const init = (name: string, over: Partial<ContainerState> = {}) =>
  ctr({
    id: `c-${name}`,
    name,
    hash: containerHash({ name, image: 'busybox:1.36', ...(name === 'sidecar' ? { restartPolicy: 'Always' } : {}) }),
    ...over,
  });
const done = (name: string) => init(name, { phase: 'exited', exitCode: 0 });
cases.push(
  [
    'init: a new pod starts its first init container only',
    withInits('Always', [init1, init2]),
    status([]),
    { createSandbox: true, sandboxId: undefined, initContainersToStart: [{ name: 'init1', reason: 'not started yet' }] },
  ],
  ['init: a running init container is waited for', withInits('Always', [init1, init2]), status([sb()], [init('init1')]), {}],
  [
    'init: the next one starts after a success',
    withInits('Always', [init1, init2]),
    status([sb()], [done('init1')]),
    { initContainersToStart: [{ name: 'init2', reason: 'not started yet' }] },
  ],
  [
    'init: app containers start once the last one succeeded',
    withInits('Always', [init1, init2]),
    status([sb()], [done('init2'), done('init1')]),
    { containersToStart: [{ name: 'app', reason: 'not started yet' }] },
  ],
  [
    'init: a failure runs again unless the pod is Never',
    withInits('OnFailure', [init1, init2]),
    status([sb()], [init('init1', { phase: 'exited', exitCode: 3 })]),
    { initContainersToStart: [{ name: 'init1', reason: 'restart' }] },
  ],
  [
    'init: a failure fails a Never pod',
    withInits('Never', [init1, init2]),
    status([sb()], [init('init1', { phase: 'exited', exitCode: 3 })]),
    { killPod: true },
  ],
  [
    'init: a new sandbox starts initialization over',
    withInits('Always', [init1]),
    status([sb({ ready: false })], [ctr({ phase: 'exited', exitCode: 1 }), done('init1')]),
    {
      killPod: true,
      createSandbox: true,
      sandboxId: undefined,
      sandboxAttempt: 1,
      initContainersToStart: [{ name: 'init1', reason: 'pod sandbox changed' }],
    },
  ],
  ['init: removed init containers of an initialized pod do not run again', withInits('Always', [init1]), status([sb()], [ctr()]), {}],
  [
    'sidecar: the next init container starts once the sidecar runs',
    withInits('Always', [sidecar, init1]),
    status([sb()], [init('sidecar')]),
    { initContainersToStart: [{ name: 'init1', reason: 'not started yet' }] },
  ],
  [
    'sidecar: app containers start while the sidecar runs',
    withInits('Always', [init1, sidecar]),
    status([sb()], [init('sidecar'), done('init1')]),
    { containersToStart: [{ name: 'app', reason: 'not started yet' }] },
  ],
  [
    'sidecar: restarted when it exits, the app keeps running',
    withInits('Always', [sidecar]),
    status([sb()], [ctr(), init('sidecar', { phase: 'exited', exitCode: 1 })]),
    { initContainersToStart: [{ name: 'sidecar', reason: 'restart' }] },
  ],
  [
    'sidecar: a missing sidecar of an initialized pod starts again',
    withInits('Always', [init1, sidecar]),
    status([sb()], [ctr()]),
    { initContainersToStart: [{ name: 'sidecar', reason: 'sidecar not running' }] },
  ],
  [
    'sidecar: does not keep a finished Never pod alive',
    withInits('Never', [sidecar]),
    status([sb()], [ctr({ phase: 'exited', exitCode: 0 }), init('sidecar')]),
    { killPod: true },
  ],
  [
    'sidecar: a changed sidecar is replaced',
    withInits('Always', [sidecar]),
    status([sb()], [ctr(), init('sidecar', { hash: 'old' })]),
    {
      containersToKill: [{ id: 'c-sidecar', name: 'sidecar', reason: 'Init container sidecar definition changed' }],
      initContainersToStart: [{ name: 'sidecar', reason: 'spec changed' }],
    },
  ],
);

for (const [name, p, s, want] of cases) {
  test(`computePodActions: ${name}`, () => assert.deepEqual(computePodActions(p, s), { ...none, ...want }));
}

// Probes: the prober's liveness and startup states of each running instance (by container ID).
const probed = {
  ...app,
  livenessProbe: { exec: { command: ['true'] } },
  startupProbe: { exec: { command: ['true'] }, terminationGracePeriodSeconds: 7 },
};
const probedPod = (restartPolicy: string): Pod => ({ metadata: { uid: 'u' }, spec: { restartPolicy, containers: [probed] } });
const probedSidecar = { ...sidecar, startupProbe: { exec: { command: ['true'] } }, livenessProbe: { exec: { command: ['true'] } } };
const withProbedSidecar = (): Pod => ({
  metadata: { uid: 'u' },
  spec: { restartPolicy: 'Always', initContainers: [probedSidecar, init1], containers: [app] },
});
const liveKill = {
  id: 'c1',
  name: 'app',
  reason: 'Container app failed liveness probe, will be restarted',
  message: 'Container app failed liveness probe, will be restarted',
};
const probeCases: [string, Pod, PodRuntimeStatus, Record<string, ProbeHealth>, Partial<PodActions>][] = [
  [
    'probes: a healthy container is kept',
    probedPod('Always'),
    status([sb()], [ctr()]),
    { c1: { liveness: 'Success', startup: 'Success' } },
    {},
  ],
  ['probes: no results yet (the prober has not seen it): kept', probedPod('Always'), status([sb()], [ctr()]), {}, {}],
  [
    'probes: failed liveness: killed and started again',
    probedPod('Always'),
    status([sb()], [ctr()]),
    { c1: { liveness: 'Failure', startup: 'Success' } },
    { containersToKill: [liveKill], containersToStart: [{ name: 'app', reason: liveKill.message }] },
  ],
  [
    'probes: OnFailure restarts too (any policy but Never)',
    probedPod('OnFailure'),
    status([sb()], [ctr()]),
    { c1: { liveness: 'Failure' } },
    { containersToKill: [liveKill], containersToStart: [{ name: 'app', reason: liveKill.message }] },
  ],
  [
    'probes: Never: killed, not restarted, and the pod is done',
    probedPod('Never'),
    status([sb()], [ctr()]),
    { c1: { liveness: 'Failure' } },
    { killPod: true },
  ],
  [
    "probes: failed startup: killed with the probe's grace period",
    probedPod('Always'),
    status([sb()], [ctr()]),
    { c1: { liveness: 'Success', startup: 'Failure' } },
    {
      containersToKill: [
        {
          id: 'c1',
          name: 'app',
          reason: 'Container app failed startup probe, will be restarted',
          message: 'Container app failed startup probe, will be restarted',
          gracePeriodSeconds: 7,
        },
      ],
      containersToStart: [{ name: 'app', reason: 'Container app failed startup probe, will be restarted' }],
    },
  ],
  [
    'probes: a liveness result without a liveness probe in the spec is ignored',
    pod(),
    status([sb()], [ctr()]),
    { c1: { liveness: 'Failure' } },
    {},
  ],
  [
    'probes: an exited container is not judged by its old results',
    probedPod('Always'),
    status([sb()], [ctr({ phase: 'exited', exitCode: 0 })]),
    { c1: { liveness: 'Failure' } },
    { containersToStart: [{ name: 'app', reason: 'restart' }] },
  ],
  [
    'probes: a sidecar not yet started (startup Unknown) holds the next init container',
    withProbedSidecar(),
    status([sb()], [init('sidecar', { hash: containerHash(probedSidecar) })]),
    { 'c-sidecar': { startup: 'Unknown', liveness: 'Success' } },
    {},
  ],
  [
    'probes: a sidecar whose startup probe has not run yet holds it too',
    withProbedSidecar(),
    status([sb()], [init('sidecar', { hash: containerHash(probedSidecar) })]),
    {},
    {},
  ],
  [
    'probes: a started sidecar lets the next init container start',
    withProbedSidecar(),
    status([sb()], [init('sidecar', { hash: containerHash(probedSidecar) })]),
    { 'c-sidecar': { startup: 'Success', liveness: 'Success' } },
    { initContainersToStart: [{ name: 'init1', reason: 'not started yet' }] },
  ],
  [
    'probes: a sidecar that failed startup is restarted',
    withProbedSidecar(),
    status([sb()], [init('sidecar', { hash: containerHash(probedSidecar) })]),
    { 'c-sidecar': { startup: 'Failure' } },
    {
      containersToKill: [
        {
          id: 'c-sidecar',
          name: 'sidecar',
          reason: 'Init container sidecar failed startup probe',
          message: 'Init container sidecar failed startup probe',
        },
      ],
      initContainersToStart: [{ name: 'sidecar', reason: 'Init container sidecar failed startup probe' }],
    },
  ],
  [
    'probes: a sidecar that failed liveness is restarted, the app keeps running',
    withProbedSidecar(),
    status([sb()], [ctr(), done('init1'), init('sidecar', { hash: containerHash(probedSidecar) })]),
    { 'c-sidecar': { startup: 'Success', liveness: 'Failure' } },
    {
      containersToKill: [
        {
          id: 'c-sidecar',
          name: 'sidecar',
          reason: 'Init container sidecar failed liveness probe',
          message: 'Init container sidecar failed liveness probe',
        },
      ],
      initContainersToStart: [{ name: 'sidecar', reason: 'Init container sidecar failed liveness probe' }],
    },
  ],
];
for (const [name, p, s, health, want] of probeCases) {
  test(`computePodActions: ${name}`, () =>
    assert.deepEqual(
      computePodActions(p, s, (id) => health[id]),
      { ...none, ...want },
    ));
}

test('computePodActions: without a prober, probes do not hold a sidecar or kill anything', () => {
  assert.deepEqual(computePodActions(withProbedSidecar(), status([sb()], [init('sidecar', { hash: containerHash(probedSidecar) })])), {
    ...none,
    initContainersToStart: [{ name: 'init1', reason: 'not started yet' }],
  });
  assert.deepEqual(computePodActions(probedPod('Always'), status([sb()], [ctr()])), none);
});

// In-place resize: the pod carries its allocated resources; ActualOf says what the container runs with.
{
  const res = (cpu: string, memory: string) => ({ requests: { cpu, memory }, limits: { cpu, memory } });
  const sized = (resizePolicy?: Container['resizePolicy'], sidecarToo = false): Pod => ({
    metadata: { uid: 'u' },
    spec: {
      restartPolicy: 'Always',
      containers: [{ ...app, resources: res('200m', '64Mi'), resizePolicy }],
      ...(sidecarToo ? { initContainers: [{ ...sidecar, resources: res('200m', '64Mi'), resizePolicy }] } : {}),
    },
  });
  const running = status([sb()], [ctr()]);
  const resizeCases: [
    string,
    Pod,
    PodRuntimeStatus,
    ((s: ContainerState) => Container['resources'] | undefined) | undefined,
    Partial<PodActions>,
  ][] = [
    ['no actual resources known: nothing to resize', sized(), running, () => undefined, {}],
    ['same values in other units: nothing to do', sized(), running, () => res('0.2', '67108864'), {}],
    [
      'cpu changed, default policy: update in place',
      sized(),
      running,
      () => res('100m', '64Mi'),
      { containersToUpdate: [{ id: 'c1', name: 'app', resources: res('200m', '64Mi'), changed: ['cpu'] }] },
    ],
    [
      'memory changed, memory policy RestartContainer: restart',
      sized([{ resourceName: 'memory', restartPolicy: 'RestartContainer' }]),
      running,
      () => res('200m', '32Mi'),
      {
        containersToKill: [
          {
            id: 'c1',
            name: 'app',
            reason: 'Container app resize requires restart',
            message: 'Container app resize requires restart',
            resize: true,
          },
        ],
        containersToStart: [{ name: 'app', reason: 'resize requires restart' }],
      },
    ],
    [
      'cpu changed, only memory restarts: update in place',
      sized([{ resourceName: 'memory', restartPolicy: 'RestartContainer' }]),
      running,
      () => res('300m', '64Mi'),
      { containersToUpdate: [{ id: 'c1', name: 'app', resources: res('200m', '64Mi'), changed: ['cpu'] }] },
    ],
    [
      'an exited container is not resized',
      sized(),
      status([sb()], [ctr({ phase: 'exited', exitCode: 1 })]),
      () => res('100m', '64Mi'),
      { containersToStart: [{ name: 'app', reason: 'restart' }] },
    ],
    [
      'a sidecar is resized too',
      sized(undefined, true),
      status([sb()], [ctr(), init('sidecar')]),
      (s) => (s.name === 'sidecar' ? res('100m', '64Mi') : undefined),
      { containersToUpdate: [{ id: 'c-sidecar', name: 'sidecar', resources: res('200m', '64Mi'), changed: ['cpu'] }] },
    ],
    [
      'the regular init container running now is resized too (InPlacePodVerticalScalingInitContainers)',
      {
        metadata: { uid: 'u' },
        spec: {
          restartPolicy: 'Always',
          initContainers: [{ name: 'setup', image: 'busybox:1.36', resources: res('200m', '64Mi') }],
          containers: [{ ...app, resources: res('200m', '64Mi') }],
        },
      },
      status([sb()], [init('setup')]),
      (s) => (s.name === 'setup' ? res('100m', '64Mi') : undefined),
      { containersToUpdate: [{ id: 'c-setup', name: 'setup', resources: res('200m', '64Mi'), changed: ['cpu'] }] },
    ],
  ];
  for (const [name, p, s, actual, want] of resizeCases) {
    test(`computePodActions resize: ${name}`, () => assert.deepEqual(computePodActions(p, s, undefined, actual), { ...none, ...want }));
  }
}

// Container restart rules (ContainerRestartRules): a container's own restartPolicy and
// restartPolicyRules override the pod's; RestartAllContainers resets every container.
{
  const rules = (action: string, values: number[]) => [{ action, exitCodes: { operator: 'In', values } }];
  const own = (restartPolicy: string, restartPolicyRules?: unknown): Container =>
    ({ ...app, restartPolicy, ...(restartPolicyRules ? { restartPolicyRules } : {}) }) as Container;
  const pod = (restartPolicy: string, containers: Container[]): Pod => ({ metadata: { uid: 'u' }, spec: { restartPolicy, containers } });
  const exited = (exitCode: number, over: Partial<ContainerState> = {}) => ctr({ phase: 'exited', exitCode, ...over });
  const ruleCases: [string, Pod, PodRuntimeStatus, Partial<PodActions>][] = [
    [
      'a matching Restart rule restarts the container of a Never pod',
      pod('Never', [own('Never', rules('Restart', [42]))]),
      status([sb()], [exited(42)]),
      { containersToStart: [{ name: 'app', reason: 'restart' }] },
    ],
    [
      'a rule that does not match leaves the container policy (Never): the pod is done',
      pod('Never', [own('Never', rules('Restart', [42]))]),
      status([sb()], [exited(1)]),
      { killPod: true },
    ],
    ['container Never in an Always pod: not restarted', pod('Always', [own('Never')]), status([sb()], [exited(1)]), { killPod: true }],
    [
      'container Always in a Never pod: restarted',
      pod('Never', [own('Always')]),
      status([sb()], [exited(0)]),
      { containersToStart: [{ name: 'app', reason: 'restart' }] },
    ],
    ['container OnFailure, succeeded: not restarted', pod('Always', [own('OnFailure')]), status([sb()], [exited(0)]), { killPod: true }],
    [
      'a new sandbox: a succeeded container with its own OnFailure policy does not run again',
      pod('Always', [own('OnFailure'), side]),
      status([sb({ ready: false })], [exited(0), ctr({ id: 'c2', name: 'side', hash: containerHash(side), phase: 'exited', exitCode: 0 })]),
      {
        killPod: true,
        createSandbox: true,
        sandboxId: undefined,
        sandboxAttempt: 1,
        containersToStart: [{ name: 'side', reason: 'pod sandbox changed' }],
      },
    ],
    [
      'an init container of a Never pod restarted by its rule',
      {
        metadata: { uid: 'u' },
        spec: {
          restartPolicy: 'Never',
          initContainers: [{ ...init1, restartPolicy: 'Never', restartPolicyRules: rules('Restart', [3]) } as Container],
          containers: [app],
        },
      },
      status([sb()], [init('init1', { phase: 'exited', exitCode: 3 })]),
      { initContainersToStart: [{ name: 'init1', reason: 'restart' }] },
    ],
    [
      'an init container with its own Never policy fails an Always pod',
      {
        metadata: { uid: 'u' },
        spec: { restartPolicy: 'Always', initContainers: [{ ...init1, restartPolicy: 'Never' }], containers: [app] },
      },
      status([sb()], [init('init1', { phase: 'exited', exitCode: 3 })]),
      { killPod: true },
    ],
  ];
  for (const [name, p, s, want] of ruleCases) {
    test(`computePodActions restart rules: ${name}`, () => assert.deepEqual(computePodActions(p, s), { ...none, ...want }));
  }
  test('computePodActions restart rules: a failed liveness probe restarts by the container policy only (no exit code for rules)', () => {
    const live = { livenessProbe: { exec: { command: ['true'] } } };
    const failed = () => ({ liveness: 'Failure' as const });
    const never = pod('Always', [{ ...own('Never', rules('Restart', [137])), ...live }]);
    assert.deepEqual(
      computePodActions(never, status([sb()], [ctr()]), failed),
      { ...none, killPod: true },
      'killed, not started: the pod is done',
    );
    const always = pod('Never', [{ ...own('Always'), ...live }]);
    const message = 'Container app failed liveness probe, will be restarted';
    assert.deepEqual(computePodActions(always, status([sb()], [ctr()]), failed), {
      ...none,
      containersToKill: [{ id: 'c1', name: 'app', reason: message, message }],
      containersToStart: [{ name: 'app', reason: message }],
    });
  });

  // RestartAllContainers: every instance goes, app before init containers, the triggering ones last.
  const source = { ...own('Never', rules('RestartAllContainers', [42])), name: 'source' } as Container;
  const sourceInit = { ...init1, restartPolicy: 'Never', restartPolicyRules: rules('RestartAllContainers', [42]) } as Container;
  const resetPod: Pod = {
    metadata: { uid: 'u' },
    spec: { restartPolicy: 'Never', initContainers: [init1, sidecar], containers: [source, app] },
  };
  test('computePodActions RestartAllContainers: reset every instance, nothing else', () => {
    const s = status(
      [sb()],
      [
        ctr({ id: 'app2' }),
        exited(42, { id: 'src', name: 'source' }),
        exited(1, { id: 'app1' }),
        init('sidecar'),
        done('init1'),
        init('init1', { id: 'init1-old', phase: 'unknown' }),
      ],
    );
    assert.deepEqual(computePodActions(resetPod, s, undefined, undefined, true), {
      ...none,
      containersToReset: [
        { id: 'app2', name: 'app', kill: true },
        { id: 'app1', name: 'app', kill: false },
        { id: 'c-init1', name: 'init1', kill: false },
        { id: 'init1-old', name: 'init1', kill: true },
        { id: 'c-sidecar', name: 'sidecar', kill: true },
        { id: 'src', name: 'source', kill: false },
      ],
    });
  });
  test('computePodActions RestartAllContainers: a triggering init container goes last', () => {
    const p: Pod = { metadata: { uid: 'u' }, spec: { restartPolicy: 'Never', initContainers: [sidecar, sourceInit], containers: [app] } };
    const s = status([sb()], [init('init1', { phase: 'exited', exitCode: 42 }), init('sidecar')]);
    assert.deepEqual(computePodActions(p, s, undefined, undefined, true).containersToReset, [
      { id: 'c-sidecar', name: 'sidecar', kill: true },
      { id: 'c-init1', name: 'init1', kill: false },
    ]);
  });
  test('computePodActions RestartAllContainers: once all are removed, initialization starts over', () => {
    assert.deepEqual(computePodActions(resetPod, status([sb()], [])), {
      ...none,
      initContainersToStart: [{ name: 'init1', reason: 'not started yet' }],
    });
  });
}
