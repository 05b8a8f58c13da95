// FlexVolumes over real shell-script drivers in a temp volumePluginDir (modeled on upstream's e2e
// drivers test/e2e/testing-manifests/flexvolume/dummy and dummy-attachable, without their tmpfs
// mounts): the calls each driver gets, with their arguments, the pod's directory, and the teardown
// by a restarted kubelet (new FlexVolumes over the same root) from what is on disk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod, Secret, Volume } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../../../log/log.ts';
import { VolumeManager } from '../../volume-manager.ts';
import { FlexDrivers } from './drivers.ts';
import { type AttachedVolume, FlexVolumes, flexDriverOfPluginDir, flexVolumesOnDisk } from './flex-volumes.ts';
import { flexPersistentPlugin, flexPodPlugin } from './plugins.ts';
import type { PersistentHost } from '../persistent-host.ts';

const quiet: Logger = { info() {}, v() {}, warn() {}, error() {} };

// Logs each call's arguments, tab-separated, to $FLEX_TEST_LOG (outside the driver's directory:
// a file made there would be a new version of the driver).
const LOG_CALL = `printf '%s\\t' "$@" >> "$FLEX_TEST_LOG"; echo >> "$FLEX_TEST_LOG"`;

/** A driver as upstream's dummy, mounting nothing: its mount makes the directory and index.html. */
const NON_ATTACHABLE = `#!/bin/sh
${LOG_CALL}
op=$1; shift
case "$op" in
  init) echo '{"status":"Success","capabilities":{"attach":false,"selinuxRelabel":false}}' ;;
  mount)
    case "$2" in *'"fail":"yes"'*) echo '{"status":"Failure","message":"the backend refused"}'; exit 1 ;; esac
    mkdir -p "$1" && echo "Hello from flexvolume!" > "$1/index.html" && echo '{"status":"Success"}' ;;
  unmount) rm -f "$1/index.html"; echo '{"status":"Success"}' ;;
  *) echo '{"status":"Not supported"}' ;;
esac
`;

/** As upstream's dummy-attachable: init declares no attach (so attachable), the pod's mount is left to the kubelet's bind mount. */
const ATTACHABLE = `#!/bin/sh
${LOG_CALL}
op=$1; shift
case "$op" in
  init) echo '{"status":"Success"}' ;;
  waitforattach) echo "{\\"status\\":\\"Success\\",\\"device\\":\\"$1\\"}" ;;
  mountdevice) mkdir -p "$1" && echo "Hello from flexvolume!" > "$1/index.html" && echo '{"status":"Success"}' ;;
  unmountdevice) rm -f "$1/index.html"; echo '{"status":"Success"}' ;;
  *) echo '{"status":"Not supported"}' ;;
esac
`;

