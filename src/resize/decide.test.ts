import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { admitResize, containerResize, resizeConditions, resizeRequested, specAllocation, withAllocation } from './decide.ts';

const ctr = (name: string, cpu: string, memory: string, resizePolicy?: Container['resizePolicy']): Container => ({
  name,
  image: 'busybox',
  resources: { requests: { cpu, memory }, limits: { cpu, memory } },
  ...(resizePolicy ? { resizePolicy } : {}),
});
const pod = (uid: string, ...containers: Container[]): Pod => ({ metadata: { uid, generation: 2 }, spec: { containers } });

test('specAllocation: cpu and memory of app and init containers', () => {
  const p: Pod = {
    metadata: { uid: 'u' },
    spec: {
      initContainers: [ctr('i', '1', '1Mi')],
      containers: [{ name: 'c', resources: { requests: { cpu: '1', 'ephemeral-storage': '1Gi' } } }],
    },
  };
  assert.deepEqual(specAllocation(p), {
    i: { requests: { cpu: '1', memory: '1Mi' }, limits: { cpu: '1', memory: '1Mi' } },
    c: { requests: { cpu: '1' } },
  });
});

test('resizeRequested: only a real change of a known container counts', () => {
  const p = pod('u', ctr('c', '1', '1Gi'));
  assert.equal(resizeRequested(p, specAllocation(p)), false);
  assert.equal(resizeRequested(p, { c: { requests: { cpu: '1000m', memory: '1073741824' }, limits: { cpu: '1', memory: '1Gi' } } }), false);
  assert.equal(resizeRequested(p, { c: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } } }), true);
  assert.equal(resizeRequested(p, {}), false);
});

test('withAllocation: allocated cpu and memory replace the spec, other resources stay', () => {
  const p: Pod = {
    metadata: { uid: 'u' },
    spec: { containers: [{ name: 'c', resources: { requests: { cpu: '2', 'ephemeral-storage': '1Gi' }, limits: { cpu: '2' } } }] },
  };
  const got = withAllocation(p, { c: { requests: { cpu: '1' } } });
  assert.deepEqual(got.spec!.containers[0]!.resources, { requests: { 'ephemeral-storage': '1Gi', cpu: '1' }, limits: undefined });
  assert.equal(p.spec!.containers[0]!.resources!.requests!.cpu, '2'); // not mutated
});

const node = { cpu: '2', memory: '4Gi', pods: '110' };
const admitCases: [string, Pod, Pod[], Record<string, string> | undefined, ReturnType<typeof admitResize>][] = [
  ['fits', pod('u', ctr('c', '1', '1Gi')), [pod('o', ctr('c', '500m', '1Gi'))], node, { ok: true }],
  ['node unknown: accepted', pod('u', ctr('c', '100', '1Ti')), [], undefined, { ok: true }],
  [
    'more than the node has: Infeasible',
    pod('u', ctr('c', '3', '1Gi')),
    [],
    node,
    { ok: false, reason: 'Infeasible', message: "Node didn't have enough capacity: cpu, requested: 3000, capacity: 2000" },
  ],
  [
    'memory is reported first',
    pod('u', ctr('c', '3', '5Gi')),
    [],
    node,
    { ok: false, reason: 'Infeasible', message: "Node didn't have enough capacity: memory, requested: 5368709120, capacity: 4294967296" },
  ],
  [
    'not next to the others: Deferred',
    pod('u', ctr('c', '1500m', '1Gi')),
    [pod('o', ctr('c', '1', '1Gi'))],
    node,
    { ok: false, reason: 'Deferred', message: "Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000" },
  ],
];
for (const [name, p, others, alloc, want] of admitCases)
  test(`admitResize: ${name}`, () => assert.deepEqual(admitResize(p, others, alloc), want));

const restartMem = [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }];
const resizeCases: [string, Container, ReturnType<typeof ctr>['resources'], ReturnType<typeof containerResize>][] = [
  ['unchanged', ctr('c', '1', '1Gi'), ctr('c', '1', '1Gi').resources, { action: 'none' }],
  ['cpu, no policy: update', ctr('c', '1', '1Gi'), ctr('c', '2', '1Gi').resources, { action: 'update', changed: ['cpu'] }],
  [
    'cpu, memory restarts: update',
    ctr('c', '1', '1Gi', restartMem),
    ctr('c', '2', '1Gi').resources,
    { action: 'update', changed: ['cpu'] },
  ],
  [
    'memory, memory restarts: restart',
    ctr('c', '1', '1Gi', restartMem),
    ctr('c', '1', '2Gi').resources,
    { action: 'restart', changed: ['memory'] },
  ],
  [
    'both, memory restarts: restart',
    ctr('c', '1', '1Gi', restartMem),
    ctr('c', '2', '2Gi').resources,
    { action: 'restart', changed: ['cpu', 'memory'] },
  ],
  [
    'memory request only, memory restarts: restart',
    { ...ctr('c', '1', '1Gi', restartMem), resources: { requests: { cpu: '1', memory: '512Mi' }, limits: { cpu: '1', memory: '1Gi' } } },
    ctr('c', '1', '1Gi').resources,
    { action: 'restart', changed: ['memory'] },
  ],
];
for (const [name, c, actual, want] of resizeCases)
  test(`containerResize: ${name}`, () => assert.deepEqual(containerResize(c, actual!), want));

test('resizeConditions: True while present; the transition time stays while the reason does', () => {
  const prev = [{ type: 'PodResizePending', status: 'True', reason: 'Deferred', lastTransitionTime: 'then' }];
  assert.deepEqual(resizeConditions({}, prev, 'now'), []);
  assert.deepEqual(resizeConditions({ pending: { reason: 'Deferred', message: 'm', generation: 3 } }, prev, 'now'), [
    { type: 'PodResizePending', status: 'True', observedGeneration: 3, lastTransitionTime: 'then', reason: 'Deferred', message: 'm' },
  ]);
  assert.deepEqual(resizeConditions({ pending: { reason: 'Infeasible', message: 'm' }, inProgress: { generation: 2 } }, prev, 'now'), [
    { type: 'PodResizePending', status: 'True', lastTransitionTime: 'now', reason: 'Infeasible', message: 'm' },
    { type: 'PodResizeInProgress', status: 'True', observedGeneration: 2, lastTransitionTime: 'now' },
  ]);
});
