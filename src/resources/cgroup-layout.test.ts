import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kubepodsCgroup, podCgroupCandidates, podCgroupPath } from './cgroup-layout.ts';

test('cgroupfs layout under cgroupRoot, as upstream names it', () => {
  assert.equal(kubepodsCgroup('/'), '/kubepods');
  assert.equal(kubepodsCgroup(''), '/kubepods');
  assert.equal(kubepodsCgroup('/kts/node-2'), '/kts/node-2/kubepods');
  assert.equal(kubepodsCgroup('kts/node-2/'), '/kts/node-2/kubepods');
  assert.equal(podCgroupPath('/', 'Guaranteed', 'u1'), '/kubepods/podu1');
  assert.equal(podCgroupPath('/', 'Burstable', 'u1'), '/kubepods/burstable/podu1');
  assert.equal(podCgroupPath('/kts/n2', 'BestEffort', 'u1'), '/kts/n2/kubepods/besteffort/podu1');
  assert.deepEqual(podCgroupCandidates('/', 'u1'), ['/kubepods/podu1', '/kubepods/burstable/podu1', '/kubepods/besteffort/podu1']);
});
