import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PersistentVolume, Pod, Volume } from 'kubernetes-types/core/v1.js';
import {
  DEFAULT_CAPABILITIES,
  type DriverRun,
  driverCallResult,
  flexSource,
  mountOptions,
  NotSupportedError,
  optionsJSON,
  parseDriverStatus,
  runDriver,
  secretOptions,
} from './driver-call.ts';

test("parseDriverStatus: upstream's DriverStatus, its capabilities over the defaults, its failures as upstream words them", () => {
  const caps = (over: object) => ({ ...DEFAULT_CAPABILITIES, ...over });
  const cases: [string, string, object | RegExp | typeof NotSupportedError][] = [
    ['success', '{"status":"Success"}', { status: 'Success', capabilities: caps({}) }],
    // The dummy driver's init: attach off, the rest as upstream assumes.
    [
      'init of a non-attachable driver',
      '{"status":"Success","capabilities":{"attach":false}}',
      { status: 'Success', capabilities: caps({ attach: false }) },
    ],
    [
      'every capability',
      '{"status":"Success","capabilities":{"attach":false,"selinuxRelabel":false,"supportsMetrics":true,"fsGroup":false,"requiresFSResize":false}}',
      {
        status: 'Success',
        capabilities: { attach: false, selinuxRelabel: false, supportsMetrics: true, fsGroup: false, requiresFSResize: false },
      },
    ],
    [
      'the attach answers',
      '{"status":"Success","device":"/dev/sdb","volumeName":"v","attached":true,"volumeNewSize":1024}',
      { status: 'Success', device: '/dev/sdb', volumeName: 'v', attached: true, volumeNewSize: 1024, capabilities: caps({}) },
    ],
    // Go's encoding/json matches keys without regard to case, skips unknown ones and leaves a field at null unset.
    [
      'keys of any case, unknown ones, nulls',
      ' {"Status":"Success","CAPABILITIES":{"Attach":false,"fsgroup":null},"extra":[1],"message":null}\n',
      { status: 'Success', capabilities: caps({ attach: false }) },
    ],
    ['Not supported', '{"status":"Not supported"}', NotSupportedError],
    [
      'a failure, its message the reason',
      '{"status":"Failure","message":"no such volume"}',
      /^Error: mount command failed, status: Failure, reason: no such volume$/,
    ],
    ['a failure without a message', '{"status":"Failure"}', /^Error: mount command failed, status: Failure, reason: $/],
    ['no status at all', '{}', /^Error: mount command failed, status: , reason: $/],
    ['not JSON', 'mounted!', /driver output for mount is not a DriverStatus \(.*\): "mounted!"/],
    ['empty', '', /driver output for mount is not a DriverStatus/],
    ['two objects', '{"status":"Success"}{"status":"Success"}', /driver output for mount is not a DriverStatus/],
    ['an array', '[{"status":"Success"}]', /not a DriverStatus \(an array, not an object\)/],
    ['null', 'null', /not a DriverStatus \(a null, not an object\)/],
    ['a status of the wrong type', '{"status":1}', /"status" is a number, not a string/],
    ['attached as a string', '{"status":"Success","attached":"true"}', /"attached" is a string, not a boolean/],
    ['a fractional size', '{"status":"Success","volumeNewSize":1.5}', /"volumeNewSize" is a number, not an integer/],
    ['capabilities as a list', '{"status":"Success","capabilities":["attach"]}', /"capabilities" is an array, not an object/],
    [
      'a capability as a string',
      '{"status":"Success","capabilities":{"attach":"false"}}',
      /"capabilities.attach" is a string, not a boolean/,
    ],
  ];
  for (const [name, output, want] of cases) {
    if (want instanceof RegExp) assert.throws(() => parseDriverStatus('mount', output), want, name);
    else if (want === NotSupportedError) assert.throws(() => parseDriverStatus('mount', output), NotSupportedError, name);
    else assert.deepEqual(parseDriverStatus('mount', output), want, name);
  }
});

test("driverCallResult: upstream's DriverCall.Run over how the executable ended", () => {
  const run = (o: Partial<DriverRun>): DriverRun => ({ stdout: '', stderr: '', code: 0, ...o });
  const ok = '{"status":"Success"}';
  const cases: [string, DriverRun, RegExp | typeof NotSupportedError | 'ok'][] = [
    ['success', run({ stdout: ok, stderr: 'a log line' }), 'ok'],
    ['a non-zero exit with Success is a driver bug', run({ stdout: ok, code: 1 }), /exit status 1 with status Success/],
    ['a non-zero exit with a failure is the failure', run({ stdout: '{"status":"Failure","message":"busy"}', code: 2 }), /reason: busy/],
    ['a non-zero exit with Not supported', run({ stdout: '{"status":"Not supported"}', code: 1 }), NotSupportedError],
    ['timed out', run({ timedOut: true, code: -1 }), /\/d mount: timeout$/],
    ['could not run', run({ spawnError: 'spawn /d EACCES', code: -1 }), /\/d mount could not run: spawn \/d EACCES/],
    [
      'bad output quotes stderr too',
      run({ stdout: 'oops', stderr: 'mount: permission denied\n', code: 32 }),
      /"oops"; stderr: "mount: permission denied"/,
    ],
  ];
  for (const [name, r, want] of cases) {
    if (want === 'ok') assert.equal(driverCallResult('mount', '/d', r).status, 'Success', name);
    else if (want === NotSupportedError) assert.throws(() => driverCallResult('mount', '/d', r), NotSupportedError, name);
    else assert.throws(() => driverCallResult('mount', '/d', r), want, name);
  }
});

