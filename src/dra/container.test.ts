import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { ClaimInfo } from './claims.ts';
import { cdiDevicesOf, containerClaimRequests, withClaimDevices } from './container.ts';

const pod = {
  metadata: { name: 'p', namespace: 'ns', uid: 'pod-uid' },
  spec: {
    containers: [],
    resourceClaims: [
      { name: 'gpus', resourceClaimTemplateName: 'two-gpus' },
      { name: 'shared', resourceClaimName: 'shared-nic' },
      { name: 'none', resourceClaimTemplateName: 't' },
    ],
  },
  status: {
    resourceClaimStatuses: [{ name: 'gpus', resourceClaimName: 'p-gpus-x7' }, { name: 'none' }],
    extendedResourceClaimStatus: {
      resourceClaimName: 'p-extended-resources-q2',
      requestMappings: [
        { containerName: 'app', resourceName: 'example.com/gpu', requestName: 'container-0-request-0' },
        { containerName: 'app', resourceName: 'deviceclass.resource.kubernetes.io/fpga', requestName: 'container-0-request-1' },
        { containerName: 'other', resourceName: 'example.com/gpu', requestName: 'container-1-request-0' },
      ],
    },
  },
} as unknown as Pod;

const container = (claims: object[], requests: Record<string, string> = {}) =>
  ({ name: 'app', resources: { claims, requests } }) as Container;

test("a container's claims and requests, by ResourceClaim name (upstream GetResources)", () => {
  const cases: [string, Container, [string, string[]][]][] = [
    ['nothing', container([]), []],
    ['a whole claim', container([{ name: 'gpus' }]), [['p-gpus-x7', ['']]]],
    [
      'requests of claims, in the container order',
      container([
        { name: 'shared', request: 'nic' },
        { name: 'gpus', request: 'a' },
        { name: 'shared', request: 'vf' },
      ]),
      [
        ['shared-nic', ['nic', 'vf']],
        ['p-gpus-x7', ['a']],
      ],
    ],
    ['no claim generated, unknown pod claim', container([{ name: 'none' }, { name: 'missing' }]), []],
    [
      'extended resources backed by DRA, asked for and non-zero',
      container([], { 'example.com/gpu': '1', 'deviceclass.resource.kubernetes.io/fpga': '0', cpu: '1' }),
      [['p-extended-resources-q2', ['container-0-request-0']]],
    ],
  ];
  for (const [what, c, want] of cases) assert.deepEqual([...containerClaimRequests(pod, c)], want, what);
});

test('CDI devices of a claim for a request (upstream cdiDevicesAsList)', () => {
  const info: ClaimInfo = {
    claimUID: 'u',
    claimName: 'c',
    namespace: 'ns',
    podUIDs: new Set(),
    prepared: true,
    drivers: new Map([
      [
        'gpu.example.com',
        [
          { poolName: 'n', deviceName: 'gpu-0', requestNames: ['a'], cdiDeviceIds: ['example.com/gpu=gpu-0'] },
          { poolName: 'n', deviceName: 'gpu-1', requestNames: ['b'], cdiDeviceIds: ['example.com/gpu=gpu-1', 'example.com/gpu=common'] },
        ],
      ],
      ['net.example.com', [{ poolName: 'n', deviceName: 'eth1', requestNames: [], cdiDeviceIds: ['example.com/net=eth1'] }]],
    ]),
  };
  const cases: [string, string[]][] = [
    ['', ['example.com/gpu=gpu-0', 'example.com/gpu=gpu-1', 'example.com/gpu=common', 'example.com/net=eth1']],
    ['a', ['example.com/gpu=gpu-0', 'example.com/net=eth1']],
    ['b', ['example.com/gpu=gpu-1', 'example.com/gpu=common', 'example.com/net=eth1']],
    ['c', ['example.com/net=eth1']],
  ];
  for (const [request, want] of cases) assert.deepEqual(cdiDevicesOf(info, request), want, request);
});

test("the claims' CDI devices go ahead of the device plugins'", () => {
  const plugins = { envs: [{ name: 'A', value: '1' }], mounts: [], devices: [], annotations: {}, cdiDevices: ['vendor.com/dp=1'] };
  assert.equal(withClaimDevices([], undefined), undefined);
  assert.equal(withClaimDevices([], plugins), plugins);
  assert.deepEqual(withClaimDevices(['example.com/gpu=gpu-0'], undefined), {
    envs: [],
    mounts: [],
    devices: [],
    annotations: {},
    cdiDevices: ['example.com/gpu=gpu-0'],
  });
  assert.deepEqual(withClaimDevices(['example.com/gpu=gpu-0'], plugins), {
    ...plugins,
    cdiDevices: ['example.com/gpu=gpu-0', 'vendor.com/dp=1'],
  });
});