function harness(t: { after(fn: () => void): void }) {
  const root = mkdtempSync(join(tmpdir(), 'flex-'));
  const pluginDir = join(root, 'exec');
  const log = join(root, 'calls.log');
  const savedLog = process.env.FLEX_TEST_LOG;
  process.env.FLEX_TEST_LOG = log;
  t.after(() => {
    process.env.FLEX_TEST_LOG = savedLog;
    rmSync(root, { recursive: true, force: true });
  });
  const install = (vendorDriver: string, script: string) => {
    const driver = vendorDriver.split('~').pop()!;
    mkdirSync(join(pluginDir, vendorDriver), { recursive: true });
    writeFileSync(join(pluginDir, vendorDriver, driver), script);
    chmodSync(join(pluginDir, vendorDriver, driver), 0o755);
  };
  /** The calls the drivers got since the last look, each as its arguments. */
  const calls = () => {
    const lines = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
    writeFileSync(log, '');
    return lines.map((l) => l.replace(/\t$/, '').split('\t'));
  };
  const secrets = new Map<string, Secret>();
  const bound: [string, string][] = [];
  const cleaned: string[] = [];
  const attached: AttachedVolume[] = [];
  let inUseChanges = 0;
  const mountPoints = new Set<string>();
  /** A kubelet: a new one over the same root is a restarted one. */
  const kubelet = (o: { controllerAttachDetach?: boolean } = {}) =>
    new FlexVolumes({
      ...o,
      nodeName: 'node-1',
      rootDir: root,
      drivers: new FlexDrivers({ dir: pluginDir, log: quiet }),
      secret: async (ns, name) => {
        const s = secrets.get(`${ns}/${name}`);
        if (!s) throw new Error(`secrets "${name}" not found`);
        return s;
      },
      mounts: {
        // The kubelet's bind mount of the device mount (mounterDefaults.SetUpAt), recorded; the directory made as mount would.
        bindMount: async (source, target) => {
          bound.push([source, target]);
          mkdirSync(target, { recursive: true });
          mountPoints.add(target);
        },
        isMountPoint: (dir) => mountPoints.has(dir),
        cleanupMountPoint: async (dir) => {
          cleaned.push(dir);
          mountPoints.delete(dir);
          rmdirSync(dir);
        },
      },
      volumesAttached: () => attached,
      inUseChanged: () => inUseChanges++,
      log: quiet,
    });
  return { root, pluginDir, install, calls, secrets, bound, cleaned, attached, mountPoints, kubelet, inUseChanges: () => inUseChanges };
}

const podWith = (uid: string, volume: Volume, over: Partial<Pod['spec']> = {}): Pod => ({
  metadata: { name: `pod-${uid}`, namespace: 'ns1', uid },
  spec: {
    serviceAccountName: 'default',
    containers: [{ name: 'c', volumeMounts: [{ name: volume.name, mountPath: '/data' }] }],
    volumes: [volume],
    ...over,
  },
});
const specOf = (pod: Pod) => ({ volume: pod.spec!.volumes![0]!, readOnly: false });

test('a non-attachable driver: mount with the options JSON, unmount at teardown, also by a restarted kubelet', async (t) => {
  const h = harness(t);
  h.install('k8s~test', NON_ATTACHABLE);
  h.secrets.set('ns1/creds', { type: 'k8s/test', data: { user: Buffer.from('admin').toString('base64') } });
  const flex = h.kubelet();
  const pod = podWith('uid-1', {
    name: 'vol',
    flexVolume: { driver: 'k8s/test', fsType: 'ext4', secretRef: { name: 'creds' }, options: { size: '1Gi' } },
  });
  const dir = `${h.root}/pods/uid-1/volumes/k8s~test/vol`;
  // The driver's selinuxRelabel: false leaves the mount unlabeled.
  assert.deepEqual(await flex.setUp(pod, specOf(pod)), { path: dir, readOnly: false });
  assert.equal(readFileSync(`${dir}/index.html`, 'utf8'), 'Hello from flexvolume!\n');
  const [init, mount] = h.calls();
  assert.deepEqual(init, ['init']);
  assert.deepEqual(mount!.slice(0, 2), ['mount', dir]);
  assert.deepEqual(JSON.parse(mount![2]!), {
    'kubernetes.io/fsType': 'ext4',
    'kubernetes.io/pod.name': 'pod-uid-1',
    'kubernetes.io/pod.namespace': 'ns1',
    'kubernetes.io/pod.uid': 'uid-1',
    'kubernetes.io/pvOrVolumeName': 'vol',
    'kubernetes.io/readwrite': 'rw',
    'kubernetes.io/secret/user': Buffer.from('admin').toString('base64'),
    'kubernetes.io/serviceAccount.name': 'default',
    size: '1Gi',
  });
  // Not attachable: never in volumesInUse.
  assert.deepEqual(flex.volumesInUse(), []);
  assert.deepEqual(flexVolumesOnDisk(h.root, 'uid-1'), [{ specName: 'vol', driverName: 'k8s/test', volumeHandle: 'vol' }]);

  // A restarted kubelet finds the volume on disk and has its driver unmount it.
  await h.kubelet().tearDown('uid-1');
  assert.deepEqual(h.calls(), [['init'], ['unmount', dir]]);
  assert.equal(existsSync(dir), false);
  await h.kubelet().tearDown('uid-1');
  assert.deepEqual(h.calls(), [], 'nothing left to tear down');
});

