import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import { PodResizer, type PodCgroupIO, type ResizeRuntime } from './pod-resizer.ts';

const noop = () => {};
const cpuPod = (uid: string, cpu: string, priority = 0, generation = 1): Pod => ({
  metadata: { uid, name: uid, namespace: 'ns', generation },
  spec: { priority, containers: [{ name: 'c', resources: { requests: { cpu, memory: '64Mi' } } }] },
});

test('retryPendingResizes: a shrinking resize first, then the higher priority takes the room it made; the other stays deferred', () => {
  const pods = new Map<string, Pod>();
  const accepted: string[] = [];
  const woken: string[] = [];
  const resizer = new PodResizer({
    cri: {} as ResizeRuntime['cri'],
    view: {} as ResizeRuntime['view'],
    podCgroupIO: {} as PodCgroupIO,
    events: { event: noop },
    log: { info: noop, warn: noop, error: noop, v: noop } as unknown as Logger,
    allocatable: () => ({ cpu: '2', memory: '1Gi' }),
    activePods: () => [...pods.values()],
    podOf: (uid) => pods.get(uid),
    wake: (uid) => woken.push(uid),
    deferredAccepted: (trigger) => accepted.push(trigger),
  });
  const put = (p: Pod) => pods.set(p.metadata!.uid!, p);
  // Allocated: big 1250m, low and high 250m each (1750m of 2).
  for (const p of [cpuPod('big', '1250m'), cpuPod('low', '250m', 10), cpuPod('high', '250m', 100)]) {
    put(p);
    resizer.allocate(p);
  }
  // low, then high, ask 750m: neither fits next to big.
  for (const p of [cpuPod('low', '750m', 10, 2), cpuPod('high', '750m', 100, 2)]) {
    put(p);
    resizer.podChanged(p, 'pod_updated');
  }
  assert.equal(resizer.allocate(pods.get('low')!).pending?.reason, 'Deferred');
  assert.equal(resizer.allocate(pods.get('high')!).pending?.reason, 'Deferred');
  assert.deepEqual(accepted, []);
  // big shrinks to 750m: tried first (it asks less), then high (priority 100) gets the 500m it
  // made; low would need 500m more than is left.
  woken.length = 0;
  put(cpuPod('big', '750m', 0, 2));
  resizer.podChanged(pods.get('big')!, 'pod_updated');
  assert.deepEqual(accepted, ['pod_updated'], 'high, deferred before, counted once');
  assert.deepEqual(woken.sort(), ['big', 'high'], 'the accepted resizes are synced; low, still deferred alike, is not');
  assert.equal(resizer.allocate(pods.get('high')!).pending, undefined);
  assert.match(resizer.allocate(pods.get('low')!).pending?.message ?? '', /requested: 750, used: 1500, capacity: 2000/);
  resizer.stop();
});
