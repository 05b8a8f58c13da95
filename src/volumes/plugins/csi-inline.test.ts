// The inline CSI plugin over the real CsiVolumes and the fake driver: publish, teardown, and a
// teardown by a restarted kubelet (a new host) from what is on disk; a PV's teardown leaves it alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { CSIDriver } from 'kubernetes-types/storage/v1.js';
import { CsiDrivers } from '../../csi/drivers.ts';
import { fakeDriver } from '../../csi/testing.ts';
import { CsiVolumes } from '../../csi/volumes.ts';
import type { Logger } from '../../log/log.ts';
import { csiPlugin } from './csi.ts';
import { csiInlinePlugin } from './csi-inline.ts';
import { VolumeManager } from '../volume-manager.ts';
import type { PersistentHost } from './persistent-host.ts';
import type { PodVolumeHost } from './pod-host.ts';

const quiet: Logger = { info() {}, v() {}, warn() {}, error() {} };
const DRIVER = 'hostpath.csi.k8s.io';
const pod: Pod = {
  metadata: { name: 'p', namespace: 'ns', uid: 'uid-1' },
  spec: {
    containers: [{ name: 'c', volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] }],
    volumes: [{ name: 'scratch', csi: { driver: DRIVER, volumeAttributes: { size: '1Mi' } } }],
  },
};

async function harness(t: { after(fn: () => void): void }, driverObject: CSIDriver | undefined) {
  const root = mkdtempSync(join(tmpdir(), 'csi-inline-'));
  const driver = await fakeDriver(join(root, 'csi.sock'));
  const drivers = new CsiDrivers();
  drivers.set(DRIVER, join(root, 'csi.sock'), [1, 0, 0]);
  t.after(() => {
    drivers.delete(DRIVER);
    driver.stop();
    rmSync(root, { recursive: true, force: true });
  });
  const host = () => {
    const csi = new CsiVolumes({ rootDir: root, nodeName: 'kts-w1', drivers, secret: async () => ({}), log: quiet });
    return {
      rootDir: root,
      log: quiet,
      csi: { csiDriver: async () => driverObject, publishInline: csi.publishInline.bind(csi), unpublish: csi.unpublish.bind(csi) },
      persistent: { csi, rootDir: root, log: quiet } as unknown as PersistentHost,
    } as unknown as PodVolumeHost & { persistent: PersistentHost };
  };
  const methods = () => driver.calls.map((c) => c.method).filter((m) => m !== 'NodeGetCapabilities');
  return { root, host, methods };
}

test('an inline csi volume is published, and unpublished at teardown, also by a restarted kubelet', async (t) => {
  const { root, host, methods } = await harness(t, { metadata: { name: DRIVER }, spec: { volumeLifecycleModes: ['Ephemeral'] } });
  const spec = { volume: pod.spec!.volumes![0]!, readOnly: false };
  assert.equal(csiInlinePlugin.canSupport(spec), true);
  const set = await csiInlinePlugin.setUp(host(), pod, spec);
  assert.deepEqual(set, { path: `${root}/pods/uid-1/volumes/kubernetes.io~csi/scratch/mount`, readOnly: false });
  assert.deepEqual(methods(), ['NodePublishVolume']);
  assert.deepEqual(
    csiInlinePlugin.reconstruct!(root, 'uid-1').map((v) => [v.specName, v.lifecycleMode]),
    [['scratch', 'Ephemeral']],
  );
  // A PV's teardown (the claim plugin's) leaves the inline volume alone; nor does it reconstruct it.
  const restarted = host();
  await csiPlugin.tearDown!(restarted.persistent, 'uid-1');
  assert.deepEqual(csiPlugin.reconstruct!(root, 'uid-1'), []);
  assert.deepEqual(methods(), ['NodePublishVolume']);
  await csiInlinePlugin.tearDown!(restarted, 'uid-1');
  assert.deepEqual(methods(), ['NodePublishVolume', 'NodeUnpublishVolume']);
  assert.equal(existsSync(`${root}/pods/uid-1/volumes/kubernetes.io~csi/scratch`), false);
  await csiInlinePlugin.tearDown!(restarted, 'uid-1');
  assert.deepEqual(methods(), ['NodePublishVolume', 'NodeUnpublishVolume'], 'done: nothing left');
});

test("an inline csi volume of a driver whose CSIDriver does not list Ephemeral is refused with upstream's message", async (t) => {
  const { host, methods } = await harness(t, { metadata: { name: DRIVER }, spec: {} });
  await assert.rejects(
    csiInlinePlugin.setUp(host(), pod, { volume: pod.spec!.volumes![0]!, readOnly: false }),
    /mounter\.SetupAt failed to check volume lifecycle mode: volume mode "Ephemeral" not supported by driver hostpath\.csi\.k8s\.io \(only supports \["Persistent"\]\)/,
  );
  assert.deepEqual(methods(), []);
});

test('requiresRepublish: the volume manager publishes an inline csi volume again once a refresh period, with fresh tokens', async (t) => {
  for (const requiresRepublish of [true, false]) {
    const driverObject: CSIDriver = {
      metadata: { name: DRIVER },
      spec: { volumeLifecycleModes: ['Ephemeral'], requiresRepublish, tokenRequests: [{ audience: 'a' }] },
    };
    const { root, methods } = await harness(t, driverObject);
    const drivers = new CsiDrivers();
    drivers.set(DRIVER, join(root, 'csi.sock'), [1, 0, 0]);
    t.after(() => drivers.delete(DRIVER));
    let issued = 0;
    const csi = new CsiVolumes({
      rootDir: root,
      nodeName: 'kts-w1',
      drivers,
      secret: async () => ({}),
      log: quiet,
      serviceAccountToken: async () => ({ token: `t${++issued}`, expirationTimestamp: '2026-12-03T09:00:00Z' }),
    });
    const vm = new VolumeManager({
      rootDir: root,
      sources: { configMap: async () => ({}), secret: async () => ({}), requestToken: async (_ns, _sa, r) => r },
      log: quiet,
      refreshMs: 1000,
      csi: { csiDriver: async () => driverObject, publishInline: csi.publishInline.bind(csi), unpublish: csi.unpublish.bind(csi) },
    });
    const publishes = () => methods().filter((m) => m === 'NodePublishVolume').length;
    assert.equal((await vm.setUp(pod, 10_000)).ready, true);
    assert.equal(publishes(), 1);
    await vm.setUp(pod, 10_500);
    assert.equal(publishes(), 1, 'not before a refresh period');
    await vm.setUp(pod, 11_000);
    assert.equal(publishes(), requiresRepublish ? 2 : 1, `requiresRepublish ${requiresRepublish}`);
    assert.equal(issued, requiresRepublish ? 2 : 1);
    await vm.tearDown('uid-1');
  }
});
