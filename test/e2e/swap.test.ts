// Swap as the node reports it and as containers get it (NodeSwap, GA): the Node's
// nodeInfo.swap.capacity is the host's SwapTotal when it has swap and absent without; with
// memorySwap.swapBehavior unset (NoSwap) a container's memory+swap limit is its memory limit
// on cgroup v1, and memory.swap.max is 0 on v2, as upstream's configureContainerSwapResources.
// (failSwapOn: the stack's host has no swap, so the refusal to start is unit-tested only.)
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { clients, ensureStack, eventually, kubectl, nodeName, podSpec, withNamespace } from './stack.ts';

before(() => ensureStack());

const swapTotalBytes = () => Number(/^SwapTotal:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) * 1024;

test("nodeInfo.swap: the node's swap capacity when it has swap, nothing without", async () => {
  const node = await clients().core.readNode({ name: nodeName() });
  const swap = swapTotalBytes();
  if (swap) assert.equal(node.status?.nodeInfo?.swap?.capacity, swap);
  else assert.equal(node.status?.nodeInfo?.swap, undefined, 'no swap on this host');
});

const cgroupV2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
// cgroup v1 accounts swap only with the kernel's swapaccount: without it upstream (and kubelet-ts) set nothing.
const noController = !cgroupV2 && !existsSync('/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes');

test(
  'NoSwap: memory+swap is the memory limit (cgroup v1), memory.swap.max is 0 (v2)',
  { skip: noController && 'the kernel does not account swap in memory cgroups' },
  () =>
    withNamespace(async (ns) => {
      const body = podSpec('noswap');
      body.spec!.containers[0]!.resources = { requests: { memory: '32Mi' }, limits: { memory: '64Mi' } };
      await clients().core.createNamespacedPod({ namespace: ns, body });
      await eventually('pod noswap Running', 60_000, async () => {
        const p = await clients().core.readNamespacedPod({ name: 'noswap', namespace: ns });
        return p.status?.phase === 'Running';
      });
      // The container's own cgroup, as runc mounts it at /sys/fs/cgroup.
      const cat = (file: string) => kubectl('-n', ns, 'exec', 'noswap', '--', 'sh', '-c', `cat ${file} 2>/dev/null || echo none`).trim();
      if (cgroupV2) {
        const max = cat('/sys/fs/cgroup/memory.swap.max');
        assert.ok(max === '0' || max === 'none', `memory.swap.max: ${max}`);
      } else {
        assert.equal(cat('/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes'), String(64 * 2 ** 20));
        assert.equal(cat('/sys/fs/cgroup/memory/memory.limit_in_bytes'), String(64 * 2 ** 20));
      }
    }),
);
