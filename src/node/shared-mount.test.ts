import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isShared, makeRShared, parseMountInfo } from './shared-mount.ts';

// As this VM's /proc/self/mountinfo: "/" private, the node namespaces' directory, a pod's tmpfs.
const PRIVATE_ROOT = [
  '22 27 0:21 / /proc rw,relatime - proc proc rw',
  '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard',
  '42 27 254:0 /run/kts/ns /run/kts/ns rw,relatime - ext4 /dev/vda rw,discard',
  '232 27 0:262 / /var/lib/kubelet/pods/u1/volumes/kubernetes.io~projected/kube-api-access-x rw,relatime - tmpfs tmpfs rw',
].join('\n');
// After upstream's MakeRShared, and a host whose "/" is shared (systemd's default).
const SHARED_KUBELET = `${PRIVATE_ROOT}\n300 27 254:0 /var/lib/kubelet /var/lib/kubelet rw,relatime shared:150 - ext4 /dev/vda rw\n`;
const SHARED_ROOT = '1 0 254:0 / / rw,relatime shared:1 master:2 - ext4 /dev/vda rw\n';

test('parseMountInfo: mount points unescaped, optional fields up to "-"', () => {
  assert.deepEqual(parseMountInfo('5 1 0:1 / /a\\040b rw shared:3 master:1 - tmpfs t rw\n\nbad line\n'), [
    { mountPoint: '/a b', optional: ['shared:3', 'master:1'] },
  ]);
});

const rows: [string, string, string, boolean | RegExp][] = [
  ['on a private "/"', '/var/lib/kubelet', PRIVATE_ROOT, false],
  ['its own rshared bind mount', '/var/lib/kubelet', SHARED_KUBELET, true],
  ['below its own rshared bind mount', '/var/lib/kubelet/pods/u2', SHARED_KUBELET, true],
  ['a sibling with a common prefix is not within it', '/var/lib/kubelet2', SHARED_KUBELET, false],
  ['a shared "/" (optional fields after shared: too)', '/var/lib/kubelet', SHARED_ROOT, true],
  ['no mount contains it', '/var/lib/kubelet', '', /cannot find mount point for "\/var\/lib\/kubelet"/],
];
for (const [name, path, info, want] of rows) {
  test(`isShared: ${name}`, () => {
    if (want instanceof RegExp) assert.throws(() => isShared(path, info), want);
    else assert.equal(isShared(path, info), want);
  });
}

test('makeRShared: bind onto itself, then rshared; nothing when already shared', () => {
  const calls: string[][] = [];
  const ops = (info: string, fail?: string) => ({
    mountinfo: () => info,
    mount: (args: string[]) => {
      calls.push(args);
      if (args[0] === fail) throw new Error('permission denied');
    },
  });
  assert.equal(makeRShared('/var/lib/kubelet', ops(PRIVATE_ROOT)), true);
  assert.deepEqual(calls, [
    ['--bind', '/var/lib/kubelet', '/var/lib/kubelet'],
    ['--make-rshared', '/var/lib/kubelet'],
  ]);
  calls.length = 0;
  assert.equal(makeRShared('/var/lib/kubelet', ops(SHARED_KUBELET)), false);
  assert.deepEqual(calls, [], 'a restarted kubelet mounts nothing');
  assert.throws(() => makeRShared('/var/lib/kubelet', ops(PRIVATE_ROOT, '--bind')), {
    message: 'failed to bind-mount /var/lib/kubelet: permission denied',
  });
  assert.throws(() => makeRShared('/var/lib/kubelet', ops(PRIVATE_ROOT, '--make-rshared')), {
    message: 'failed to make /var/lib/kubelet rshared: permission denied',
  });
});
