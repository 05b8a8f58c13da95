// Swap as the node reports it and as containers get it (NodeSwap, GA): the Node's
// nodeInfo.swap.capacity is the host's SwapTotal when it has swap and absent without; with
// memorySwap.swapBehavior unset (NoSwap) a container's memory+swap limit is its memory limit
// on cgroup v1, and memory.swap.max is 0 on v2, as upstream's configureContainerSwapResources.
// On a node with swap (a swap file this test makes): failSwapOn, the default, keeps the kubelet
// from starting, and LimitedSwap does on cgroup v1, each with upstream's words; with
// failSwapOn false the Node reports the swap, as upstream's kubelet does.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { swapControllerFile } from '../../src/node/swap.ts';
import { ROOT, clients, ensureStack, eventually, kubectl, nodeName, podSpec, restartKubelet, withNamespace } from './stack.ts';

before(() => ensureStack());

const swapTotalBytes = () => Number(/^SwapTotal:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) * 1024;

test("nodeInfo.swap: the node's swap capacity when it has swap, nothing without", async () => {
  const node = await clients().core.readNode({ name: nodeName() });
  const swap = swapTotalBytes();
  if (swap) assert.equal(node.status?.nodeInfo?.swap?.capacity, swap);
  else assert.equal(node.status?.nodeInfo?.swap, undefined, 'no swap on this host');
});

const cgroupV2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
/**
 * The file by which the kubelet tells whether the node accounts swap in memory cgroups
 * (src/node/swap.ts): memsw on cgroup v1 (the kernel's swapaccount), memory.swap.max in the
 * kubelet's own cgroup on v2. Without it upstream (and kubelet-ts) set nothing.
 */
const swapController = () => {
  const pid = readFileSync(join(ROOT, '_output/local/pids/kubelet-ts.child.pid'), 'utf8').trim();
  return swapControllerFile(cgroupV2, readFileSync(`/proc/${pid}/cgroup`, 'utf8'));
};

test('NoSwap: memory+swap is the memory limit (cgroup v1), memory.swap.max is 0 (v2)', async () => {
  const controller = swapController();
  // A node that cannot show NoSwap fails the test rather than skip it: the stack is expected to account swap.
  assert.ok(existsSync(controller), `the node does not account swap in memory cgroups (no ${controller}): NoSwap cannot be shown`);
  await withNamespace(async (ns) => {
    const body = podSpec('noswap');
    body.spec!.containers[0]!.resources = { requests: { memory: '32Mi' }, limits: { memory: '64Mi' } };
    await clients().core.createNamespacedPod({ namespace: ns, body });
    await eventually('pod noswap Running', 60_000, async () => {
      const p = await clients().core.readNamespacedPod({ name: 'noswap', namespace: ns });
      return p.status?.phase === 'Running';
    });
    // The container's own cgroup, as runc mounts it at /sys/fs/cgroup. The node accounts swap,
    // so the file is there: a missing one fails, as a wrong value does.
    const cat = (file: string) => {
      const v = kubectl('-n', ns, 'exec', 'noswap', '--', 'sh', '-c', `cat ${file} 2>/dev/null || echo missing`).trim();
      assert.notEqual(v, 'missing', `${file} is missing in the container, though the node accounts swap (${controller})`);
      return v;
    };
    if (cgroupV2) {
      assert.equal(cat('/sys/fs/cgroup/memory.swap.max'), '0');
    } else {
      assert.equal(cat('/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes'), String(64 * 2 ** 20));
      assert.equal(cat('/sys/fs/cgroup/memory/memory.limit_in_bytes'), String(64 * 2 ** 20));
    }
  });
});

const SWAP_FILE = '/var/tmp/kts-e2e.swap';
const KUBELET_LOG = join(ROOT, '_output/local/logs/kubelet-ts.log');
const swapOff = () => {
  if (readFileSync('/proc/swaps', 'utf8').includes(SWAP_FILE)) execFileSync('swapoff', [SWAP_FILE]);
  rmSync(SWAP_FILE, { force: true });
};
const nodeReady = async () =>
  (await clients().core.readNode({ name: nodeName() })).status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

// Whatever happens: swap off again and the kubelet back on the stack's own configuration.
after(async () => {
  swapOff();
  restartKubelet();
  await eventually('the node Ready again', 90_000, nodeReady, 1000);
});

test('a node with swap: failSwapOn refuses to start, LimitedSwap on cgroup v1 too; with failSwapOn false nodeInfo.swap is its SwapTotal', async () => {
  swapOff();
  execFileSync('fallocate', ['-l', '64M', SWAP_FILE]);
  execFileSync('chmod', ['600', SWAP_FILE]);
  execFileSync('mkswap', [SWAP_FILE], { stdio: 'ignore' });
  execFileSync('swapon', [SWAP_FILE]);
  assert.ok(swapTotalBytes() >= 60 * 2 ** 20, 'the swap file is on');

  /** Restarts the kubelet with these fields and waits for this line in what it logs from now on. */
  const refused = async (yaml: string | undefined, line: string) => {
    const from = statSync(KUBELET_LOG).size;
    restartKubelet(yaml);
    await eventually(`"${line}" in the kubelet's log`, 30_000, async () =>
      readFileSync(KUBELET_LOG).subarray(from).toString('utf8').includes(`kubelet-ts: error: ${line}`),
    );
  };
  await refused(undefined, 'running with swap on is not supported, please disable swap or set --fail-swap-on flag to false');
  if (!cgroupV2)
    await refused(
      'failSwapOn: false\nmemorySwap:\n  swapBehavior: LimitedSwap\n',
      'swap feature is enabled and LimitedSwap but it is only supported with cgroupv2',
    );

  restartKubelet('failSwapOn: false\n');
  await eventually('the node Ready with swap on', 90_000, nodeReady, 1000);
  const swap = await eventually(
    'nodeInfo.swap',
    30_000,
    async () => (await clients().core.readNode({ name: nodeName() })).status?.nodeInfo?.swap,
  );
  assert.equal(swap.capacity, swapTotalBytes());
});
