import { test } from 'node:test';
import assert from 'node:assert/strict';
import { swapControllerFile, swapOn, swapStartError } from './swap.ts';

const HEADER = 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n';

test('swap is on when /proc/swaps lists something after its header (upstream isSwapOnAccordingToProcSwaps)', () => {
  const cases: [string, boolean][] = [
    ['', false],
    [HEADER, false],
    [`${HEADER}\n`, false],
    [`${HEADER}/swapfile                               file\t\t2097148\t\t0\t\t-2\n`, true],
    [`${HEADER}/dev/zram0 partition 8388604 0 100\n/swapfile file 2097148 0 -2\n`, true],
  ];
  for (const [text, want] of cases) assert.equal(swapOn(text), want, JSON.stringify(text));
});

test('the kubelet refuses to start with swap on and failSwapOn, or LimitedSwap on cgroup v1, with upstream messages', () => {
  const on = 'running with swap on is not supported, please disable swap or set --fail-swap-on flag to false';
  const v1Limited = 'swap feature is enabled and LimitedSwap but it is only supported with cgroupv2';
  const cases: [Parameters<typeof swapStartError>[0], string | undefined][] = [
    [{ swapOn: false, failSwapOn: true, swapBehavior: '', cgroupV2: false }, undefined],
    [{ swapOn: true, failSwapOn: true, swapBehavior: '', cgroupV2: true }, on],
    [{ swapOn: true, failSwapOn: true, swapBehavior: 'LimitedSwap', cgroupV2: true }, on],
    [{ swapOn: true, failSwapOn: false, swapBehavior: 'LimitedSwap', cgroupV2: true }, undefined],
    [{ swapOn: true, failSwapOn: false, swapBehavior: 'NoSwap', cgroupV2: false }, undefined],
    [{ swapOn: false, failSwapOn: false, swapBehavior: 'LimitedSwap', cgroupV2: false }, v1Limited],
    // Checked first, as upstream's run() does before the container manager looks at swap.
    [{ swapOn: true, failSwapOn: true, swapBehavior: 'LimitedSwap', cgroupV2: false }, v1Limited],
  ];
  for (const [o, want] of cases) assert.equal(swapStartError(o), want, JSON.stringify(o));
});

test("the swap controller's file: memsw accounting on cgroup v1, memory.swap.max in the kubelet's own cgroup on v2", () => {
  assert.equal(swapControllerFile(false, '12:memory:/kubelet\n'), '/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes');
  assert.equal(
    swapControllerFile(true, '0::/system.slice/kubelet.service\n'),
    '/sys/fs/cgroup/system.slice/kubelet.service/memory.swap.max',
  );
  assert.equal(swapControllerFile(true, '0::/\n', '/tmp/cg'), '/tmp/cg/memory.swap.max');
});
