import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, VolumeMount } from 'kubernetes-types/core/v1.js';
import {
  requestsRecursiveReadOnly,
  resolveRecursiveReadOnly,
  runtimeHandlerSupportsRecursiveReadOnlyMounts,
  volumeMountStatuses,
  withRecursiveReadOnly,
} from './recursive-read-only.ts';
import type { Mount } from '../cri/generated/runtime/v1/Mount.ts';

// The rows of upstream's TestResolveRecursiveReadOnly: the result, or a part of the error.
const resolveRows: [m: Omit<VolumeMount, 'mountPath'>, supported: boolean, want: boolean | string][] = [
  [{ name: 'rw' }, true, false],
  [{ name: 'ro', readOnly: true }, true, false],
  [{ name: 'ro', readOnly: true, recursiveReadOnly: 'Disabled' }, true, false],
  [{ name: 'ro', readOnly: true, recursiveReadOnly: 'Disabled' }, false, false],
  [{ name: 'rro-if-possible', readOnly: true, recursiveReadOnly: 'IfPossible' }, true, true],
  [{ name: 'rro-if-possible', readOnly: true, recursiveReadOnly: 'IfPossible', mountPropagation: 'None' }, true, true],
  [{ name: 'rro-if-possible', readOnly: true, recursiveReadOnly: 'IfPossible' }, false, false],
  [
    { name: 'rro-if-possible', readOnly: true, recursiveReadOnly: 'IfPossible', mountPropagation: 'HostToContainer' },
    true,
    'volume "rro-if-possible" requested recursive read-only mode, but it is not compatible with propagation "HostToContainer"',
  ],
  [
    { name: 'rro-if-possible', readOnly: true, recursiveReadOnly: 'IfPossible', mountPropagation: 'Bidirectional' },
    true,
    'not compatible with propagation',
  ],
  [{ name: 'rro-if-possible', recursiveReadOnly: 'IfPossible' }, true, 'not read-only'],
  [{ name: 'rro-if-possible', recursiveReadOnly: 'IfPossible' }, false, 'not read-only'],
  [{ name: 'rro', readOnly: true, recursiveReadOnly: 'Enabled' }, true, true],
  [{ name: 'rro', readOnly: true, recursiveReadOnly: 'Enabled', mountPropagation: 'None' }, true, true],
  [
    { name: 'rro', readOnly: true, recursiveReadOnly: 'Enabled', mountPropagation: 'HostToContainer' },
    true,
    'not compatible with propagation',
  ],
  [
    { name: 'rro', readOnly: true, recursiveReadOnly: 'Enabled', mountPropagation: 'Bidirectional' },
    true,
    'not compatible with propagation',
  ],
  [{ name: 'rro', recursiveReadOnly: 'Enabled' }, true, 'volume "rro" requested recursive read-only mode, but it is not read-only'],
  [
    { name: 'rro', readOnly: true, recursiveReadOnly: 'Enabled' },
    false,
    'volume "rro" requested recursive read-only mode, but it is not supported by the runtime',
  ],
  [{ name: 'x', readOnly: true, recursiveReadOnly: 'Sometimes' }, true, 'unknown recursive read-only mode "Sometimes"'],
];

for (const [m, supported, want] of resolveRows) {
  test(`resolveRecursiveReadOnly ${JSON.stringify(m)} runtime supports: ${supported}`, () => {
    const vm = { ...m, mountPath: '/mnt' };
    if (typeof want === 'boolean') assert.equal(resolveRecursiveReadOnly(vm, supported), want);
    else
      assert.throws(
        () => resolveRecursiveReadOnly(vm, supported),
        (e: Error) => e.message.includes(want),
      );
  });
}

test('runtimeHandlerSupportsRecursiveReadOnlyMounts: the named handler decides; none listed or unknown is unsupported', () => {
  const handlers = [
    { name: '', features: { recursiveReadOnlyMounts: true } },
    { name: 'kata', features: { recursiveReadOnlyMounts: false } },
    { name: 'gvisor', features: null },
  ];
  const rows: [string, typeof handlers, boolean][] = [
    ['', handlers, true],
    ['kata', handlers, false],
    ['gvisor', handlers, false],
    ['unknown', handlers, false],
    ['', [], false], // containerd 1.6 lists no handlers
  ];
  for (const [name, hs, want] of rows) assert.equal(runtimeHandlerSupportsRecursiveReadOnlyMounts(name, hs), want, `handler "${name}"`);
});

