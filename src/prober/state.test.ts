import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freshState, nextProbeState, probeGate, probeTiming, type GateInput, type ProbeType, type WorkerState } from './state.ts';
import { interpretOutcome, type Outcome } from './outcome.ts';

const t = { successThreshold: 1, failureThreshold: 3 };
const run = (type: ProbeType, results: ('Success' | 'Failure')[], thresholds = t) => {
  let s: WorkerState = freshState();
  const published: (string | undefined)[] = [];
  for (const r of results) {
    const n = nextProbeState(type, thresholds, s, r);
    s = n.state;
    published.push(n.publish);
  }
  return { published, state: s };
};

const cases: [
  string,
  ProbeType,
  ('Success' | 'Failure')[],
  { successThreshold: number; failureThreshold: number },
  (string | undefined)[],
  Partial<WorkerState>,
][] = [
  ['a success publishes at once (threshold 1)', 'Readiness', ['Success'], t, ['Success'], { run: 1, onHold: false }],
  [
    'failures publish at the threshold, and keep publishing after it',
    'Readiness',
    ['Failure', 'Failure', 'Failure', 'Failure'],
    t,
    [undefined, undefined, 'Failure', 'Failure'],
    { run: 4 },
  ],
  [
    'a success between failures starts the count over',
    'Readiness',
    ['Failure', 'Failure', 'Success', 'Failure', 'Failure'],
    t,
    [undefined, undefined, 'Success', undefined, undefined],
    { run: 2, lastResult: 'Failure' },
  ],
  [
    'successThreshold 2 needs two in a row',
    'Readiness',
    ['Success', 'Failure', 'Success', 'Success'],
    { successThreshold: 2, failureThreshold: 1 },
    [undefined, 'Failure', undefined, 'Success'],
    {},
  ],
  [
    'liveness failure at the threshold holds the worker',
    'Liveness',
    ['Failure', 'Failure', 'Failure'],
    t,
    [undefined, undefined, 'Failure'],
    { run: 0, onHold: true },
  ],
  ['startup failure holds it too', 'Startup', ['Failure'], { successThreshold: 1, failureThreshold: 1 }, ['Failure'], { onHold: true }],
  ['readiness failure never holds', 'Readiness', ['Failure'], { successThreshold: 1, failureThreshold: 1 }, ['Failure'], { onHold: false }],
];
for (const [name, type, results, thresholds, published, state] of cases) {
  test(`nextProbeState: ${name}`, () => {
    const r = run(type, results, thresholds);
    assert.deepEqual(r.published, published);
    for (const [k, v] of Object.entries(state)) assert.deepEqual(r.state[k as keyof WorkerState], v, k);
  });
}

const g = (over: Partial<GateInput>): GateInput => ({
  type: 'Readiness',
  onHold: false,
  startedAtMs: 0,
  nowMs: 60_000,
  initialDelaySeconds: 0,
  started: true,
  deleting: false,
  ...over,
});
const gates: [string, Partial<GateInput>, string][] = [
  ['a started container is probed', {}, 'probe'],
  ['on hold: wait for a new instance', { onHold: true, type: 'Liveness' }, 'wait'],
  ['within initialDelaySeconds (whole seconds): wait', { initialDelaySeconds: 5, nowMs: 4_999 }, 'wait'],
  ['at initialDelaySeconds: probe', { initialDelaySeconds: 5, nowMs: 5_000 }, 'probe'],
  ['readiness waits for the startup probe', { started: false }, 'wait'],
  ['liveness waits for the startup probe', { started: false, type: 'Liveness' }, 'wait'],
  ['the startup probe runs until started', { started: false, type: 'Startup' }, 'probe'],
  ['and stops probing once started', { started: true, type: 'Startup' }, 'wait'],
  ['a deleted pod: liveness succeeds and stops', { deleting: true, type: 'Liveness' }, 'succeed'],
  ['a deleted pod: startup too', { deleting: true, type: 'Startup', started: false }, 'succeed'],
  ['a deleted pod: readiness keeps probing', { deleting: true }, 'probe'],
];
for (const [name, over, want] of gates) test(`probeGate: ${name}`, () => assert.equal(probeGate(g(over)), want));

test('probeTiming: the apiserver defaults for a spec without them (a static pod)', () => {
  assert.deepEqual(probeTiming({}), {
    initialDelaySeconds: 0,
    periodSeconds: 10,
    timeoutSeconds: 1,
    successThreshold: 1,
    failureThreshold: 3,
  });
  assert.deepEqual(probeTiming({ initialDelaySeconds: 2, periodSeconds: 1, timeoutSeconds: 3, successThreshold: 2, failureThreshold: 1 }), {
    initialDelaySeconds: 2,
    periodSeconds: 1,
    timeoutSeconds: 3,
    successThreshold: 2,
    failureThreshold: 1,
  });
});

const outcomes: [string, ProbeType, Outcome, ReturnType<typeof interpretOutcome>][] = [
  ['success', 'Readiness', { result: 'success', output: 'ok' }, { result: 'Success' }],
  [
    'failure: an Unhealthy event with the output',
    'Liveness',
    { result: 'failure', output: 'HTTP probe failed with statuscode: 500' },
    {
      result: 'Failure',
      event: { type: 'Warning', reason: 'Unhealthy', message: 'Liveness probe failed: HTTP probe failed with statuscode: 500' },
    },
  ],
  [
    'warning (a redirect not followed): success, with a ProbeWarning event',
    'Readiness',
    { result: 'warning', output: 'Probe terminated redirects, Response body: ' },
    {
      result: 'Success',
      event: { type: 'Warning', reason: 'ProbeWarning', message: 'Readiness probe warning: Probe terminated redirects, Response body: ' },
    },
  ],
  ['unknown without an error: failure, no event', 'Startup', { result: 'unknown', output: '' }, { result: 'Failure' }],
  [
    'an error: no result, an Unhealthy event',
    'Readiness',
    { result: 'unknown', output: '', error: 'strconv.Atoi: parsing "http": invalid syntax' },
    {
      event: {
        type: 'Warning',
        reason: 'Unhealthy',
        message: 'Readiness probe errored and resulted in unknown state: strconv.Atoi: parsing "http": invalid syntax',
      },
    },
  ],
];
for (const [name, type, o, want] of outcomes) test(`interpretOutcome: ${name}`, () => assert.deepEqual(interpretOutcome(type, o), want));
