import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { ensureSystemCgroups, invalidSystemCgroups, systemContainerNames } from './system-cgroups.ts';

const none = { kubeletCgroups: '', systemCgroups: '', runtimeCgroups: '' };

const invalid: [string, Partial<typeof none>, string | undefined][] = [
  ['none set', {}, undefined],
  ['all absolute', { kubeletCgroups: '/kubelet', systemCgroups: '/system', runtimeCgroups: '/runtime' }, undefined],
  ['systemCgroups "/" (setupNode)', { systemCgroups: '/' }, 'systemCgroups: system container cannot be root ("/")'],
  ['a relative name', { kubeletCgroups: 'kubelet' }, 'kubeletCgroups: "kubelet" is not an absolute cgroup name'],
];
for (const [name, c, want] of invalid) {
  test(`invalidSystemCgroups: ${name}`, () => assert.equal(invalidSystemCgroups({ ...none, ...c }), want));
}

const names: [string, Partial<typeof none>, string | undefined, object, string?][] = [
  [
    'configured names win',
    { kubeletCgroups: '/k', runtimeCgroups: '/r', systemCgroups: '/s' },
    '/own',
    { kubelet: '/k', runtime: '/r', misc: '/s' },
  ],
  ['the kubelet in a cgroup of its own', {}, '/system.slice/kubelet.service', { kubelet: '/system.slice/kubelet.service' }],
  ["the kubelet in the root: none (its figures would be the node's)", {}, '/', {}],
  ['the kubelet in a pod (a static pod): none', {}, '/kubepods/burstable/pod1/c1', {}],
  ['the own cgroup unknown', {}, undefined, {}],
  // cgroupsPerQOS false: the pods' cgroup is cgroupRoot, the root by default.
  [
    'pods in the root: the kubelet in a cgroup of its own',
    {},
    '/system.slice/kubelet.service',
    { kubelet: '/system.slice/kubelet.service' },
    '/',
  ],
  ['pods in the root: the kubelet in the root, none', {}, '/', {}, '/'],
];
for (const [name, c, own, want, pods = '/kubepods'] of names) {
  test(`systemContainerNames: ${name}`, () => {
    const got = systemContainerNames({ ...none, ...c }, own, pods);
    assert.deepEqual(Object.fromEntries(Object.entries(got).filter(([, v]) => v)), want);
  });
}

/** A cgroup v1 tree with cpu (cpu,cpuacct's link), memory and the named systemd hierarchy, and a /proc. */
function fakeHost(t: { after: (fn: () => void) => void }, rootPids: number[], kernel: number[]) {
  const dir = mkdtempSync(`${tmpdir()}/system-cgroups-`);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const h of ['cpu,cpuacct', 'cpuset', 'memory', 'systemd']) {
    mkdirSync(`${dir}/cg/${h}`, { recursive: true });
    writeFileSync(`${dir}/cg/${h}/cgroup.procs`, `${rootPids.join('\n')}\n`);
  }
  writeFileSync(`${dir}/cg/cpuset/cpuset.cpus`, '0-1\n');
  writeFileSync(`${dir}/cg/cpuset/cpuset.mems`, '0\n');
  // As the kernel makes them: a new cpuset cgroup's files exist, empty.
  for (const sub of ['/kubelet.slice', '/kubelet.slice/inner']) {
    mkdirSync(`${dir}/cg/cpuset${sub}`, { recursive: true });
    for (const f of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(`${dir}/cg/cpuset${sub}/${f}`, '\n');
  }
  symlinkSync('cpu,cpuacct', `${dir}/cg/cpu`);
  for (const pid of rootPids) {
    mkdirSync(`${dir}/proc/${pid}`, { recursive: true });
    if (!kernel.includes(pid)) symlinkSync('/bin/sh', `${dir}/proc/${pid}/exe`);
  }
  return { root: `${dir}/cg`, proc: `${dir}/proc` };
}

test('ensureSystemCgroups: the kubelet into kubeletCgroups in every controller, not the named systemd hierarchy', (t) => {
  const h = fakeHost(t, [1, 2, 40], [2]);
  assert.deepEqual(ensureSystemCgroups({ ...none, kubeletCgroups: '/kubelet.slice' }, { ...h, pid: 77 }), []);
  assert.equal(readFileSync(`${h.root}/memory/kubelet.slice/cgroup.procs`, 'utf8'), '77');
  assert.equal(readFileSync(`${h.root}/cpu,cpuacct/kubelet.slice/cgroup.procs`, 'utf8'), '77');
  assert.throws(() => readFileSync(`${h.root}/systemd/kubelet.slice/cgroup.procs`));
  // cpuset: the parent's CPUs and memory nodes first, else the kernel refuses the PID.
  assert.deepEqual(
    ['cpuset.cpus', 'cpuset.mems', 'cgroup.procs'].map((f) => readFileSync(`${h.root}/cpuset/kubelet.slice/${f}`, 'utf8')),
    ['0-1', '0', '77'],
  );
});

test('ensureSystemCgroups: a nested cpuset cgroup inherits level by level', (t) => {
  const h = fakeHost(t, [1], []);
  assert.deepEqual(ensureSystemCgroups({ ...none, kubeletCgroups: '/kubelet.slice/inner' }, { ...h, pid: 9 }), []);
  assert.equal(readFileSync(`${h.root}/cpuset/kubelet.slice/inner/cpuset.cpus`, 'utf8'), '0-1');
});

test("ensureSystemCgroups: the root cgroup's processes into systemCgroups, but init and kernel threads", (t) => {
  const h = fakeHost(t, [1, 2, 40], [2]);
  assert.deepEqual(ensureSystemCgroups({ ...none, systemCgroups: '/system' }, h), []);
  // The fake root keeps listing 40 (a real kernel moves it), so the last write is 40's.
  assert.equal(readFileSync(`${h.root}/memory/system/cgroup.procs`, 'utf8'), '40');
});

test('ensureSystemCgroups: a failure names the cgroup and goes on', (t) => {
  const h = fakeHost(t, [1], []);
  writeFileSync(`${h.root}/memory/blocked`, 'a file where the cgroup should be');
  const errors = ensureSystemCgroups({ ...none, kubeletCgroups: '/blocked' }, { ...h, pid: 5 });
  assert.equal(errors.length, 1);
  assert.match(errors[0]!, /failed to move the kubelet into \/blocked/);
});
