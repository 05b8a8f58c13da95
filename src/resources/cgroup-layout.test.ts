import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cgroupLayout,
  configuredCgroupPath,
  containerCgroupOf,
  containerCgroupPath,
  nodeAllocatableRoot,
  podCgroupCandidates,
  podCgroupParent,
  podCgroupPath,
  qosCgroup,
  sliceOf,
  toSystemd,
} from './cgroup-layout.ts';

const fs = (root = '/') => cgroupLayout('cgroupfs', root);
const sd = (root = '/') => cgroupLayout('systemd', root);
const UID = '6f1c0a2e-93b4-4d1e-8c1a-0b5e2f7d9a11';
const ESCAPED = '6f1c0a2e_93b4_4d1e_8c1a_0b5e2f7d9a11';

test('both layouts name the same cgroups, each as its driver does', () => {
  const rows: [string, string | undefined, string | undefined][] = [
    // [what, cgroupfs, systemd]
    ['kubepods', nodeAllocatableRoot(fs()), nodeAllocatableRoot(sd())],
    ['burstable', qosCgroup(fs(), 'burstable'), qosCgroup(sd(), 'burstable')],
    ['besteffort', qosCgroup(fs(), 'besteffort'), qosCgroup(sd(), 'besteffort')],
    ['guaranteed pod', podCgroupPath(fs(), 'Guaranteed', UID), podCgroupPath(sd(), 'Guaranteed', UID)],
    ['burstable pod', podCgroupPath(fs(), 'Burstable', UID), podCgroupPath(sd(), 'Burstable', UID)],
    ['besteffort pod', podCgroupPath(fs(), 'BestEffort', UID), podCgroupPath(sd(), 'BestEffort', UID)],
  ];
  assert.deepEqual(rows, [
    ['kubepods', '/kubepods', '/kubepods.slice'],
    ['burstable', '/kubepods/burstable', '/kubepods.slice/kubepods-burstable.slice'],
    ['besteffort', '/kubepods/besteffort', '/kubepods.slice/kubepods-besteffort.slice'],
    ['guaranteed pod', `/kubepods/pod${UID}`, `/kubepods.slice/kubepods-pod${ESCAPED}.slice`],
    ['burstable pod', `/kubepods/burstable/pod${UID}`, `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${ESCAPED}.slice`],
    [
      'besteffort pod',
      `/kubepods/besteffort/pod${UID}`,
      `/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${ESCAPED}.slice`,
    ],
  ]);
});

test('cgroupRoot: the cgroupfs form, below which kubepods is made with either driver', () => {
  assert.equal(nodeAllocatableRoot(fs('')), '/kubepods');
  assert.equal(nodeAllocatableRoot(fs('/kts/node-2')), '/kts/node-2/kubepods');
  assert.equal(nodeAllocatableRoot(fs('kts/node-2/')), '/kts/node-2/kubepods');
  assert.equal(podCgroupPath(fs('/kts/n2'), 'BestEffort', 'u1'), '/kts/n2/kubepods/besteffort/podu1');
  // A component's dash is escaped, so kts-n2 stays one slice level.
  assert.equal(nodeAllocatableRoot(sd('/kts-n2')), '/kts_n2.slice/kts_n2-kubepods.slice');
  assert.equal(toSystemd([]), '/');
});

