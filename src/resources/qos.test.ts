import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { containerOOMScoreAdj, qosClass } from './qos.ts';
import { container as c, cpuMemory, podLevel, withResources } from './testing.ts';

const GiB = 2 ** 30;
const pod = (containers: Container[], initContainers: Container[] = [], priorityClassName?: string): Pod => ({
  spec: { containers, initContainers, priorityClassName },
});

const cases: [string, Pod, Container, number][] = [
  ['Guaranteed', pod([c('a', undefined, { cpu: '1', memory: '1Gi' })]), c('a', undefined, { cpu: '1', memory: '1Gi' }), -997],
  ['BestEffort', pod([c('a')]), c('a'), 1000],
  ['node-critical', pod([c('a')], [], 'system-node-critical'), c('a'), -997],
  ['Burstable: by the share of memory requested', pod([c('a', { memory: '1Gi' })]), c('a', { memory: '1Gi' }), 1000 - 1000 / 8],
  ['Burstable without a memory request: 999, above BestEffort never', pod([c('a', { cpu: '1' })]), c('a', { cpu: '1' }), 999],
  ['Burstable asking for everything: 3, above Guaranteed', pod([c('a', { memory: '8Gi' })]), c('a', { memory: '8Gi' }), 3],
  [
    'a sidecar no higher than the smallest app container',
    pod([c('a', { memory: '2Gi' }), c('b', { memory: '1Gi' })], [c('s', { memory: '100Mi' }, undefined, 'Always')]),
    c('s', { memory: '100Mi' }, undefined, 'Always'),
    875,
  ],
];
for (const [name, p, ctr, want] of cases)
  test(`containerOOMScoreAdj: ${name}`, () => assert.equal(containerOOMScoreAdj(p, ctr, 8 * GiB), want));

// ComputePodQOS, both branches; the pod-level cases of test/e2e/common/node/pod_level_resources.go.
const qosCases: [string, Pod, string][] = [
  [
    'Guaranteed, container resources only',
    podLevel(undefined, [
      withResources('c1', cpuMemory('50m', '50m', '70Mi', '70Mi')),
      withResources('c2', cpuMemory('70m', '70m', '50Mi', '50Mi')),
    ]),
    'Guaranteed',
  ],
  [
    'Guaranteed, no container resources',
    podLevel(cpuMemory('100m', '100m', '100Mi', '100Mi'), [withResources('c1', {}), withResources('c2', {})]),
    'Guaranteed',
  ],
  [
    'Guaranteed pod with other container resources',
    podLevel(cpuMemory('100m', '100m', '100Mi', '100Mi'), [
      withResources('c1', cpuMemory('50m', '100m', '50Mi', '100Mi')),
      withResources('c2', cpuMemory('50m', '100m', '50Mi', '100Mi')),
    ]),
    'Guaranteed',
  ],
  [
    'Guaranteed, pod limits only (requests defaulted)',
    podLevel(cpuMemory(undefined, '100m', undefined, '100Mi'), [withResources('c1', {})]),
    'Guaranteed',
  ],
  [
    'Burstable, pod limits, container limits',
    podLevel(cpuMemory(undefined, '100m', undefined, '100Mi'), [
      withResources('c1', cpuMemory(undefined, '50m', undefined, '50Mi')),
      withResources('c2', cpuMemory(undefined, '30m', undefined, '30Mi')),
    ]),
    'Burstable',
  ],
  [
    'Burstable, pod requests only',
    podLevel(cpuMemory('100m', undefined, '100Mi'), [withResources('c1', {}), withResources('c2', {})]),
    'Burstable',
  ],
  [
    'Burstable, pod requests, Guaranteed containers',
    podLevel(cpuMemory('100m', undefined, '100Mi'), [
      withResources('c1', cpuMemory('30m', '30m', '30Mi', '30Mi')),
      withResources('c2', cpuMemory('30m', '30m', '30Mi', '30Mi')),
    ]),
    'Burstable',
  ],
  ['Burstable, pod requests below limits', podLevel(cpuMemory('50m', '100m', '50Mi', '100Mi'), [withResources('c1', {})]), 'Burstable'],
  [
    'Burstable, partial pod requests, 1 Guaranteed container',
    podLevel(cpuMemory(undefined, '200m', '200Mi', '200Mi'), [
      withResources('c1', cpuMemory('100m', '100m', '100Mi', '100Mi')),
      withResources('c2', {}),
    ]),
    'Burstable',
  ],
  [
    'Burstable, pod cpu limit only',
    podLevel(cpuMemory(undefined, '1'), [withResources('c1', cpuMemory(undefined, '1', undefined, '1Gi'))]),
    'Burstable',
  ],
  ['BestEffort', podLevel(undefined, [withResources('c1', {}), withResources('c2', {})]), 'BestEffort'],
  // Any spec.resources takes the pod-level branch, even an empty one.
  [
    'an empty spec.resources: BestEffort, whatever the containers set',
    podLevel({}, [withResources('c1', cpuMemory('1', '1', '1Gi', '1Gi'))]),
    'BestEffort',
  ],
  ['a zero limit is no limit', podLevel(undefined, [withResources('c1', cpuMemory('0', '0', '1Gi', '1Gi'))]), 'Burstable'],
  [
    'a container without limits spoils Guaranteed',
    podLevel(undefined, [withResources('c1', cpuMemory('1', '1', '1Gi', '1Gi')), withResources('c2', {})]),
    'Burstable',
  ],
  [
    'an init container counts',
    {
      spec: { containers: [withResources('c1', cpuMemory('1', '1', '1Gi', '1Gi'))], initContainers: [withResources('i', cpuMemory('1'))] },
    },
    'Burstable',
  ],
];
for (const [name, p, want] of qosCases) test(`qosClass: ${name}`, () => assert.equal(qosClass(p), want));

// Burstable with pod-level requests: the pod's memory request not given to containers is shared out (policy.go).
test('containerOOMScoreAdj with pod-level requests: the unassigned pod memory request spread over the containers', () => {
  const a = withResources('a', cpuMemory(undefined, undefined, '1Gi')),
    b = withResources('b', {}),
    s: Container = { ...withResources('s', {}), restartPolicy: 'Always' };
  // 4Gi at the pod level, 1Gi given to a: 3Gi shared by three containers, 1Gi each.
  const p: Pod = { spec: { containers: [a, b], initContainers: [s], resources: { requests: { memory: '4Gi' } } } as Pod['spec'] };
  assert.equal(containerOOMScoreAdj(p, a, 8 * GiB), 1000 - 250);
  assert.equal(containerOOMScoreAdj(p, b, 8 * GiB), 1000 - 125);
  // The sidecar: no higher than the smallest app container plus its share.
  assert.equal(containerOOMScoreAdj(p, s, 8 * GiB), 1000 - 125);
  // Pod-level cpu only: no memory to share.
  const q: Pod = { spec: { containers: [a, b], resources: { requests: { cpu: '1' } } } as Pod['spec'] };
  assert.equal(containerOOMScoreAdj(q, b, 8 * GiB), 999);
});
