import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  MEMORY_MANAGER_STATE_FILE,
  marshalCheckpoint,
  restoreState,
  spewCheckpoint,
  unmarshalCheckpoint,
  writeState,
} from './checkpoint.ts';
import type { MemoryCheckpoint } from './checkpoint.ts';

const table = (total: number, systemReserved: number, reserved: number) => ({
  total,
  systemReserved,
  allocatable: total - systemReserved,
  reserved,
  free: total - systemReserved - reserved,
});

// Each row's text and spew are what upstream v1.36.3's MemoryManagerCheckpointV1.MarshalCheckpoint
// and dump.ForHash gave for the same data (hack/tools/memorymanager-check, a throwaway run).
const UPSTREAM: [name: string, data: MemoryCheckpoint, text: string, spew?: string][] = [
  [
    'two NUMA nodes, hugepages, two pods',
    {
      policyName: 'Static',
      machineState: new Map([
        [
          0,
          {
            numberOfAssignments: 1,
            memoryMap: { memory: table(8000000000, 600000000, 1073741824), 'hugepages-2Mi': table(0, 0, 0) },
            cells: [0],
          },
        ],
        [1, { numberOfAssignments: 0, memoryMap: { memory: table(100, 1, 0) } as Record<string, ReturnType<typeof table>>, cells: [1] }],
      ]),
      entries: new Map([
        ['pod-b', new Map([['c2', [{ numaAffinity: [0], type: 'memory', size: 1073741824 }]]])],
        [
          'pod-a',
          new Map([
            [
              'c',
              [
                { numaAffinity: [0, 1], type: 'hugepages-2Mi', size: 2097152 },
                { numaAffinity: [0], type: 'memory', size: 5 },
              ],
            ],
          ]),
        ],
      ]),
    },
    '{"policyName":"Static","machineState":{"0":{"numberOfAssignments":1,"memoryMap":{"hugepages-2Mi":{"total":0,"systemReserved":0,"allocatable":0,"reserved":0,"free":0},"memory":{"total":8000000000,"systemReserved":600000000,"allocatable":7400000000,"reserved":1073741824,"free":6326258176}},"cells":[0]},"1":{"numberOfAssignments":0,"memoryMap":{"memory":{"total":100,"systemReserved":1,"allocatable":99,"reserved":0,"free":99}},"cells":[1]}},"entries":{"pod-a":{"c":[{"numaAffinity":[0,1],"type":"hugepages-2Mi","size":2097152},{"numaAffinity":[0],"type":"memory","size":5}]},"pod-b":{"c2":[{"numaAffinity":[0],"type":"memory","size":1073741824}]}},"checksum":2753296556}',
    '(*state.MemoryManagerCheckpoint){PolicyName:(string)Static MachineState:(state.NUMANodeMap)map[0:<*>{NumberOfAssignments:(int)1 MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[hugepages-2Mi:<*>{TotalMemSize:(uint64)0 SystemReserved:(uint64)0 Allocatable:(uint64)0 Reserved:(uint64)0 Free:(uint64)0} memory:<*>{TotalMemSize:(uint64)8000000000 SystemReserved:(uint64)600000000 Allocatable:(uint64)7400000000 Reserved:(uint64)1073741824 Free:(uint64)6326258176}] Cells:([]int)[0]} 1:<*>{NumberOfAssignments:(int)0 MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[memory:<*>{TotalMemSize:(uint64)100 SystemReserved:(uint64)1 Allocatable:(uint64)99 Reserved:(uint64)0 Free:(uint64)99}] Cells:([]int)[1]}] Entries:(state.ContainerMemoryAssignments)map[pod-a:map[c:[{NUMAAffinity:([]int)[0 1] Type:(v1.ResourceName)hugepages-2Mi Size:(uint64)2097152} {NUMAAffinity:([]int)[0] Type:(v1.ResourceName)memory Size:(uint64)5}]] pod-b:map[c2:[{NUMAAffinity:([]int)[0] Type:(v1.ResourceName)memory Size:(uint64)1073741824}]]] Checksum:(checksum.Checksum)0}',
  ],
];

test('marshalCheckpoint writes byte for byte what upstream writes, checksum included', () => {
  for (const [name, data, text, spew] of UPSTREAM) {
    if (spew) assert.equal(spewCheckpoint(data), spew, name);
    assert.equal(marshalCheckpoint(data), text, name);
    assert.equal(marshalCheckpoint(unmarshalCheckpoint(text)), text, name);
  }
});

test('unmarshalCheckpoint: 0 is accepted, a wrong checksum is corrupt', () => {
  assert.equal(unmarshalCheckpoint('{"policyName":"None","machineState":{},"checksum":0}').policyName, 'None');
  assert.throws(() => unmarshalCheckpoint('{"policyName":"None","machineState":{},"checksum":12}'), /checkpoint is corrupted/);
});

test('restoreState: written when absent, another policy refused with upstream text', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mm-'));
  const s = restoreState(dir, 'None');
  assert.equal(s.machine.size, 0);
  assert.match(readFileSync(join(dir, MEMORY_MANAGER_STATE_FILE), 'utf8'), /^\{"policyName":"None","machineState":\{\},"checksum":\d+\}$/);
  assert.throws(
    () => restoreState(dir, 'Static'),
    /could not restore state from checkpoint: \[memorymanager\] configured policy "Static" differs from state checkpoint policy "None", please drain this node and delete the memory manager checkpoint file ".*memory_manager_state" before restarting Kubelet/,
  );
  writeState(dir, 'Static', { machine: UPSTREAM[0]![1].machineState, assignments: UPSTREAM[0]![1].entries });
  assert.equal(readFileSync(join(dir, MEMORY_MANAGER_STATE_FILE), 'utf8'), UPSTREAM[0]![2]);
  writeFileSync(join(dir, MEMORY_MANAGER_STATE_FILE), '{"policyName":"Static","machineState":{},"checksum":1}');
  assert.throws(() => restoreState(dir, 'Static'), /checkpoint is corrupted/);
});