test("a driver's failure is the set-up's error, its directory removed; a driver not installed, a secret of the wrong type, refused", async (t) => {
  const h = harness(t);
  h.install('k8s~test', NON_ATTACHABLE);
  const flex = h.kubelet();
  const failing = podWith('uid-1', { name: 'vol', flexVolume: { driver: 'k8s/test', options: { fail: 'yes' } } });
  await assert.rejects(flex.setUp(failing, specOf(failing)), /^Error: mount command failed, status: Failure, reason: the backend refused$/);
  assert.equal(existsSync(`${h.root}/pods/uid-1/volumes/k8s~test/vol`), false);

  const missing = podWith('uid-2', { name: 'vol', flexVolume: { driver: 'k8s/absent' } });
  await assert.rejects(
    flex.setUp(missing, specOf(missing)),
    /failed to get Plugin from volumeSpec for volume "vol" err=no volume plugin matched \(no driver directory k8s~absent in .*\/exec\)/,
  );
  h.secrets.set('ns1/opaque', { type: 'Opaque', data: {} });
  const opaque = podWith('uid-3', { name: 'vol', flexVolume: { driver: 'k8s/test', secretRef: { name: 'opaque' } } });
  await assert.rejects(flex.setUp(opaque, specOf(opaque)), /couldn't get secret ns1\/opaque err: cannot get secret of type k8s\/test/);
  assert.equal(existsSync(`${h.root}/pods/uid-3/volumes/k8s~test/vol`), false);
});

test('an attachable driver: volumesInUse, the attachment, waitforattach, mountdevice once, bind mounts; unmountdevice after the last pod', async (t) => {
  const h = harness(t);
  h.install('k8s~attach', ATTACHABLE);
  const flex = h.kubelet();
  const volume: Volume = { name: 'vol', flexVolume: { driver: 'k8s/attach' } };
  const [pod1, pod2] = [podWith('uid-1', volume), podWith('uid-2', volume)];
  const device = `${h.root}/plugins/kubernetes.io/flexvolume/k8s/attach/mounts/vol`;
  const dir = (uid: string) => `${h.root}/pods/${uid}/volumes/k8s~attach/vol`;

  // upstream's VerifyControllerAttachedVolume: in volumesInUse first, then attached by the controller.
  await assert.rejects(flex.setUp(pod1, specOf(pod1)), /Volume has not been added to the list of VolumesInUse in the node's volume status/);
  assert.deepEqual(flex.volumesInUse(), ['k8s/attach/vol']);
  assert.equal(h.inUseChanges(), 1);
  flex.markReportedInUse(['k8s/attach/vol']);
  await assert.rejects(flex.setUp(pod1, specOf(pod1)), /Volume not attached according to node status/);
  h.attached.push({ name: 'k8s/attach/vol', devicePath: 'foo' });
  // Managed (not read-only) with the default selinuxRelabel: relabeled.
  assert.deepEqual(await flex.setUp(pod1, specOf(pod1)), { path: dir('uid-1'), readOnly: false, selinuxRelabel: true });
  const opts = '{"kubernetes.io/fsType":"","kubernetes.io/pvOrVolumeName":"vol","kubernetes.io/readwrite":"rw"}';
  const calls = h.calls();
  assert.deepEqual(
    calls.map((c) => c.slice(0, c[0] === 'mount' ? 2 : undefined)),
    [['init'], ['waitforattach', 'foo', opts], ['mountdevice', device, 'foo', opts], ['mount', dir('uid-1')]],
  );
  assert.equal(readFileSync(`${device}/index.html`, 'utf8'), 'Hello from flexvolume!\n');
  // mount "Not supported": the device mount bind-mounted into the pod (mounterDefaults.SetUpAt).
  assert.deepEqual(h.bound, [[device, dir('uid-1')]]);
  h.mountPoints.add(device);

  // A second pod: no second mountdevice, and mount is known to be unsupported.
  await flex.setUp(pod2, specOf(pod2));
  assert.deepEqual(h.calls(), [['waitforattach', 'foo', opts]]);
  assert.deepEqual(h.bound[1], [device, dir('uid-2')]);

  // A restarted kubelet: the volume is in use by what is on disk; the first pod's teardown leaves the device mounted.
  const restarted = h.kubelet();
  assert.deepEqual(restarted.volumesInUse(), ['k8s/attach/vol']);
  await restarted.tearDown('uid-1');
  assert.deepEqual(h.calls(), [['init'], ['unmount', dir('uid-1')]]);
  assert.deepEqual(h.cleaned, [dir('uid-1')], 'unmount "Not supported": CleanupMountPoint');
  assert.deepEqual(restarted.volumesInUse(), ['k8s/attach/vol']);
  // The last pod's teardown unmounts the device, and the volume leaves volumesInUse.
  await restarted.tearDown('uid-2');
  assert.deepEqual(h.calls(), [['unmountdevice', device]]);
  assert.deepEqual(h.cleaned, [dir('uid-1'), dir('uid-2')]);
  assert.equal(existsSync(device), false);
  assert.deepEqual(restarted.volumesInUse(), []);
});

test('enableControllerAttachDetach false: the kubelet runs attach once and detach after the last unmountdevice', async (t) => {
  const h = harness(t);
  h.install(
    'k8s~attach',
    ATTACHABLE.replace(
      '  waitforattach)',
      `  attach) echo '{"status":"Success","device":"/dev/flex0"}' ;;
  detach) echo '{"status":"Success"}' ;;
  waitforattach)`,
    ),
  );
  const flex = h.kubelet({ controllerAttachDetach: false });
  const volume: Volume = { name: 'vol', flexVolume: { driver: 'k8s/attach' } };
  const [pod1, pod2] = [podWith('uid-1', volume), podWith('uid-2', volume)];
  const device = `${h.root}/plugins/kubernetes.io/flexvolume/k8s/attach/mounts/vol`;
  const opts = '{"kubernetes.io/fsType":"","kubernetes.io/pvOrVolumeName":"vol","kubernetes.io/readwrite":"rw"}';
  // No wait for the Node's volumesInUse or volumesAttached: attached here, still reported in use.
  await flex.setUp(pod1, specOf(pod1));
  assert.deepEqual(flex.volumesInUse(), ['k8s/attach/vol']);
  assert.deepEqual(h.calls().slice(0, 4), [
    ['init'],
    ['attach', opts, 'node-1'],
    ['waitforattach', '/dev/flex0', opts],
    ['mountdevice', device, '/dev/flex0', opts],
  ]);
  h.mountPoints.add(device);
  // A second pod: not attached again.
  await flex.setUp(pod2, specOf(pod2));
  assert.deepEqual(h.calls(), [['waitforattach', '/dev/flex0', opts]]);
  await flex.tearDown('uid-1');
  assert.deepEqual(h.calls(), [['unmount', `${h.root}/pods/uid-1/volumes/k8s~attach/vol`]]);
  await flex.tearDown('uid-2');
  assert.deepEqual(h.calls(), [
    ['unmountdevice', device],
    ['detach', 'vol', 'node-1'],
  ]);
  // Attached again for the next pod.
  await flex.setUp(pod1, specOf(pod1));
  assert.deepEqual(h.calls()[0], ['attach', opts, 'node-1']);
});

test('mountdevice "Not supported" with a device: refused, naming why (kubelet-ts does not format and mount devices)', async (t) => {
  const h = harness(t);
  h.install('k8s~attach', ATTACHABLE.replace('mountdevice)', 'nomountdevice)'));
  const flex = h.kubelet();
  const pod = podWith('uid-1', { name: 'vol', flexVolume: { driver: 'k8s/attach' } });
  flex.volumesInUse();
  flex.markReportedInUse(['k8s/attach/vol']);
  h.attached.push({ name: 'k8s/attach/vol', devicePath: '/dev/sdb' });
  await assert.rejects(flex.setUp(pod, specOf(pod)), (e: Error & { operation?: string }) => {
    assert.equal(e.operation, 'MountVolume.MountDevice');
    assert.match(
      e.message,
      /flexVolume driver k8s\/attach does not support mountdevice, and kubelet-ts does not format and mount device \/dev\/sdb itself/,
    );
    return true;
  });
});

test('through the volume manager: an inline flexVolume set up before the containers, mounted with selinuxRelabel, torn down with the pod', async (t) => {
  const h = harness(t);
  // The driver's selinuxRelabel left to upstream's default (true).
  h.install('k8s~test', NON_ATTACHABLE.replace(',"selinuxRelabel":false', ''));
  const none = () => Promise.reject(new Error('none'));
  const vm = new VolumeManager({
    rootDir: h.root,
    sources: { configMap: none, secret: none, requestToken: none },
    log: quiet,
    flex: h.kubelet(),
  });
  const pod = podWith('uid-1', { name: 'vol', flexVolume: { driver: 'k8s/test' } });
  assert.deepEqual(await vm.setUp(pod), { ready: true, failed: [] });
  const dir = `${h.root}/pods/uid-1/volumes/k8s~test/vol`;
  const mounts = await vm.containerMounts(pod, pod.spec!.containers[0]!, { podIPs: [], clusterDomain: 'cluster.local' });
  assert.deepEqual(
    mounts.filter((m) => m.containerPath === '/data'),
    [{ containerPath: '/data', hostPath: dir, readonly: false, propagation: 'PROPAGATION_PRIVATE', selinuxRelabel: true }],
  );
  // Its driver does not supportsMetrics: not measured (upstream's MetricsNil).
  assert.deepEqual(vm.statfsVolumes('uid-1'), []);
  // A failure shows as upstream's FailedMount message.
  const failing = podWith('uid-2', { name: 'vol', flexVolume: { driver: 'k8s/test', options: { fail: 'yes' } } });
  assert.deepEqual((await vm.setUp(failing)).failed, [
    {
      volume: 'vol',
      message: 'MountVolume.SetUp failed for volume "vol" : mount command failed, status: Failure, reason: the backend refused',
    },
  ]);
  h.calls();
  await vm.tearDown('uid-1');
  assert.deepEqual(h.calls(), [['unmount', dir]]);
  assert.equal(existsSync(`${h.root}/pods/uid-1/volumes`), false);
});

test("a driver that supportsMetrics: its inline volumes measured by statfs (VolumeManager.statfsVolumes), a claim's by PersistentVolumes", async (t) => {
  const h = harness(t);
  h.install('k8s~test', NON_ATTACHABLE.replace('"attach":false', '"attach":false,"supportsMetrics":true'));
  const none = () => Promise.reject(new Error('none'));
  const vm = new VolumeManager({
    rootDir: h.root,
    sources: { configMap: none, secret: none, requestToken: none },
    log: quiet,
    flex: h.kubelet(),
  });
  const pod = podWith('uid-1', { name: 'vol', flexVolume: { driver: 'k8s/test' } });
  assert.equal((await vm.setUp(pod)).ready, true);
  assert.deepEqual(vm.statfsVolumes('uid-1'), [{ name: 'vol', path: `${h.root}/pods/uid-1/volumes/k8s~test/vol` }]);
});

test("a PersistentVolume's flexVolume: its directory and options named for the PV, read-only as the claim says", async (t) => {
  const h = harness(t);
  h.install('k8s~test', NON_ATTACHABLE);
  const pod = podWith('uid-1', { name: 'data', persistentVolumeClaim: { claimName: 'c', readOnly: true } });
  const spec = {
    volume: pod.spec!.volumes![0]!,
    pv: { metadata: { name: 'pv-1' }, spec: { flexVolume: { driver: 'k8s/test', readOnly: false } } },
    readOnly: true,
  };
  const host = { flex: h.kubelet() } as unknown as PersistentHost;
  const set = await flexPersistentPlugin.setUp(host, pod, spec);
  assert.deepEqual(set, { path: `${h.root}/pods/uid-1/volumes/k8s~test/pv-1`, readOnly: true });
  const mount = h.calls()[1]!;
  assert.deepEqual(
    [JSON.parse(mount[2]!)['kubernetes.io/pvOrVolumeName'], JSON.parse(mount[2]!)['kubernetes.io/readwrite']],
    ['pv-1', 'ro'],
  );
});

test("upstream's e2e dummy driver from the module cache: its mount and unmount of a plain directory", async (t) => {
  const dummy = join(homedir(), 'go/pkg/mod/k8s.io/kubernetes@v1.36.3/test/e2e/testing-manifests/flexvolume/dummy');
  if (!existsSync(dummy)) {
    t.skip(`upstream's dummy driver is not in the module cache (${dummy})`);
    return;
  }
  const h = harness(t);
  h.install('k8s~dummy', readFileSync(dummy, 'utf8'));
  // mount(8) and umount(8) stubbed on PATH: a plain directory, no tmpfs.
  const bin = join(h.root, 'bin');
  mkdirSync(bin);
  for (const cmd of ['mount', 'umount']) writeFileSync(join(bin, cmd), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  const saved = { PATH: process.env.PATH, FLEX_DUMMY_LOG: process.env.FLEX_DUMMY_LOG };
  process.env.PATH = `${bin}:${process.env.PATH}`;
  process.env.FLEX_DUMMY_LOG = join(h.root, 'dummy.log');
  t.after(() => Object.assign(process.env, saved));
  const flex = h.kubelet();
  const pod = podWith('uid-1', { name: 'test', flexVolume: { driver: 'k8s/dummy' } });
  const set = await flex.setUp(pod, specOf(pod));
  // Its init says attach: false and nothing of selinuxRelabel (upstream's default: true).
  assert.deepEqual(set, { path: `${h.root}/pods/uid-1/volumes/k8s~dummy/test`, readOnly: false, selinuxRelabel: true });
  assert.equal(readFileSync(`${set.path}/index.html`, 'utf8'), 'Hello from flexvolume!\n');
  await h.kubelet().tearDown('uid-1');
  assert.equal(existsSync(set.path), false);
  assert.match(
    readFileSync(join(h.root, 'dummy.log'), 'utf8'),
    /init\n.*domount .*\/k8s~dummy\/test \{.*\n.*init\n.*unmount .*\/k8s~dummy\/test\n$/,
  );
});

test('the pod and PV plugins: which specs they take; the pod plugin tears down what is on disk, the flexVolume directories told apart', () => {
  assert.equal(flexPodPlugin.canSupport({ volume: { name: 'v', flexVolume: { driver: 'k8s/x' } }, readOnly: false }), true);
  assert.equal(flexPodPlugin.canSupport({ volume: { name: 'v', emptyDir: {} }, readOnly: false }), false);
  const pv = {
    volume: { name: 'v', persistentVolumeClaim: { claimName: 'c' } },
    pv: { metadata: { name: 'pv' }, spec: { flexVolume: { driver: 'k8s/x' } } },
    readOnly: false,
  };
  assert.equal(flexPodPlugin.canSupport(pv), false);
  assert.equal(flexPersistentPlugin.canSupport(pv), true);
  const cases: [string, string | undefined][] = [
    ['k8s~dummy', 'k8s/dummy'],
    ['example.com~nfs', 'example.com/nfs'],
    ['plain', 'plain'],
    ['kubernetes.io~csi', undefined],
    ['kubernetes.io~empty-dir', undefined],
  ];
  for (const [dir, want] of cases) assert.equal(flexDriverOfPluginDir(dir), want, dir);
});
