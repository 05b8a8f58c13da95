import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaults } from '../config/kubelet-config.ts';
import { memoryReservation } from './container-manager.ts';
import type { KubeletOptions } from './options.ts';

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
  for (const [over, want] of rows) assert.deepEqual(memoryReservation(config(over), 1024 ** 3), want, JSON.stringify(over));
});
