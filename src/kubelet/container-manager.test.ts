import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaults } from '../config/kubelet-config.ts';
import { memoryReservation } from './container-manager.ts';
import { allocatableEvictionHard, type KubeletOptions } from './options.ts';

test("memoryReservation: GetNodeAllocatableReservation's memory types, hard eviction last", () => {
  const config = (over: Partial<KubeletOptions['config']>) => ({ ...defaults, ...over }) as KubeletOptions['config'];
  const rows: [Partial<KubeletOptions['config']>, Record<string, string[]>][] = [
    [{}, { memory: ['100Mi'] }],
    [
      { kubeReserved: { cpu: '1', memory: '1Gi' }, systemReserved: { memory: '500Mi', 'hugepages-2Mi': '4Mi' } },
      { memory: ['500Mi', '1Gi', '100Mi'], 'hugepages-2Mi': ['4Mi'] },
    ],
    [{ evictionHard: { 'memory.available': '10%' } }, { memory: ['107374182'] }],
    [{ evictionHard: {} }, {}],
  ];
  for (const [over, want] of rows) {
    const c = config(over);
    assert.deepEqual(memoryReservation(c, c.evictionHard, 1024 ** 3), want, JSON.stringify(over));
  }
});

test('--experimental-allocatable-ignore-eviction: no hard eviction threshold withheld from allocatable; eviction keeps it', () => {
  const o = (ignore: boolean) => ({ config: defaults, allocatableIgnoresEviction: ignore }) as KubeletOptions;
  assert.deepEqual(allocatableEvictionHard(o(false)), defaults.evictionHard);
  assert.deepEqual(allocatableEvictionHard(o(true)), {});
  assert.deepEqual(memoryReservation(defaults, allocatableEvictionHard(o(true)), 1024 ** 3), {});
});
