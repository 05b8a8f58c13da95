import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import {
  isPodLevelRequestsSet,
  isPodLevelResourcesSet,
  podCPUAndMemoryRequests,
  podLevelResources,
  podLimits,
  podLimitsForContainers,
  podRequests,
  resourceRequest,
} from './pod-resources.ts';
import { container as c } from './testing.ts';

const Mi = 2 ** 20;
const pod = (containers: Container[], resources?: object, extra: Record<string, unknown> = {}): Pod => ({
  spec: { containers, ...(resources ? { resources } : {}), ...extra } as Pod['spec'],
});

test('podRequests without pod-level resources: app containers and sidecars add up, an init container beside the sidecars before it', () => {
  const cases: [string, Pod, Record<string, number>][] = [
    ['nothing', pod([c('a')]), {}],
    ['a limit stands in for a request', pod([c('a', undefined, { cpu: '1' })]), { cpu: 1000 }],
    [
      'sum of app containers and a sidecar; a regular init container alone',
      pod([c('a', { cpu: '100m', memory: '1Mi' }), c('b', { cpu: '200m', memory: '1Mi' })], undefined, {
        initContainers: [c('i', { cpu: '250m', memory: '1Mi' }), c('s', { cpu: '100m', memory: '1Mi' }, undefined, 'Always')],
      }),
      { cpu: 400, memory: 3 * Mi },
    ],
    [
      'an init container after a sidecar runs beside it',
      pod([c('a', { cpu: '100m' })], undefined, {
        initContainers: [c('s', { cpu: '50m' }, undefined, 'Always'), c('i', { cpu: '200m' })],
      }),
      { cpu: 250 },
    ],
    [
      'overhead added',
      pod([c('a', { cpu: '100m' })], undefined, { overhead: { cpu: '10m', memory: '5Mi' } }),
      { cpu: 110, memory: 5 * Mi },
    ],
  ];
  for (const [name, p, want] of cases) assert.deepEqual(podRequests(p), want, name);
});

// The pod-level cases of test/e2e/common/node/pod_level_resources.go (totalPodResources).
const e2e: [string, object | undefined, Container[], { requests: Record<string, number>; limits: Record<string, number> }][] = [
  [
    'Guaranteed, no container resources',
    { requests: { cpu: '100m', memory: '100Mi' }, limits: { cpu: '100m', memory: '100Mi' } },
    [c('c1'), c('c2')],
    { requests: { cpu: 100, memory: 100 * Mi }, limits: { cpu: 100, memory: 100 * Mi } },
  ],
  [
    'pod limits only: requests default to them',
    { limits: { cpu: '100m', memory: '100Mi' } },
    [c('c1'), c('c2')],
    { requests: { cpu: 100, memory: 100 * Mi }, limits: { cpu: 100, memory: 100 * Mi } },
  ],
  [
    'pod limits, container limits: requests default to the containers',
    { limits: { cpu: '100m', memory: '100Mi' } },
    [c('c1', undefined, { cpu: '50m', memory: '50Mi' }), c('c2', undefined, { cpu: '30m', memory: '30Mi' })],
    { requests: { cpu: 80, memory: 80 * Mi }, limits: { cpu: 100, memory: 100 * Mi } },
  ],
  [
    'pod requests, container limits: limits from the containers',
    { requests: { cpu: '100m', memory: '100Mi' } },
    [c('c1', undefined, { cpu: '50m', memory: '50Mi' }), c('c2', undefined, { cpu: '50m', memory: '50Mi' })],
    { requests: { cpu: 100, memory: 100 * Mi }, limits: { cpu: 100, memory: 100 * Mi } },
  ],
  [
    'pod requests, containers with requests and limits',
    { requests: { cpu: '100m', memory: '100Mi' } },
    [
      c('c1', { cpu: '30m', memory: '30Mi' }, { cpu: '30m', memory: '30Mi' }),
      c('c2', { cpu: '30m', memory: '30Mi' }, { cpu: '30m', memory: '30Mi' }),
    ],
    { requests: { cpu: 100, memory: 100 * Mi }, limits: { cpu: 60, memory: 60 * Mi } },
  ],
  [
    'partial pod requests: cpu from the containers',
    { limits: { cpu: '200m', memory: '200Mi' }, requests: { memory: '200Mi' } },
    [c('c1', { cpu: '100m', memory: '100Mi' }, { cpu: '100m', memory: '100Mi' }), c('c2')],
    { requests: { cpu: 100, memory: 200 * Mi }, limits: { cpu: 200, memory: 200 * Mi } },
  ],
];
for (const [name, resources, containers, want] of e2e)
  test(`podRequests and podLimits with pod-level resources: ${name}`, () => {
    const p = pod(containers, resources);
    assert.deepEqual({ requests: podRequests(p), limits: podLimits(p) }, want);
  });

