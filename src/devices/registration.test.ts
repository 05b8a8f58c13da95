import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isExtendedResourceName, validateRegistration } from './registration.ts';

test('extended resource names as upstream', () => {
  const cases: [string, boolean][] = [
    ['example.com/resource', true],
    ['nvidia.com/gpu', true],
    ['cpu', false],
    ['kubernetes.io/foo', false],
    ['x.kubernetes.io/foo', false],
    ['requests.example.com/x', false],
    ['Example.com/x', false],
    ['example.com/-x', false],
    ['example.com/a/b', false],
    [`example.com/${'a'.repeat(64)}`, false],
  ];
  for (const [name, want] of cases) assert.equal(isExtendedResourceName(name), want, name);
});

test('register requests', () => {
  const dir = '/var/lib/kubelet/device-plugins';
  const ok = { version: 'v1beta1', endpoint: 'plugin.sock', resourceName: 'example.com/resource' };
  assert.deepEqual(validateRegistration(ok, dir), { socket: '/var/lib/kubelet/device-plugins/plugin.sock' });
  assert.deepEqual(validateRegistration({ ...ok, version: 'v1alpha' }, dir), {
    error: 'requested API version "v1alpha" is not supported by kubelet. Supported version is ["v1beta1"]',
  });
  assert.deepEqual(validateRegistration({ ...ok, resourceName: 'cpu' }, dir), { error: 'the ResourceName "cpu" is invalid' });
  for (const endpoint of ['', '../x.sock', '.'])
    assert.match(
      (validateRegistration({ ...ok, endpoint }, dir) as { error: string }).error,
      /not a socket in the device plugin directory/,
      endpoint,
    );
});
