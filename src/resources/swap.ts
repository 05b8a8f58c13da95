// Swap for a container (KubeletConfiguration memorySwap.swapBehavior; NodeSwap is GA), as
// upstream's configureContainerSwapResources (kuberuntime_container_linux.go) sets it in the
// container's LinuxContainerResources: NoSwap keeps it out of swap, LimitedSwap gives a
// Burstable container a share of the node's swap in proportion to its memory request. Pure.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { isCriticalPod } from '../podutil/podutil.ts';
import { bytes } from './linux-resources.ts';
import { qosClass } from './qos.ts';

/** What the node knows of swap (src/node/swap.ts reads it at start). */
export interface NodeSwap {
  /** memorySwap.swapBehavior: LimitedSwap, else NoSwap ('' included, as upstream defaults it). */
  swapBehavior: string;
  cgroupV2: boolean;
  /** Memory cgroups account swap (upstream's checkSwapControllerAvailability): without it, nothing is set. */
  controllerAvailable: boolean;
  memoryCapacityBytes: number;
  /** SwapTotal of /proc/meminfo (cadvisor's SwapCapacity). */
  swapCapacityBytes: number;
}

/** The swap fields of a container's CRI LinuxContainerResources. */
export interface ContainerSwap {
  /** cgroup v1: memory+swap (memory.memsw.limit_in_bytes). */
  memorySwapLimitInBytes?: number;
  /** cgroup v2: memory.swap.max. */
  unified?: Record<string, string>;
}

const SWAP_MAX = 'memory.swap.max';

/**
 * Upstream's calcSwapForBurstablePods: (request / node memory) * node swap, truncated. Throws
 * with upstream's message when the node's memory is unknown or smaller than the request.
 */
export function swapForBurstablePods(requestBytes: number, nodeMemoryBytes: number, swapBytes: number): number {
  if (nodeMemoryBytes <= 0) throw new Error('total node memory is 0');
  if (requestBytes > nodeMemoryBytes)
    throw new Error(`container request ${requestBytes} is larger than total node memory ${nodeMemoryBytes}`);
  return Math.trunc((requestBytes / nodeMemoryBytes) * swapBytes);
}

/**
 * Upstream's GetContainerSwapBehavior: LimitedSwap only on cgroup v2 with the swap controller,
 * for a Burstable pod that is not critical, and a container that asks for memory with a request
 * below its limit; everything else NoSwap.
 */
export function containerSwapBehavior(pod: Pod, c: Container, node: NodeSwap): 'NoSwap' | 'LimitedSwap' {
  if (node.swapBehavior !== 'LimitedSwap' || !node.controllerAvailable || !node.cgroupV2 || isCriticalPod(pod)) return 'NoSwap';
  const { request, limit } = memory(c);
  if (qosClass(pod) !== 'Burstable' || (request === 0 && limit === 0) || request === limit) return 'NoSwap';
  return 'LimitedSwap';
}

// A limit without a request is the request too, as the apiserver defaults it.
function memory(c: Container) {
  const lim = c.resources?.limits?.memory;
  return { request: bytes(c.resources?.requests?.memory ?? lim), limit: bytes(lim) };
}

/**
 * Upstream's configureContainerSwapResources: nothing without a swap controller (or a node that
 * says nothing of swap). NoSwap: on cgroup v1 memory+swap equal to the memory limit (0, no limit,
 * leaves it to the runtime), on v2 memory.swap.max 0. LimitedSwap: memory.swap.max the
 * container's share; should it not be computable (admission keeps requests within the node's
 * memory), no swap, as upstream.
 */
export function containerSwap(pod: Pod, c: Container, memoryLimitBytes: number, node: NodeSwap | undefined): ContainerSwap {
  if (!node?.controllerAvailable) return {};
  if (containerSwapBehavior(pod, c, node) === 'LimitedSwap') {
    try {
      return { unified: { [SWAP_MAX]: String(swapForBurstablePods(memory(c).request, node.memoryCapacityBytes, node.swapCapacityBytes)) } };
    } catch {
      return { unified: { [SWAP_MAX]: '0' } };
    }
  }
  return node.cgroupV2 ? { unified: { [SWAP_MAX]: '0' } } : { memorySwapLimitInBytes: memoryLimitBytes };
}
