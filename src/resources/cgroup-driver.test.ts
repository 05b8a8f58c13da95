import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cgroupDriverInEffect, unsupportedDriver, type RuntimeConfigAnswer } from './cgroup-driver.ts';

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

test('unsupportedDriver: cgroupfs runs; systemd stops the start with a line saying where it came from', () => {
  assert.equal(unsupportedDriver({ driver: 'cgroupfs', from: 'runtime' }), undefined);
  assert.match(
    unsupportedDriver({ driver: 'systemd', from: 'runtime' }) ?? '',
    /container runtime uses the systemd cgroup driver.*SystemdCgroup = true/,
  );
  assert.match(
    unsupportedDriver({ driver: 'systemd', from: 'config' }) ?? '',
    /cgroupDriver is systemd and the container runtime does not say/,
  );
});