const pod: Pod = {
  metadata: { name: 'web', namespace: 'ns1', uid: 'uid-1' },
  spec: { containers: [], serviceAccountName: 'sa', securityContext: { fsGroup: 2000 } },
};
const inline = (flexVolume: Volume['flexVolume']) => ({ volume: { name: 'vol', flexVolume } as Volume, readOnly: false });
const bound = (flexVolume: object, readOnly = false) => ({
  volume: { name: 'vol', persistentVolumeClaim: { claimName: 'c' } } as Volume,
  pv: { metadata: { name: 'pv-1' }, spec: { flexVolume } } as PersistentVolume,
  readOnly,
});

test("flexSource: upstream's util.go readers: the driver, fsType, readOnly (a PV's from the claim), options, name and secret", () => {
  const cases: [string, Parameters<typeof flexSource>[0], ReturnType<typeof flexSource>][] = [
    ['inline, bare', inline({ driver: 'k8s/dummy' }), { driver: 'k8s/dummy', fsType: '', readOnly: false, options: {}, specName: 'vol' }],
    [
      'inline, all of it; its secret is in the pod namespace',
      inline({ driver: 'k8s/dummy', fsType: 'ext4', readOnly: true, options: { a: 'b' }, secretRef: { name: 's' } }),
      {
        driver: 'k8s/dummy',
        fsType: 'ext4',
        readOnly: true,
        options: { a: 'b' },
        specName: 'vol',
        secret: { namespace: 'ns1', name: 's' },
      },
    ],
    [
      "a PV: its name; readOnly is the claim's, not the PV's",
      bound({ driver: 'k8s/dummy', readOnly: true }),
      { driver: 'k8s/dummy', fsType: '', readOnly: false, options: {}, specName: 'pv-1' },
    ],
    [
      'a PV read-only by its claim',
      bound({ driver: 'k8s/dummy' }, true),
      { driver: 'k8s/dummy', fsType: '', readOnly: true, options: {}, specName: 'pv-1' },
    ],
    [
      "a PV's secret in its own namespace",
      bound({ driver: 'k8s/dummy', secretRef: { name: 's', namespace: 'vault' } }),
      { driver: 'k8s/dummy', fsType: '', readOnly: false, options: {}, specName: 'pv-1', secret: { namespace: 'vault', name: 's' } },
    ],
    [
      "a PV's secret without a namespace: the pod's",
      bound({ driver: 'k8s/dummy', secretRef: { name: 's' } }),
      { driver: 'k8s/dummy', fsType: '', readOnly: false, options: {}, specName: 'pv-1', secret: { namespace: 'ns1', name: 's' } },
    ],
    ['not a flexVolume', { volume: { name: 'v', emptyDir: {} }, readOnly: false }, undefined],
  ];
  for (const [name, spec, want] of cases) assert.deepEqual(flexSource(spec, 'ns1'), want, name);
});

test("the mount call's options JSON, as upstream's NewOptionsForDriver and SetUpAt build it", () => {
  const src = flexSource(inline({ driver: 'k8s/dummy', fsType: 'ext4', options: { size: '1Gi', 'kubernetes.io/readwrite': 'x' } }), 'ns1')!;
  const secret = secretOptions({ type: 'k8s/dummy', data: { password: Buffer.from('hunter2').toString('base64') } }, 'k8s/dummy');
  // Sorted keys (Go marshals a map so); the source's own options override everything else.
  assert.equal(
    optionsJSON(src, mountOptions(pod, secret)),
    JSON.stringify({
      'kubernetes.io/fsType': 'ext4',
      'kubernetes.io/mounterArgs.FsGroup': '2000',
      'kubernetes.io/pod.name': 'web',
      'kubernetes.io/pod.namespace': 'ns1',
      'kubernetes.io/pod.uid': 'uid-1',
      'kubernetes.io/pvOrVolumeName': 'vol',
      'kubernetes.io/readwrite': 'x',
      'kubernetes.io/secret/password': Buffer.from('hunter2').toString('base64'),
      'kubernetes.io/serviceAccount.name': 'sa',
      size: '1Gi',
    }),
  );
  // The attacher's calls carry the spec alone; no fsGroup without one in the pod.
  const ro = flexSource(inline({ driver: 'k8s/dummy', readOnly: true }), 'ns1')!;
  assert.equal(optionsJSON(ro), '{"kubernetes.io/fsType":"","kubernetes.io/pvOrVolumeName":"vol","kubernetes.io/readwrite":"ro"}');
  assert.equal(mountOptions({ metadata: { name: 'p' }, spec: { containers: [] } }, {})['kubernetes.io/mounterArgs.FsGroup'], undefined);
});

test("secretOptions: upstream's GetSecretForPV wants a secret of the driver's type; each key base64", () => {
  assert.throws(() => secretOptions({ type: 'Opaque', data: {} }, 'k8s/dummy'), /^Error: cannot get secret of type k8s\/dummy$/);
  assert.deepEqual(secretOptions({ type: 'k8s/dummy' }, 'k8s/dummy'), {});
  assert.deepEqual(secretOptions({ type: 'k8s/dummy', data: { a: 'YQ==', b: '' } }, 'k8s/dummy'), {
    'kubernetes.io/secret/a': 'YQ==',
    'kubernetes.io/secret/b': '',
  });
});

test('runDriver: the exit status and output, a timeout kills the driver, a missing one does not run', async () => {
  assert.deepEqual(await runDriver('/bin/sh', ['-c', 'echo "{}"; echo log >&2; exit 3'], 5000), {
    stdout: '{}\n',
    stderr: 'log\n',
    code: 3,
  });
  const slow = await runDriver('/bin/sh', ['-c', 'sleep 5'], 100);
  assert.equal(slow.timedOut, true);
  const missing = await runDriver('/nonexistent/driver', ['init'], 5000);
  assert.match(missing.spawnError ?? '', /ENOENT/);
});