const c = (volumeMounts: VolumeMount[]): Container => ({ name: 'test', image: 'busybox', volumeMounts });
// The volumeMounts of the node e2e test (mount_rro_linux_test.go), on one volume "mnt".
const e2eMounts: VolumeMount[] = [
  { name: 'mnt', mountPath: '/mnt-rro', readOnly: true, mountPropagation: 'None', recursiveReadOnly: 'Enabled' },
  { name: 'mnt', mountPath: '/mnt-rro-if-possible', readOnly: true, recursiveReadOnly: 'IfPossible' },
  { name: 'mnt', mountPath: '/mnt-rro-disabled', readOnly: true, recursiveReadOnly: 'Disabled' },
  { name: 'mnt', mountPath: '/mnt-ro', readOnly: true },
  { name: 'mnt', mountPath: '/mnt-rw' },
];
const criMounts = (vms: VolumeMount[]): Mount[] => [
  ...vms.map((m) => ({
    containerPath: m.mountPath,
    hostPath: '/var/lib/kubelet/pods/u/volumes/kubernetes.io~empty-dir/mnt',
    readonly: !!m.readOnly,
  })),
  { containerPath: '/dev/termination-log', hostPath: '/var/lib/kubelet/pods/u/containers/test/abcd', readonly: false },
];

test('requestsRecursiveReadOnly: only IfPossible or Enabled make the runtime be asked', () => {
  assert.equal(requestsRecursiveReadOnly(c(e2eMounts)), true);
  assert.equal(requestsRecursiveReadOnly(c(e2eMounts.slice(2))), false);
  assert.equal(requestsRecursiveReadOnly({ name: 'x' }), false);
});

test('withRecursiveReadOnly: supported, Enabled and IfPossible mounts become recursive, nothing else does', () => {
  const got = withRecursiveReadOnly(c(e2eMounts), criMounts(e2eMounts), true)!;
  assert.deepEqual(
    got.filter((m) => m.recursiveReadOnly).map((m) => m.containerPath),
    ['/mnt-rro', '/mnt-rro-if-possible'],
  );
  assert.deepEqual(
    got.map((m) => m.readonly),
    [true, true, true, true, false, false],
    'readonly is left as made',
  );
});

test('withRecursiveReadOnly: unsupported, IfPossible stays plain read-only; Enabled fails the container config', () => {
  const unsupported = e2eMounts.slice(1);
  assert.deepEqual(withRecursiveReadOnly(c(unsupported), criMounts(unsupported), false), criMounts(unsupported));
  assert.throws(
    () => withRecursiveReadOnly(c([{ name: 'mnt', mountPath: '/mnt', readOnly: true, recursiveReadOnly: 'Enabled' }]), [], false),
    {
      message:
        'failed to resolve recursive read-only mode: volume "mnt" requested recursive read-only mode, but it is not supported by the runtime',
    },
  );
  assert.equal(withRecursiveReadOnly(c([]), undefined, false), undefined, 'no volume manager, no mounts');
});

test('withRecursiveReadOnly: a relative mountPath matches the absolute container path', () => {
  const got = withRecursiveReadOnly(
    c([{ name: 'v', mountPath: 'data', readOnly: true, recursiveReadOnly: 'Enabled' }]),
    [{ containerPath: '/data', hostPath: '/h', readonly: true }],
    true,
  );
  assert.deepEqual(got, [{ containerPath: '/data', hostPath: '/h', readonly: true, recursiveReadOnly: true }]);
});

test('volumeMountStatuses: as the node e2e test expects them, with and without runtime support', () => {
  assert.deepEqual(volumeMountStatuses(c(e2eMounts), true), [
    { name: 'mnt', mountPath: '/mnt-rro', readOnly: true, recursiveReadOnly: 'Enabled' },
    { name: 'mnt', mountPath: '/mnt-rro-if-possible', readOnly: true, recursiveReadOnly: 'Enabled' },
    { name: 'mnt', mountPath: '/mnt-rro-disabled', readOnly: true, recursiveReadOnly: 'Disabled' },
    { name: 'mnt', mountPath: '/mnt-ro', readOnly: true, recursiveReadOnly: 'Disabled' },
    { name: 'mnt', mountPath: '/mnt-rw' },
  ]);
  assert.deepEqual(volumeMountStatuses(c(e2eMounts), false), [
    { name: 'mnt', mountPath: '/mnt-rro', readOnly: true, recursiveReadOnly: 'Disabled' },
    { name: 'mnt', mountPath: '/mnt-rro-if-possible', readOnly: true, recursiveReadOnly: 'Disabled' },
    { name: 'mnt', mountPath: '/mnt-rro-disabled', readOnly: true, recursiveReadOnly: 'Disabled' },
    { name: 'mnt', mountPath: '/mnt-ro', readOnly: true, recursiveReadOnly: 'Disabled' },
    { name: 'mnt', mountPath: '/mnt-rw' },
  ]);
  assert.deepEqual(volumeMountStatuses({ name: 'x' }, true), []);
});
