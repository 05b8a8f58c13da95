import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { podPriority, podRequest } from './pods.ts';
import { isCriticalPod } from '../podutil/podutil.ts';

const c = (name: string, memory?: string, extra: Partial<Container> = {}): Container => ({
  name,
  ...(memory ? { resources: { requests: { memory } } } : {}),
  ...extra,
});

test('critical pods: static, mirror, system-critical priority', () => {
  const cases: [string, Pod, boolean][] = [
    ['plain', { metadata: { name: 'p' } }, false],
    ['from the apiserver', { metadata: { annotations: { 'kubernetes.io/config.source': 'api' } } }, false],
    ['static (file)', { metadata: { annotations: { 'kubernetes.io/config.source': 'file' } } }, true],
    ['static (http)', { metadata: { annotations: { 'kubernetes.io/config.source': 'http' } } }, true],
    ['mirror, even with an empty value', { metadata: { annotations: { 'kubernetes.io/config.mirror': '' } } }, true],
    ['system-cluster-critical', { spec: { containers: [], priority: 2_000_000_000 } }, true],
    ['system-node-critical', { spec: { containers: [], priority: 2_000_001_000 } }, true],
    ['high but user priority', { spec: { containers: [], priority: 1_999_999_999 } }, false],
  ];
  for (const [name, pod, want] of cases) assert.equal(isCriticalPod(pod), want, name);
  assert.equal(podPriority({}), 0);
  assert.equal(podPriority({ spec: { containers: [], priority: -5 } }), -5);
});

test('podRequest: containers summed, init containers and sidecars, limits standing in, overhead', () => {
  const Mi = 2 ** 20;
  const cases: [string, Pod['spec'], number][] = [
    ['none', { containers: [c('a')] }, 0],
    ['sum', { containers: [c('a', '100Mi'), c('b', '50Mi')] }, 150 * Mi],
    ['limit stands in for a missing request', { containers: [c('a', undefined, { resources: { limits: { memory: '64Mi' } } })] }, 64 * Mi],
    ['a big init container', { containers: [c('a', '100Mi')], initContainers: [c('i', '300Mi')] }, 300 * Mi],
    [
      'a sidecar adds to the sum',
      { containers: [c('a', '100Mi')], initContainers: [c('s', '50Mi', { restartPolicy: 'Always' })] },
      150 * Mi,
    ],
    [
      'an init container after a sidecar runs beside it',
      { containers: [c('a', '100Mi')], initContainers: [c('s', '50Mi', { restartPolicy: 'Always' }), c('i', '200Mi')] },
      250 * Mi,
    ],
    ['overhead on a non-zero request', { containers: [c('a', '100Mi')], overhead: { memory: '10Mi' } }, 110 * Mi],
    ['no overhead on a zero request', { containers: [c('a')], overhead: { memory: '10Mi' } }, 0],
  ];
  for (const [name, spec, want] of cases) assert.equal(podRequest({ spec }, 'memory'), want, name);
});

test('podRequest with pod-level resources: the pod-level request alone (GetResourceRequestQuantity)', () => {
  const Mi = 2 ** 20;
  const withPod = (resources: object, spec: Pod['spec'] = { containers: [c('a', '100Mi')] }): Pod => ({
    spec: { ...spec, resources } as Pod['spec'],
  });
  assert.equal(podRequest(withPod({ requests: { memory: '300Mi' } }), 'memory'), 300 * Mi);
  // A pod-level limit alone defaults the request to the containers' aggregate, as the apiserver does.
  assert.equal(podRequest(withPod({ limits: { memory: '300Mi' } }), 'memory'), 100 * Mi);
  // A resource not set at the pod level counts as nothing once pod-level resources are set.
  assert.equal(podRequest(withPod({ requests: { cpu: '1' } }), 'memory'), 0);
  assert.equal(podRequest(withPod({ requests: { cpu: '1' } }), 'ephemeral-storage'), 0);
  assert.equal(
    podRequest(withPod({ requests: { memory: '300Mi' } }, { containers: [c('a')], overhead: { memory: '10Mi' } }), 'memory'),
    310 * Mi,
  );
});
