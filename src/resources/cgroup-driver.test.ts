import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cgroupDriverInEffect, driverUnusable, type RuntimeConfigAnswer } from './cgroup-driver.ts';

test("cgroupDriverInEffect: the runtime's driver when it says one, else the config's, as upstream's getCgroupDriverFromCRI", () => {
  const rows: [string, 'cgroupfs' | 'systemd', RuntimeConfigAnswer, unknown][] = [
    ['runtime says cgroupfs, config systemd', 'systemd', { linux: { cgroupDriver: 'CGROUPFS' } }, { driver: 'cgroupfs', from: 'runtime' }],
    ['runtime says systemd, config cgroupfs', 'cgroupfs', { linux: { cgroupDriver: 'SYSTEMD' } }, { driver: 'systemd', from: 'runtime' }],
    [
      'UNIMPLEMENTED (containerd 1.6): the config',
      'systemd',
      { unimplemented: true },
      { driver: 'systemd', from: 'config', criLosingSupport: '1.37.0' },
    ],
    ['no Linux part: the config, not proto3 default SYSTEMD', 'cgroupfs', { linux: undefined }, { driver: 'cgroupfs', from: 'config' }],
    ['an unknown driver', 'cgroupfs', { linux: { cgroupDriver: '7' } }, { error: 'runtime returned an unknown cgroup driver 7' }],
    [
      'another error',
      'cgroupfs',
      { error: new Error('connection refused') },
      { error: "cannot read the container runtime's cgroup driver (CRI RuntimeConfig): Error: connection refused" },
    ],
  ];
  for (const [name, configured, answer, want] of rows) {
    const got = cgroupDriverInEffect(configured, answer);
    const { log: _, ...decision } = got as { log?: string };
    assert.deepEqual(decision, want, name);
  }
  assert.match(
    (cgroupDriverInEffect('cgroupfs', { unimplemented: true }) as { log?: string }).log ?? '',
    /Falling back to using cgroupDriver from kubelet config/,
  );
  assert.match(
    (cgroupDriverInEffect('cgroupfs', { linux: { cgroupDriver: 'CGROUPFS' } }) as { log?: string }).log ?? '',
    /Using cgroup driver setting received from the CRI runtime/,
  );
});

test('driverUnusable: cgroupfs anywhere; systemd only where systemd runs, else one line naming why', () => {
  assert.equal(driverUnusable('cgroupfs', false), undefined);
  assert.equal(driverUnusable('systemd', true), undefined);
  assert.match(driverUnusable('systemd', false) ?? '', /systemd cgroup driver is in effect, but systemd is not running on this host/);
});
