import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { fieldRefValue, formatMap, resourceFieldRefValue } from './downward.ts';

const pod: Pod = {
  metadata: { name: 'p', namespace: 'ns', uid: 'u1', labels: { b: '2', a: 'x"y' }, annotations: { k: 'v' } },
  spec: { nodeName: 'n1', containers: [{ name: 'c', resources: { limits: { memory: '64Mi' }, requests: { cpu: '250m' } } }] },
};
const ips = { podIPs: ['10.0.0.1'], hostIPs: ['192.0.2.1'] };

test('fieldRef values as upstream (maps sorted and quoted)', () => {
  const cases: [string, string][] = [
    ['metadata.name', 'p'],
    ['metadata.namespace', 'ns'],
    ['metadata.uid', 'u1'],
    ['metadata.labels', 'a="x\\"y"\nb="2"'],
    ['metadata.annotations', 'k="v"'],
    ["metadata.labels['b']", '2'],
    ["metadata.annotations['none']", ''],
    ['spec.nodeName', 'n1'],
  ];
  for (const [path, want] of cases) assert.deepEqual(fieldRefValue({ fieldPath: path }, pod, ips), { value: want }, path);
  assert.deepEqual(fieldRefValue({ fieldPath: 'spec.bogus' }, pod, ips), { error: 'field label not supported: spec.bogus' });
  assert.equal(formatMap({}), '');
});

test('resourceFieldRef: limits default to node allocatable; divisors round up', () => {
  const alloc = { cpu: '2', memory: '1Gi' };
  const cases: [string, string | undefined, string][] = [
    ['limits.memory', undefined, String(64 * 2 ** 20)],
    ['limits.memory', '1Mi', '64'],
    ['limits.cpu', undefined, '2'],
    ['limits.cpu', '1m', '2000'],
    ['requests.cpu', '1m', '250'],
    ['requests.cpu', undefined, '1'],
    ['requests.memory', undefined, '0'],
  ];
  for (const [resource, divisor, want] of cases)
    assert.deepEqual(
      resourceFieldRefValue({ containerName: 'c', resource, divisor }, pod, undefined, alloc),
      { value: want },
      `${resource}/${divisor}`,
    );
  assert.deepEqual(resourceFieldRefValue({ containerName: 'nope', resource: 'limits.cpu' }, pod, undefined, alloc), {
    error: 'container nope not found',
  });
  // The apiserver defaults an unset divisor to "0", which means 1.
  assert.deepEqual(resourceFieldRefValue({ containerName: 'c', resource: 'limits.cpu', divisor: '0' }, pod, undefined, alloc), {
    value: '2',
  });
});

// test/e2e/common/node/downwardapi.go, "Downward API tests for pod level resources".
test('resourceFieldRef: an unset container limit reads as the pod-level limit, then node allocatable', () => {
  const alloc = { cpu: '4', memory: '8Gi', 'ephemeral-storage': '10Gi' };
  const withPod = (limits: Record<string, string>, container: Pod['spec'] = { containers: [{ name: 'c' }] }): Pod => ({
    metadata: { name: 'p' },
    spec: { ...container, resources: { requests: { cpu: '250m', memory: '32Mi' }, limits } } as Pod['spec'],
  });
  const cases: [string, Pod, string, string][] = [
    ['pod cpu limit 1250m rounds up', withPod({ cpu: '1250m', memory: '64Mi' }), 'limits.cpu', '2'],
    ['pod memory limit', withPod({ cpu: '1250m', memory: '64Mi' }), 'limits.memory', String(64 * 2 ** 20)],
    ['no pod memory limit: node allocatable', withPod({ cpu: '1250m' }), 'limits.memory', String(8 * 2 ** 30)],
    ['a zero pod limit is none', withPod({ cpu: '0' }), 'limits.cpu', '4'],
    [
      'ephemeral-storage is not a pod-level resource',
      withPod({ 'ephemeral-storage': '1Gi' }),
      'limits.ephemeral-storage',
      String(10 * 2 ** 30),
    ],
    [
      "the container's own limit wins",
      withPod({ cpu: '1250m' }, { containers: [{ name: 'c', resources: { limits: { cpu: '500m' } } }] }),
      'limits.cpu',
      '1',
    ],
    ['requests never fall back', withPod({ cpu: '1250m', memory: '64Mi' }), 'requests.cpu', '0'],
  ];
  for (const [name, p, resource, want] of cases)
    assert.deepEqual(resourceFieldRefValue({ resource }, p, p.spec!.containers[0], alloc), { value: want }, name);
});
