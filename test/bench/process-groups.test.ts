import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupShares, processGroup } from './process-groups.ts';

test('processGroup: the stack by command line, the kernel by its empty one', () => {
  const cases: [string, string, string][] = [
    ['', 'kworker/u8:1-events', 'kernel threads'],
    ['/work/main/_output/bin/node --no-opt /work/main/dist/cli/main.js --config c.yaml', 'MainThread', 'kubelet-ts'],
    ['/work/main/_output/bin/kubelet --config x', 'kubelet', 'upstream kubelet'],
    ['/root/.cache/kubelet-ts/bin/kube-apiserver --etcd-servers=x', 'kube-apiserver', 'kube-apiserver'],
    ['/cache/etcd --data-dir /var/lib/etcd', 'etcd', 'etcd'],
    ['/work/main/_output/bin/containerd --config c.toml', 'containerd', 'containerd'],
    ['/usr/local/bin/containerd-shim-runc-v2 -namespace k8s.io -id abc', 'containerd-shim', 'shims (and their runc)'],
    ['/pause', 'pause', "pods' pause (runc init's work)"],
    ['node /work/main/test/bench/burst-cpu.ts', 'node', 'the bench'],
    ['sh -c httpd -p 8080', 'sh', 'other: sh'],
    ['/usr/bin/etcdctl get x', 'etcdctl', 'other: etcdctl'],
  ];
  for (const [cmdline, comm, want] of cases) assert.equal(processGroup(cmdline, comm), want, cmdline);
});

test('groupShares: the seconds each group spent between readings, largest first, the small ones together', () => {
  const before = new Map([
    ['containerd', 10],
    ['kubelet-ts', 5],
    ['etcd', 1],
  ]);
  const after = new Map([
    ['containerd', 19],
    ['kubelet-ts', 7.5],
    ['etcd', 1.125],
    ['pods', 0.0625],
  ]);
  assert.deepEqual(groupShares(before, after, 20), [
    ['containerd', 9, 0.45],
    ['kubelet-ts', 2.5, 0.125],
    ['the rest', 0.1875, 0.1875 / 20],
  ]);
});