test('pod-level defaulting as the apiserver: hugepages limits from the containers, requests from limits', () => {
  const p = pod([c('a', undefined, { 'hugepages-2Mi': '4Mi', memory: '10Mi' })], { limits: { memory: '64Mi' } });
  assert.deepEqual(podLevelResources(p), {
    requests: { memory: 10 * Mi, 'hugepages-2Mi': 4 * Mi },
    limits: { memory: 64 * Mi, 'hugepages-2Mi': 4 * Mi },
  });
  // No defaulting from an empty spec.resources, and none without one.
  assert.deepEqual(podLevelResources(pod([c('a', { cpu: '1' })], {})), { requests: {}, limits: {} });
  assert.equal(podLevelResources(pod([c('a')])), undefined);
});

test('which pods set pod-level resources (IsPodLevelResourcesSet, IsPodLevelRequestsSet)', () => {
  const cases: [string, Pod, boolean, boolean][] = [
    ['none', pod([c('a')]), false, false],
    ['empty', pod([c('a')], {}), false, false],
    ['unsupported only', pod([c('a')], { requests: { 'ephemeral-storage': '1Gi' } }), false, false],
    ['requests', pod([c('a')], { requests: { cpu: '1' } }), true, true],
    ['limits: requests defaulted', pod([c('a')], { limits: { memory: '1Gi' } }), true, true],
    ['hugepages', pod([c('a')], { requests: { 'hugepages-1Gi': '1Gi' } }), true, true],
  ];
  for (const [name, p, set, requests] of cases) {
    assert.equal(isPodLevelResourcesSet(p), set, name);
    assert.equal(isPodLevelRequestsSet(p), requests, name);
  }
});

test('podLimits: overhead only on a non-zero limit; unsupported pod-level resources ignored', () => {
  const p = pod(
    [c('a', undefined, { cpu: '1' })],
    { limits: { memory: '1Gi', 'ephemeral-storage': '1Gi' } },
    { overhead: { cpu: '100m', memory: '10Mi' } },
  );
  assert.deepEqual(podLimits(p), { cpu: 1100, memory: 2 ** 30 + 10 * Mi });
  assert.deepEqual(podLimits(p, { excludeOverhead: true, skipPodLevelResources: true }), { cpu: 1000 });
});

test('resourceRequest (GetResourceRequestQuantity): pod-level requests alone once set', () => {
  const p = pod([c('a', { cpu: '500m', memory: '1Gi' })], { requests: { cpu: '1' } }, { overhead: { cpu: '100m', memory: '10Mi' } });
  assert.equal(resourceRequest(p, 'cpu'), 1100);
  assert.equal(resourceRequest(p, 'memory'), 0);
  assert.equal(resourceRequest(pod([c('a', { memory: '1Gi' })]), 'memory'), 2 ** 30);
});

test('podCPUAndMemoryRequests in cores and bytes, for admission', () => {
  assert.deepEqual(podCPUAndMemoryRequests(pod([c('a', { cpu: '2', memory: '1Gi' })], { requests: { cpu: '250m' } })), {
    cpu: 0.25,
    memory: 2 ** 30,
  });
  assert.deepEqual(podCPUAndMemoryRequests(pod([c('a')])), { cpu: 0, memory: 0 });
});

test('podLimitsForContainers: only with pod-level resources set', () => {
  assert.equal(podLimitsForContainers(pod([c('a')])), undefined);
  assert.deepEqual(podLimitsForContainers(pod([c('a')], { limits: { cpu: '100m', memory: '64Mi' } })), { cpu: 100, memory: 64 * Mi });
  assert.deepEqual(podLimitsForContainers(pod([c('a')], { requests: { cpu: '100m' } })), { cpu: undefined, memory: undefined });
});
