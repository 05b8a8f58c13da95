import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, Toleration } from 'kubernetes-types/core/v1.js';
import { admitUnderPressure } from './admit.ts';
import type { PressureCondition } from './types.ts';

const bestEffort = (tolerations?: Toleration[], extra: Partial<Pod> = {}): Pod => ({
  metadata: { name: 'be' },
  spec: { containers: [{ name: 'c' }], tolerations },
  ...extra,
});
const burstable: Pod = { metadata: { name: 'b' }, spec: { containers: [{ name: 'c', resources: { requests: { memory: '10Mi' } } }] } };
const guaranteed: Pod = {
  metadata: { name: 'g' },
  spec: { containers: [{ name: 'c', resources: { limits: { cpu: '1', memory: '1Gi' } } }] },
};
const verdict = (p: Pod, c: PressureCondition[]) => {
  const a = admitUnderPressure(p, c);
  return a.admit ? 'admit' : `${a.reason}: ${a.message}`;
};

test('admission under pressure', () => {
  const memReject = 'Evicted: Pod was rejected: The node had condition: [MemoryPressure]. ';
  const cases: [string, Pod, PressureCondition[], string][] = [
    ['no pressure', bestEffort(), [], 'admit'],
    ['memory pressure, burstable', burstable, ['MemoryPressure'], 'admit'],
    ['memory pressure, guaranteed', guaranteed, ['MemoryPressure'], 'admit'],
    ['memory pressure, best effort', bestEffort(), ['MemoryPressure'], memReject],
    [
      'tolerates the memory-pressure taint',
      bestEffort([{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }]),
      ['MemoryPressure'],
      'admit',
    ],
    [
      'tolerates it by key alone',
      bestEffort([{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists' }]),
      ['MemoryPressure'],
      'admit',
    ],
    ['tolerates everything', bestEffort([{ operator: 'Exists' }]), ['MemoryPressure'], 'admit'],
    [
      'Equal with an empty value',
      bestEffort([{ key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }]),
      ['MemoryPressure'],
      'admit',
    ],
    [
      'Equal with a value',
      bestEffort([{ key: 'node.kubernetes.io/memory-pressure', value: 'x', effect: 'NoSchedule' }]),
      ['MemoryPressure'],
      memReject,
    ],
    [
      'tolerates only NoExecute',
      bestEffort([{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoExecute' }]),
      ['MemoryPressure'],
      memReject,
    ],
    [
      'tolerates disk pressure instead',
      bestEffort([{ key: 'node.kubernetes.io/disk-pressure', operator: 'Exists' }]),
      ['MemoryPressure'],
      memReject,
    ],
    [
      'disk pressure rejects even guaranteed',
      guaranteed,
      ['DiskPressure'],
      'Evicted: Pod was rejected: The node had condition: [DiskPressure]. ',
    ],
    ['pid pressure', burstable, ['PIDPressure'], 'Evicted: Pod was rejected: The node had condition: [PIDPressure]. '],
    [
      'memory and disk, tolerated memory',
      bestEffort([{ operator: 'Exists' }]),
      ['DiskPressure', 'MemoryPressure'],
      'Evicted: Pod was rejected: The node had condition: [MemoryPressure DiskPressure]. ',
    ],
    [
      'critical by priority',
      bestEffort(undefined, { spec: { containers: [{ name: 'c' }], priority: 2_000_001_000 } }),
      ['DiskPressure', 'PIDPressure'],
      'admit',
    ],
    [
      'static pod',
      bestEffort(undefined, { metadata: { annotations: { 'kubernetes.io/config.source': 'file' } } }),
      ['DiskPressure'],
      'admit',
    ],
  ];
  for (const [name, p, c, want] of cases) assert.equal(verdict(p, c), want, name);
});
