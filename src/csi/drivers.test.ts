// The CSI registration handler against a fake driver on a unix socket and a recording node info manager.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import type { Logger } from '../log/log.ts';
import type { NodeInfo } from './client.ts';
import { CsiDrivers, CsiRegistrationHandler, highestSupportedVersion } from './drivers.ts';
import { fakeDriver } from './testing.ts';
import type { NodeInfoManager } from './node-info-manager.ts';

const quiet: Logger = { info() {}, v() {}, warn() {}, error() {} };

test('highestSupportedVersion', () => {
  const cases: [string[], string | RegExp][] = [
    [['1.0.0'], '1.0.0'],
    [['v1.0.0'], '1.0.0'],
    [['0.3.0', '1.0.0', '1.2.0'], '1.2.0'],
    [['1.2.0', '1.10.0'], '1.10.0'],
    [['1.0.0', '2.0.0'], '1.0.0'],
    [['1.0.0-rc1'], '1.0.0'],
    [['1.5'], '1.5'],
    [[], /empty array/],
    [['0.3.0'], /must be v1\.x/],
    [['2.0.0'], /could not find a highest supported version/],
    [['1'], /illegal version string/],
    [['01.0.0'], /zero-prefixed/],
    [['x.y'], /could not parse "x\.y" as version/],
  ];
  for (const [versions, want] of cases) {
    const name = JSON.stringify(versions);
    if (typeof want === 'string') assert.equal(highestSupportedVersion(versions).join('.'), want, name);
    else assert.throws(() => highestSupportedVersion(versions), want, name);
  }
});

function recordingNodeInfo(fail?: Error) {
  const calls: string[] = [];
  const nodeInfo: NodeInfoManager = {
    initialize: async () => {},
    installDriver: async (driver: string, info: NodeInfo) => {
      calls.push(`install ${driver} ${JSON.stringify(info)}`);
      if (fail) throw fail;
    },
    updateDriver: async (driver: string, info: NodeInfo) => void calls.push(`update ${driver} ${JSON.stringify(info)}`),
    uninstallDriver: async (driver: string) => void calls.push(`uninstall ${driver}`),
  };
  return { nodeInfo, calls };
}

test('register, refuse a second registration of the same version, deregister', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'csi-drivers-'));
  const socket = join(dir, 'csi.sock');
  const driver = await fakeDriver(socket);
  const drivers = new CsiDrivers();
  const { nodeInfo, calls } = recordingNodeInfo();
  const h = new CsiRegistrationHandler({ drivers, nodeInfo, log: quiet });
  t.after(() => {
    drivers.delete('hostpath.csi.k8s.io');
    driver.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  assert.throws(
    () => h.validatePlugin('hostpath.csi.k8s.io', socket, ['0.3.0']),
    /validation failed for CSI Driver hostpath\.csi\.k8s\.io/,
  );
  h.validatePlugin('hostpath.csi.k8s.io', socket, ['1.0.0']);
  await h.registerPlugin('hostpath.csi.k8s.io', socket, ['1.0.0']);
  assert.deepEqual(calls, [
    'install hostpath.csi.k8s.io {"nodeId":"kts-w1","maxVolumesPerNode":100,"topology":{"topology.hostpath.csi/node":"kts-w1"}}',
  ]);
  assert.deepEqual(drivers.get('hostpath.csi.k8s.io')?.highestSupportedVersion, [1, 0, 0]);
  assert.equal((await drivers.client('hostpath.csi.k8s.io').getPluginInfo()).name, 'hostpath.csi.k8s.io');

  // The same name again is refused unless it speaks a higher version.
  assert.throws(
    () => h.validatePlugin('hostpath.csi.k8s.io', socket, ['1.0.0']),
    /already registered with a higher supported version: "1\.0\.0"/,
  );
  h.validatePlugin('hostpath.csi.k8s.io', socket, ['1.1.0']);

  h.deRegisterPlugin('hostpath.csi.k8s.io', socket);
  assert.throws(() => drivers.client('hostpath.csi.k8s.io'), /not found in the list of registered CSI drivers/);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(calls.at(-1), 'uninstall hostpath.csi.k8s.io');
});

test('a driver whose NodeGetInfo fails is unregistered again', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'csi-drivers-'));
  const socket = join(dir, 'csi.sock');
  const driver = await fakeDriver(socket, { NodeGetInfo: { code: status.INTERNAL, details: 'no node id yet' } });
  const drivers = new CsiDrivers();
  const { nodeInfo, calls } = recordingNodeInfo();
  t.after(() => {
    driver.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const h = new CsiRegistrationHandler({ drivers, nodeInfo, log: quiet });
  await assert.rejects(h.registerPlugin('hostpath.csi.k8s.io', socket, ['1.0.0']), /NodeGetInfo .* INTERNAL: no node id yet/);
  assert.equal(drivers.get('hostpath.csi.k8s.io'), undefined);
  assert.deepEqual(calls, ['uninstall hostpath.csi.k8s.io']);
});

test('a driver whose node info cannot be published is unregistered again', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'csi-drivers-'));
  const socket = join(dir, 'csi.sock');
  const driver = await fakeDriver(socket);
  const drivers = new CsiDrivers();
  const { nodeInfo, calls } = recordingNodeInfo(new Error('apiserver down'));
  t.after(() => {
    driver.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const h = new CsiRegistrationHandler({ drivers, nodeInfo, log: quiet });
  await assert.rejects(h.registerPlugin('hostpath.csi.k8s.io', socket, ['1.0.0']), /apiserver down/);
  assert.equal(drivers.get('hostpath.csi.k8s.io'), undefined);
  assert.equal(calls.at(-1), 'uninstall hostpath.csi.k8s.io');
});
