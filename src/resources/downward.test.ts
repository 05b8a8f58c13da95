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