// upstream's NodeAllocatableRoot, qosContainerManagerNoop and podContainerManagerNoop (GetPodContainerName: cgroupRoot, "").
test('cgroupsPerQOS false: the pods root is cgroupRoot, and no pod has a cgroup; the sandbox parent is empty', () => {
  const noQos = (driver: 'cgroupfs' | 'systemd', root = '/') => cgroupLayout(driver, root, false);
  const rows: [string, unknown, unknown][] = [
    ['pods root', nodeAllocatableRoot(noQos('cgroupfs')), '/'],
    ['pods root, systemd', nodeAllocatableRoot(noQos('systemd')), '/'],
    ['pods root below a cgroupRoot', nodeAllocatableRoot(noQos('cgroupfs', '/kts/n2')), '/kts/n2'],
    ['pods root below a cgroupRoot, systemd', nodeAllocatableRoot(noQos('systemd', '/kts-n2')), '/kts_n2.slice'],
    ['pod cgroup', podCgroupPath(noQos('cgroupfs'), 'Burstable', 'u1'), undefined],
    ['pod cgroup, systemd', podCgroupPath(noQos('systemd'), 'Guaranteed', 'u1'), undefined],
    ['candidates', podCgroupCandidates(noQos('cgroupfs'), 'u1'), []],
    ['sandbox cgroup_parent', podCgroupParent(noQos('systemd'), 'BestEffort', 'u1'), ''],
    ['sandbox cgroup_parent with cgroupsPerQOS', podCgroupParent(fs(), 'BestEffort', 'u1'), '/kubepods/besteffort/podu1'],
    ["a container: containerd's default without a cgroup parent", containerCgroupOf(noQos('cgroupfs'), undefined, 'abc'), '/k8s.io/abc'],
    ['a container below its pod', containerCgroupOf(fs(), '/kubepods/podu1', 'abc'), '/kubepods/podu1/abc'],
    ['a container whose pod cgroup is not found', containerCgroupOf(fs(), undefined, 'abc'), undefined],
  ];
  for (const [name, got, want] of rows) assert.deepEqual(got, want, name);
});

test('pod candidates: every QoS class, in the layout of the driver', () => {
  assert.deepEqual(podCgroupCandidates(fs(), 'u1'), ['/kubepods/podu1', '/kubepods/burstable/podu1', '/kubepods/besteffort/podu1']);
  assert.deepEqual(podCgroupCandidates(sd(), 'u-1'), [
    '/kubepods.slice/kubepods-podu_1.slice',
    '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podu_1.slice',
    '/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podu_1.slice',
  ]);
});

test("containers: containerd's directory below the pod's", () => {
  assert.equal(containerCgroupPath(fs(), '/kubepods/podu1', 'abc'), '/kubepods/podu1/abc');
  assert.equal(
    containerCgroupPath(sd(), '/kubepods.slice/kubepods-podu1.slice', 'abc'),
    '/kubepods.slice/kubepods-podu1.slice/cri-containerd-abc.scope',
  );
});

test('sliceOf: the unit and its parent, the root slice at the top; not a slice: undefined', () => {
  assert.deepEqual(sliceOf('/kubepods.slice'), { unit: 'kubepods.slice', parent: '-.slice' });
  assert.deepEqual(sliceOf('/kubepods.slice/kubepods-burstable.slice'), { unit: 'kubepods-burstable.slice', parent: 'kubepods.slice' });
  assert.equal(sliceOf('/kubepods/burstable'), undefined);
  assert.equal(sliceOf('/'), undefined);
});

// upstream's cgroupManager.CgroupName then Name (ParseSystemdToCgroupName, ParseCgroupfsToCgroupName).
test('configuredCgroupPath: a reserved cgroup as each driver names it', () => {
  const rows: [string, 'cgroupfs' | 'systemd', string, string][] = [
    ['a slice', 'systemd', '/system.slice', '/system.slice'],
    ['the cgroupfs form', 'systemd', '/system', '/system.slice'],
    ['a nested slice, expanded from its name', 'systemd', '/system.slice/system-kube.slice', '/system.slice/system-kube.slice'],
    ['only the last element counts', 'systemd', '/a.slice/b.slice', '/b.slice'],
    ['an escaped dash', 'systemd', '/kube_reserved.slice', '/kube_reserved.slice'],
    ['cgroupfs: the path', 'cgroupfs', '/kube-reserved', '/kube-reserved'],
    ['cgroupfs: slashes cleaned', 'cgroupfs', 'system.slice//x/', '/system.slice/x'],
  ];
  for (const [name, driver, path, want] of rows) assert.equal(configuredCgroupPath(driver, path), want, name);
});
