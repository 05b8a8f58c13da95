import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  isSafeUID,
  listPodDirs,
  podDir,
  podsWithMounts,
  removeContainerLogs,
  removeLogDir,
  removePodCgroups,
  removePodDir,
} from './disk.ts';
import { cgroupLayout } from '../resources/cgroup-layout.ts';
import type { CgroupManager } from '../resources/cgroup-manager.ts';

test('podsWithMounts: pods with a mount point below their dir, octal escapes decoded', () => {
  const mountinfo = [
    '22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw',
    '90 22 0:50 / /var/lib/kubelet/pods/aaa/volumes/kubernetes.io~empty-dir/cache rw - tmpfs tmpfs rw',
    '91 22 0:51 / /var/lib/kubelet/pods/bbb/volume\\040with\\040space rw - tmpfs tmpfs rw',
    '92 22 0:52 / /var/lib/kubelet/podsX/ccc rw - tmpfs tmpfs rw',
    '93 22 0:53 / /var/lib/kubelet/pods rw - tmpfs tmpfs rw',
    '',
  ].join('\n');
  assert.deepEqual([...podsWithMounts(mountinfo, '/var/lib/kubelet/pods')].sort(), ['aaa', 'bbb']);
});

test('isSafeUID: one path segment only', () => {
  for (const ok of ['0f1e2d3c-aaaa-bbbb-cccc-000000000001', 'd41d8cd98f00b204e9800998ecf8427e']) assert.ok(isSafeUID(ok), ok);
  for (const bad of ['', '.', '..', 'a/b', '../x', '.hidden']) assert.ok(!isSafeUID(bad), bad);
});

test('listPodDirs and removePodDir: the pod dirs under the root; a UID that is not one segment is refused', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-gc-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(podDir(root, 'u1'), { recursive: true });
  assert.deepEqual([...listPodDirs(root)], ['u1']);
  removePodDir(root, 'u1');
  assert.deepEqual([...listPodDirs(root)], []);
  assert.throws(() => removePodDir(root, '..'));
  assert.throws(() => removeLogDir(root, '../etc'));
});

test('removeContainerLogs: the log file and its rotations, nothing else', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'kts-gc-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, 'ns_p_u', 'main');
  mkdirSync(dir, { recursive: true });
  for (const f of ['0.log', '0.log.20261122-120000', '0.log.20261122-120000.gz', '1.log', '10.log']) writeFileSync(join(dir, f), 'x');
  removeContainerLogs(join(dir, '0.log'));
  assert.deepEqual(readdirSync(dir).sort(), ['1.log', '10.log']);
});

test("removePodCgroups: the pod's cgroup in every QoS class where it is; without cgroupsPerQOS none is looked for", async () => {
  const rows: [string, boolean, string[]][] = [
    ['cgroupsPerQOS', true, ['/kubepods/podu1', '/kubepods/besteffort/podu1']],
    ['cgroupsPerQOS false', false, []],
  ];
  for (const [name, perQos, want] of rows) {
    const removed: string[] = [];
    const manager = {
      present: (path: string) => !path.includes('burstable'),
      remove: async (path: string) => removed.push(path) > 0,
    } as unknown as CgroupManager;
    assert.equal(await removePodCgroups({ layout: cgroupLayout('cgroupfs', '/', perQos), manager }, 'u1'), true, name);
    assert.deepEqual(removed, want, name);
  }
});
