import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mountPointsUnder } from './mountinfo.ts';

test('mount points under a dir, deepest first, octal escapes decoded', () => {
  const info = [
    '22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw',
    '90 22 0:50 / /var/lib/kubelet/pods/u1/volumes/kubernetes.io~secret/s rw - tmpfs tmpfs rw',
    '91 22 0:51 / /var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/a\\040b rw - tmpfs tmpfs rw',
    '92 90 0:52 / /var/lib/kubelet/pods/u1/volumes/kubernetes.io~secret/s/deeper rw - tmpfs tmpfs rw',
    '93 22 0:53 / /var/lib/kubelet/pods/u10/volumes/x rw - tmpfs tmpfs rw',
  ].join('\n');
  assert.deepEqual(mountPointsUnder(info, '/var/lib/kubelet/pods/u1/volumes/'), [
    '/var/lib/kubelet/pods/u1/volumes/kubernetes.io~secret/s/deeper',
    '/var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/a b',
    '/var/lib/kubelet/pods/u1/volumes/kubernetes.io~secret/s',
  ]);
});
