// Swap on the node, read once at start: whether the kubelet may run with it (failSwapOn and
// memorySwap.swapBehavior, as upstream's kubelet run() and NewContainerManager refuse), and what
// containers get of it (src/resources/swap.ts): the cgroup version, whether memory cgroups
// account swap, the node's memory and swap. The Node's nodeInfo.swap is in status.ts.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log/log.ts';
import type { NodeSwap } from '../resources/swap.ts';

/** Pure: upstream's isSwapOnAccordingToProcSwaps: /proc/swaps lists a device or file after its header. */
export const swapOn = (procSwaps: string): boolean => procSwaps.trim().split('\n').length > 1;

/** Pure: why the kubelet must not start, in upstream's words, in upstream's order; else undefined. */
export function swapStartError(o: { swapOn: boolean; failSwapOn: boolean; swapBehavior: string; cgroupV2: boolean }): string | undefined {
  if (!o.cgroupV2 && o.swapBehavior === 'LimitedSwap')
    return 'swap feature is enabled and LimitedSwap but it is only supported with cgroupv2';
  if (o.swapOn && o.failSwapOn) return 'running with swap on is not supported, please disable swap or set --fail-swap-on flag to false';
  return undefined;
}

/**
 * Pure: the file upstream's checkSwapControllerAvailability looks for: memory+swap accounting in
 * the v1 memory hierarchy, or memory.swap.max in the kubelet's own v2 cgroup (the root has none).
 */
export function swapControllerFile(cgroupV2: boolean, procSelfCgroup: string, root = '/sys/fs/cgroup'): string {
  if (!cgroupV2) return `${root}/memory/memory.memsw.limit_in_bytes`;
  const own = /^0::(.*)$/m.exec(procSelfCgroup)?.[1] ?? '/';
  return join(root, own, 'memory.swap.max');
}

const read = (path: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/**
 * The node's swap for its containers; throws (the kubelet does not start) with upstream's message
 * when swap is on and failSwapOn, or LimitedSwap is asked for on cgroup v1.
 */
export function nodeSwapAtStart(
  o: { failSwapOn: boolean; swapBehavior: string; memoryCapacityBytes: number; swapCapacityBytes: number; log: Logger },
  root = '/sys/fs/cgroup',
): NodeSwap {
  const cgroupV2 = existsSync(`${root}/cgroup.controllers`);
  // No /proc/swaps: swap is off, as upstream assumes.
  const procSwaps = read('/proc/swaps') ?? '';
  const on = swapOn(procSwaps);
  if (on) o.log.info('Swap is on', { '/proc/swaps contents': procSwaps.trim() });
  const problem = swapStartError({ swapOn: on, failSwapOn: o.failSwapOn, swapBehavior: o.swapBehavior, cgroupV2 });
  if (problem) throw new Error(problem);
  if (!o.failSwapOn && o.swapBehavior === '')
    o.log.info('NoSwap is set due to memorySwapBehavior not specified', { memorySwapBehavior: '', FailSwapOn: false });
  return {
    swapBehavior: o.swapBehavior,
    cgroupV2,
    controllerAvailable: existsSync(swapControllerFile(cgroupV2, read('/proc/self/cgroup') ?? '', root)),
    memoryCapacityBytes: o.memoryCapacityBytes,
    swapCapacityBytes: o.swapCapacityBytes,
  };
}
