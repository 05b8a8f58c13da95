import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { containerOOMScoreAdj, qosClass } from './qos.ts';

const GiB = 2 ** 30;
const c = (name: string, requests?: Record<string, string>, limits?: Record<string, string>, restartPolicy?: string): Container => ({
  name,
  resources: { requests, limits },
  ...(restartPolicy ? { restartPolicy } : {}),
});
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
const R = (cpuReq?: string, cpuLim?: string, memReq?: string, memLim?: string) => {
  const requests: Record<string, string> = {},
    limits: Record<string, string> = {};
  if (cpuReq) requests.cpu = cpuReq;
  if (memReq) requests.memory = memReq;
  if (cpuLim) limits.cpu = cpuLim;
  if (memLim) limits.memory = memLim;
  return { ...(Object.keys(requests).length ? { requests } : {}), ...(Object.keys(limits).length ? { limits } : {}) };
};
const withRes = (name: string, r: ReturnType<typeof R>): Container => ({ name, resources: r });
const podLevel = (resources: ReturnType<typeof R> | undefined, containers: Container[]): Pod => ({
  spec: { containers, ...(resources ? { resources } : {}) } as Pod['spec'],
});
const qosCases: [string, Pod, string][] = [
  [
    'Guaranteed, container resources only',
    podLevel(undefined, [withRes('c1', R('50m', '50m', '70Mi', '70Mi')), withRes('c2', R('70m', '70m', '50Mi', '50Mi'))]),
    'Guaranteed',
  ],
  [
    'Guaranteed, no container resources',
    podLevel(R('100m', '100m', '100Mi', '100Mi'), [withRes('c1', {}), withRes('c2', {})]),
    'Guaranteed',
  ],
  [
    'Guaranteed pod with other container resources',
    podLevel(R('100m', '100m', '100Mi', '100Mi'), [
      withRes('c1', R('50m', '100m', '50Mi', '100Mi')),
      withRes('c2', R('50m', '100m', '50Mi', '100Mi')),
    ]),
    'Guaranteed',
  ],
  [
    'Guaranteed, pod limits only (requests defaulted)',
    podLevel(R(undefined, '100m', undefined, '100Mi'), [withRes('c1', {})]),
    'Guaranteed',
  ],
  [
    'Burstable, pod limits, container limits',
    podLevel(R(undefined, '100m', undefined, '100Mi'), [
      withRes('c1', R(undefined, '50m', undefined, '50Mi')),
      withRes('c2', R(undefined, '30m', undefined, '30Mi')),
    ]),
    'Burstable',
  ],
  ['Burstable, pod requests only', podLevel(R('100m', undefined, '100Mi'), [withRes('c1', {}), withRes('c2', {})]), 'Burstable'],
  [
    'Burstable, pod requests, Guaranteed containers',
    podLevel(R('100m', undefined, '100Mi'), [
      withRes('c1', R('30m', '30m', '30Mi', '30Mi')),
      withRes('c2', R('30m', '30m', '30Mi', '30Mi')),
    ]),
    'Burstable',
  ],
  ['Burstable, pod requests below limits', podLevel(R('50m', '100m', '50Mi', '100Mi'), [withRes('c1', {})]), 'Burstable'],
  [
    'Burstable, partial pod requests, 1 Guaranteed container',
    podLevel(R(undefined, '200m', '200Mi', '200Mi'), [withRes('c1', R('100m', '100m', '100Mi', '100Mi')), withRes('c2', {})]),
    'Burstable',
  ],
  ['Burstable, pod cpu limit only', podLevel(R(undefined, '1'), [withRes('c1', R(undefined, '1', undefined, '1Gi'))]), 'Burstable'],
  ['BestEffort', podLevel(undefined, [withRes('c1', {}), withRes('c2', {})]), 'BestEffort'],
  // Any spec.resources takes the pod-level branch, even an empty one.
  [
    'an empty spec.resources: BestEffort, whatever the containers set',
    podLevel({}, [withRes('c1', R('1', '1', '1Gi', '1Gi'))]),
    'BestEffort',
  ],
  ['a zero limit is no limit', podLevel(undefined, [withRes('c1', R('0', '0', '1Gi', '1Gi'))]), 'Burstable'],
  [
    'a container without limits spoils Guaranteed',
    podLevel(undefined, [withRes('c1', R('1', '1', '1Gi', '1Gi')), withRes('c2', {})]),
    'Burstable',
  ],
  [
    'an init container counts',
    { spec: { containers: [withRes('c1', R('1', '1', '1Gi', '1Gi'))], initContainers: [withRes('i', R('1'))] } },
    'Burstable',
  ],
];
for (const [name, p, want] of qosCases) test(`qosClass: ${name}`, () => assert.equal(qosClass(p), want));

// Burstable with pod-level requests: the pod's memory request not given to containers is shared out (policy.go).
test('containerOOMScoreAdj with pod-level requests: the unassigned pod memory request spread over the containers', () => {
  const a = withRes('a', R(undefined, undefined, '1Gi')),
    b = withRes('b', {}),
    s: Container = { ...withRes('s', {}), restartPolicy: 'Always' };
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
