import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import type { ClaimInfo } from './claims.ts';
import {
  deviceHealth,
  type HealthInfo,
  healthOf,
  podsUsing,
  type ReportedHealth,
  updateHealth,
  withAllocatedResourcesStatus,
} from './health.ts';

const report = (device: string, health: string, message = '', timeout = '0'): ReportedHealth => ({
  device: { poolName: 'pool', deviceName: device },
  health,
  healthCheckTimeoutSeconds: timeout,
  message,
});

test('deviceHealth maps the enum, the default timeout and a message over 1024 bytes as upstream', () => {
  const cases: [ReportedHealth, { health: string; message: string; timeoutMs: number }][] = [
    [report('d', 'HEALTHY', 'ok'), { health: 'Healthy', message: 'ok', timeoutMs: 30_000 }],
    [report('d', 'UNHEALTHY', '', '10'), { health: 'Unhealthy', message: '', timeoutMs: 10_000 }],
    [report('d', 'UNKNOWN', '', '-5'), { health: 'Unknown', message: '', timeoutMs: 30_000 }],
    [report('d', 'HEALTHY', 'x'.repeat(1030)), { health: 'Healthy', message: `${'x'.repeat(1021)}...`, timeoutMs: 30_000 }],
  ];
  for (const [r, want] of cases) {
    const { at: _, ...got } = deviceHealth(r, 1000);
    assert.deepEqual(got, want);
  }
});

test('updateHealth reports what changed and times out devices no longer reported', () => {
  const info: HealthInfo = new Map();
  assert.deepEqual(updateHealth(info, 'drv', [report('a', 'HEALTHY', 'fine'), report('b', 'HEALTHY')], 0), ['pool/a', 'pool/b']);
  // The same again: nothing changed.
  assert.deepEqual(updateHealth(info, 'drv', [report('a', 'HEALTHY', 'fine')], 1000), []);
  // A new message is a change; b, last reported 31 s ago, is Unknown now.
  assert.deepEqual(updateHealth(info, 'drv', [report('a', 'HEALTHY', 'warm')], 31_000), ['pool/a', 'pool/b']);
  assert.deepEqual(healthOf(info, 'drv', 'pool', 'b', 31_000), { health: 'Unknown', message: '' });
  assert.deepEqual(healthOf(info, 'drv', 'pool', 'a', 31_000), { health: 'Healthy', message: 'warm' });
  // A report older than its timeout, and a device or driver never reported: Unknown.
  assert.deepEqual(healthOf(info, 'drv', 'pool', 'a', 62_000), { health: 'Unknown', message: '' });
  assert.deepEqual(healthOf(info, 'drv', 'pool', 'c', 31_000), { health: 'Unknown', message: '' });
  assert.deepEqual(healthOf(info, 'other', 'pool', 'a', 31_000), { health: 'Unknown', message: '' });
});

const claim = (name: string, pods: string[], devices: { device: string; requests?: string[]; cdi?: string[] }[]): ClaimInfo => ({
  claimUID: `uid-${name}`,
  claimName: name,
  namespace: 'ns',
  podUIDs: new Set(pods),
  drivers: new Map([
    ['drv', devices.map((d) => ({ poolName: 'pool', deviceName: d.device, requestNames: d.requests ?? [], cdiDeviceIds: d.cdi ?? [] }))],
  ]),
  prepared: true,
});

test('podsUsing finds the pods of the claims holding a changed device', () => {
  const claims = [claim('c1', ['p1', 'p2'], [{ device: 'a' }]), claim('c2', ['p3'], [{ device: 'b' }])];
  assert.deepEqual([...podsUsing(claims, 'drv', ['pool/a'])], ['p1', 'p2']);
  assert.deepEqual([...podsUsing(claims, 'drv', ['pool/c'])], []);
  assert.deepEqual([...podsUsing(claims, 'other', ['pool/a'])], []);
});

test('withAllocatedResourcesStatus lists each claimed device with its health, by claim and by request', () => {
  const pod = {
    metadata: { name: 'p', namespace: 'ns', uid: 'p1' },
    spec: {
      resourceClaims: [{ name: 'gpu', resourceClaimName: 'c1' }],
      containers: [
        { name: 'all', resources: { claims: [{ name: 'gpu' }] } },
        { name: 'one', resources: { claims: [{ name: 'gpu', request: 'r1' }] } },
        { name: 'none' },
      ],
    },
  } as unknown as Pod;
  const status: PodStatus = {
    phase: 'Running',
    containerStatuses: ['all', 'one', 'none'].map((name) => ({ name, image: 'i', imageID: '', ready: true, restartCount: 0 })),
  };
  const info = claim(
    'c1',
    ['p1'],
    [
      { device: 'a', requests: ['r1'], cdi: ['vendor.com/gpu=a'] },
      { device: 'b', requests: ['r2'] },
    ],
  );
  const health = (_: string, __: string, device: string) =>
    device === 'a' ? { health: 'Unhealthy' as const, message: 'ECC errors' } : { health: 'Healthy' as const, message: '' };
  const got = withAllocatedResourcesStatus(pod, status, (ns, name) => (ns === 'ns' && name === 'c1' ? info : undefined), health);
  const of = (name: string) =>
    (got.containerStatuses!.find((c) => c.name === name) as { allocatedResourcesStatus?: unknown }).allocatedResourcesStatus;
  assert.deepEqual(of('all'), [
    {
      name: 'claim:gpu',
      resources: [
        { resourceID: 'vendor.com/gpu=a', health: 'Unhealthy', message: 'ECC errors' },
        { resourceID: 'drv/pool/b', health: 'Healthy' },
      ],
    },
  ]);
  assert.deepEqual(of('one'), [
    { name: 'claim:gpu/r1', resources: [{ resourceID: 'vendor.com/gpu=a', health: 'Unhealthy', message: 'ECC errors' }] },
  ]);
  assert.equal(of('none'), undefined);
  // A claim not prepared here (yet, or any more): no entry.
  const without = withAllocatedResourcesStatus(pod, status, () => undefined, health);
  assert.equal((without.containerStatuses![0] as { allocatedResourcesStatus?: unknown }).allocatedResourcesStatus, undefined);
});
