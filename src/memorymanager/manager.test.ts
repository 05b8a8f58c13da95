import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { logger } from '../log/log.ts';
import { MemoryManager, newMemoryPolicy, sumQuantities } from './manager.ts';
import { ctr, Gi, machine, pod } from './testing.ts';

test('newMemoryPolicy: reservedMemory must add up to the node allocatable reservation, per type', () => {
  const nodes = machine(2, 4);
  const rows: [
    reservation: Record<string, string[]>,
    reserved: { numaNode: number; limits: Record<string, string> }[],
    want: RegExp | 'Static' | 'None',
    policy?: string,
  ][] = [
    [{ memory: ['1Gi'] }, [{ numaNode: 0, limits: { memory: '1Gi' } }], 'Static'],
    [
      { memory: ['500Mi', '100Mi'] },
      [
        { numaNode: 0, limits: { memory: '300Mi' } },
        { numaNode: 1, limits: { memory: '300Mi' } },
      ],
      'Static',
    ],
    [
      { memory: ['100Mi'] },
      [],
      /^Error: the total amount "0" of type "memory" is not equal to the value "100Mi" determined by Node Allocatable feature$/,
    ],
    [
      { memory: ['100Mi'] },
      [{ numaNode: 0, limits: { memory: '1Gi' } }],
      /^Error: the total amount "1Gi" of type "memory" is not equal to the value "100Mi" determined by Node Allocatable feature$/,
    ],
    [
      { memory: ['1Gi'] },
      [{ numaNode: 3, limits: { memory: '1Gi' } }],
      /^Error: the reserved memory configuration references a NUMA node 3 that does not exist on this machine$/,
    ],
    [{ cpu: ['1'] }, [], /you should specify the system reserved memory/],
    [{ memory: ['100Mi'] }, [], 'None', 'None'],
    [{}, [], /^Error: unknown policy: "static"$/, 'static'],
  ];
  for (const [reservation, reserved, want, policy] of rows) {
    if (typeof want === 'string') assert.equal(newMemoryPolicy(policy ?? 'Static', nodes, reservation, reserved).name, want);
    else assert.throws(() => newMemoryPolicy(policy ?? 'Static', nodes, reservation, reserved), want);
  }
  assert.deepEqual(sumQuantities(['1Gi', '100Mi']), { bytes: Gi + 100 * 2 ** 20, text: '1124Mi' });
});

test('MemoryManager: start writes the checkpoint, allocate names cpuset.mems, a pod gone gives its memory back', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mm-'));
  let active = [pod('a', ctr('c', { memory: '1Gi' }))];
  const seen: string[] = [];
  const m = new MemoryManager({
    observe: { pinningRequest: () => seen.push('request'), pinningError: () => seen.push('error') },
    rootDir: dir,
    policy: newMemoryPolicy('Static', machine(2, 4), { memory: ['1Gi'] }, [{ numaNode: 0, limits: { memory: '1Gi' } }]),
    activePods: () => active,
    sourcesReady: () => true,
    log: logger('test'),
  });
  m.start();
  const p = active[0]!;
  m.allocate(p, p.spec!.containers[0]!, { preferred: false });
  assert.equal(m.cpusetMems('a', 'c'), '0');
  const huge = pod('h', ctr('c', { memory: '100Gi' }));
  assert.throws(() => m.allocate(huge, huge.spec!.containers[0]!, { preferred: false }), /no NUMA nodes with enough memory/);
  assert.deepEqual(seen, ['request', 'request', 'error']);
  assert.deepEqual(m.memory('a', 'c'), [{ numaAffinity: [0], type: 'memory', size: Gi }]);
  assert.match(
    readFileSync(join(dir, 'memory_manager_state'), 'utf8'),
    /"entries":\{"a":\{"c":\[\{"numaAffinity":\[0\],"type":"memory","size":1073741824\}\]\}\}/,
  );
  assert.deepEqual(
    m.allocatable().map((b) => `${b.type}@${b.numaAffinity}=${b.size / Gi}`),
    ['memory@0=3', 'memory@1=4'],
  );
  active = [];
  // The next decision drops the pod gone: its container is asked afresh (nodes 0, 1, both).
  assert.equal(m.hints(p, p.spec!.containers[0]!)?.memory?.length, 3);
  assert.equal(m.cpusetMems('a', 'c'), undefined);
  assert.doesNotMatch(readFileSync(join(dir, 'memory_manager_state'), 'utf8'), /"entries"/);
});
