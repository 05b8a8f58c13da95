import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mountPointsUnder, unmountAll } from './mountinfo.ts';

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

test('unmountAll on real tmpfs mounts: all gone after one umount each, not when a point was mounted twice', {
  skip: process.getuid?.() !== 0 && 'mount(8) needs root',
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'unmount-all-'));
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  t.after(() => {
    for (const p of mountPointsUnder(readFileSync('/proc/self/mountinfo', 'utf8'), dir)) execFileSync('umount', ['-l', p]);
    rmSync(dir, { recursive: true, force: true });
  });
  mkdirSync(a);
  mkdirSync(b);
  const tmpfs = (at: string) => execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', at]);
  tmpfs(a);
  assert.deepEqual(await unmountAll(dir), { found: 1, allGone: true });
  tmpfs(b);
  tmpfs(b);
  assert.deepEqual(await unmountAll(dir), { found: 1, allGone: false });
  assert.deepEqual(mountPointsUnder(readFileSync('/proc/self/mountinfo', 'utf8'), dir), [b], 'the lower mount stays');
  assert.deepEqual(await unmountAll(dir), { found: 1, allGone: true });
  assert.deepEqual(mountPointsUnder(readFileSync('/proc/self/mountinfo', 'utf8'), dir), []);
});
