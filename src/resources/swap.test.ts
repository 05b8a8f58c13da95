import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { type NodeSwap, containerSwap, containerSwapBehavior, swapForBurstablePods } from './swap.ts';

const Gi = 1024 ** 3;

test('swapForBurstablePods: the share of swap in proportion to the memory request (upstream calcSwapForBurstablePods)', () => {
  const cases: [number, number, number, number | string][] = [
    [1 * Gi, 40 * Gi, 10 * Gi, 268435456],
    [2 * Gi, 8 * Gi, 4 * Gi, 1 * Gi],
    [1000, 3000, 1000, 333],
    [0, 8 * Gi, 4 * Gi, 0],
    [8 * Gi, 8 * Gi, 2 * Gi, 2 * Gi],
    [1 * Gi, 8 * Gi, 0, 0],
    [1, 0, 4 * Gi, 'total node memory is 0'],
    [9 * Gi, 8 * Gi, 4 * Gi, `container request ${9 * Gi} is larger than total node memory ${8 * Gi}`],
  ];
  for (const [request, memory, swap, want] of cases) {
    if (typeof want === 'string') assert.throws(() => swapForBurstablePods(request, memory, swap), { message: want });
    else assert.equal(swapForBurstablePods(request, memory, swap), want, `${request}/${memory}*${swap}`);
  }
});

const v2: NodeSwap = {
  swapBehavior: 'LimitedSwap',
  cgroupV2: true,
  controllerAvailable: true,
  memoryCapacityBytes: 8 * Gi,
  swapCapacityBytes: 4 * Gi,
};
const v1: NodeSwap = { ...v2, swapBehavior: 'NoSwap', cgroupV2: false };
const ctr = (requests?: Record<string, string>, limits?: Record<string, string>): Container => ({
  name: 'c',
  resources: { requests, limits },
});
const podOf = (c: Container, over: Partial<Pod> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'ns', ...over.metadata },
  spec: { containers: [c], ...over.spec },
});

test('containerSwapBehavior: LimitedSwap only for a Burstable, non-critical container asking for memory below its limit on cgroup v2 (upstream GetContainerSwapBehavior)', () => {
  const burstable = ctr({ memory: '1Gi' }, { memory: '2Gi' });
  const cases: { name: string; pod: Pod; node: NodeSwap; want: 'NoSwap' | 'LimitedSwap' }[] = [
    { name: 'burstable, request below limit', pod: podOf(burstable), node: v2, want: 'LimitedSwap' },
    { name: 'burstable, request and no limit', pod: podOf(ctr({ memory: '1Gi' })), node: v2, want: 'LimitedSwap' },
    { name: 'burstable by cpu only: no memory asked', pod: podOf(ctr({ cpu: '100m' })), node: v2, want: 'NoSwap' },
    { name: 'a limit alone is the request too', pod: podOf(ctr({ cpu: '100m' }, { memory: '1Gi' })), node: v2, want: 'NoSwap' },
    {
      name: 'request equal to the limit (cpu unlimited: still burstable)',
      pod: podOf(ctr({ memory: '1Gi' }, { memory: '1024Mi' })),
      node: v2,
      want: 'NoSwap',
    },
    {
      name: 'guaranteed',
      pod: podOf(ctr({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' })),
      node: v2,
      want: 'NoSwap',
    },
    { name: 'best effort', pod: podOf({ name: 'c' }), node: v2, want: 'NoSwap' },
    {
      name: 'critical by priority',
      pod: podOf(burstable, { spec: { containers: [burstable], priority: 2_000_001_000 } }),
      node: v2,
      want: 'NoSwap',
    },
    {
      name: 'critical: a static pod',
      pod: podOf(burstable, { metadata: { annotations: { 'kubernetes.io/config.source': 'file' } } }),
      node: v2,
      want: 'NoSwap',
    },
    { name: 'NoSwap configured', pod: podOf(burstable), node: { ...v2, swapBehavior: 'NoSwap' }, want: 'NoSwap' },
    { name: 'nothing configured', pod: podOf(burstable), node: { ...v2, swapBehavior: '' }, want: 'NoSwap' },
    { name: 'cgroup v1', pod: podOf(burstable), node: { ...v2, cgroupV2: false }, want: 'NoSwap' },
    { name: 'no swap controller', pod: podOf(burstable), node: { ...v2, controllerAvailable: false }, want: 'NoSwap' },
  ];
  for (const k of cases) assert.equal(containerSwapBehavior(k.pod, k.pod.spec!.containers[0]!, k.node), k.want, k.name);
});

test("containerSwap: the container's CRI swap fields per cgroup version (upstream configureContainerSwapResources)", () => {
  const burstable = ctr({ memory: '1Gi' }, { memory: '2Gi' });
  const cases: { name: string; c: Container; limit: number; node: NodeSwap | undefined; want: object }[] = [
    {
      name: 'v2 LimitedSwap: 1Gi of 8Gi memory gets 1/8 of 4Gi swap',
      c: burstable,
      limit: 2 * Gi,
      node: v2,
      want: { unified: { 'memory.swap.max': '536870912' } },
    },
    {
      name: 'v2 LimitedSwap, no swap on the node: 0',
      c: burstable,
      limit: 2 * Gi,
      node: { ...v2, swapCapacityBytes: 0 },
      want: { unified: { 'memory.swap.max': '0' } },
    },
    {
      name: 'v2 LimitedSwap, a request above node memory: no swap',
      c: ctr({ memory: '16Gi' }),
      limit: 0,
      node: v2,
      want: { unified: { 'memory.swap.max': '0' } },
    },
    {
      name: 'v2 LimitedSwap, a guaranteed container: no swap',
      c: ctr({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' }),
      limit: Gi,
      node: v2,
      want: { unified: { 'memory.swap.max': '0' } },
    },
    {
      name: 'v2 NoSwap',
      c: burstable,
      limit: 2 * Gi,
      node: { ...v2, swapBehavior: 'NoSwap' },
      want: { unified: { 'memory.swap.max': '0' } },
    },
    { name: 'v1 NoSwap: memory+swap is the memory limit', c: burstable, limit: 2 * Gi, node: v1, want: { memorySwapLimitInBytes: 2 * Gi } },
    { name: 'v1 NoSwap, no memory limit: 0 (the runtime decides)', c: ctr(), limit: 0, node: v1, want: { memorySwapLimitInBytes: 0 } },
    {
      name: 'v1 LimitedSwap (refused at start): NoSwap',
      c: burstable,
      limit: 2 * Gi,
      node: { ...v1, swapBehavior: 'LimitedSwap' },
      want: { memorySwapLimitInBytes: 2 * Gi },
    },
    { name: 'no swap controller: nothing', c: burstable, limit: 2 * Gi, node: { ...v2, controllerAvailable: false }, want: {} },
    { name: 'v1 without memsw accounting: nothing', c: burstable, limit: 2 * Gi, node: { ...v1, controllerAvailable: false }, want: {} },
    { name: 'a node that says nothing of swap: nothing', c: burstable, limit: 2 * Gi, node: undefined, want: {} },
  ];
  for (const k of cases) assert.deepEqual(containerSwap(podOf(k.c), k.c, k.limit, k.node), k.want, k.name);
});
