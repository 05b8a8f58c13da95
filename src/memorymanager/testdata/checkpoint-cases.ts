// memory_manager_state cases: src/memorymanager/checkpoint.test.ts checks that ours writes `text`
// (and hashes `spew`); hack/memorymanager-check.sh has upstream's own MemoryManagerCheckpointV1
// read our text and write it again, and checks it gives the same text and spew.
import type { MemoryCheckpoint } from '../checkpoint.ts';

const table = (total: number, systemReserved: number, reserved: number) => ({
  total,
  systemReserved,
  allocatable: total - systemReserved,
  reserved,
  free: total - systemReserved - reserved,
});

export const CHECKPOINT_CASES: [name: string, data: MemoryCheckpoint, text: string, spew?: string][] = [
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
  [
    'the None policy: no machine state, no entries',
    { policyName: 'None', machineState: new Map(), entries: new Map() },
    '{"policyName":"None","machineState":{},"checksum":4236770233}',
  ],
  [
    'NUMA nodes 2 and 10: JSON keys sorted as text, spew keys as numbers',
    {
      policyName: 'Static',
      machineState: new Map([
        [10, { numberOfAssignments: 2, memoryMap: { memory: table(2048, 0, 1024) }, cells: [2, 10] }],
        [2, { numberOfAssignments: 2, memoryMap: { memory: table(1024, 24, 1000) }, cells: [2, 10] }],
      ]),
      entries: new Map([
        [
          'uid-1',
          new Map([
            ['z', [{ numaAffinity: [2, 10], type: 'memory', size: 1024 }]],
            ['a', [{ numaAffinity: [2, 10], type: 'memory', size: 1000 }]],
          ]),
        ],
      ]),
    },
    '{"policyName":"Static","machineState":{"10":{"numberOfAssignments":2,"memoryMap":{"memory":{"total":2048,"systemReserved":0,"allocatable":2048,"reserved":1024,"free":1024}},"cells":[2,10]},"2":{"numberOfAssignments":2,"memoryMap":{"memory":{"total":1024,"systemReserved":24,"allocatable":1000,"reserved":1000,"free":0}},"cells":[2,10]}},"entries":{"uid-1":{"a":[{"numaAffinity":[2,10],"type":"memory","size":1000}],"z":[{"numaAffinity":[2,10],"type":"memory","size":1024}]}},"checksum":1132909842}',
    '(*state.MemoryManagerCheckpoint){PolicyName:(string)Static MachineState:(state.NUMANodeMap)map[2:<*>{NumberOfAssignments:(int)2 MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[memory:<*>{TotalMemSize:(uint64)1024 SystemReserved:(uint64)24 Allocatable:(uint64)1000 Reserved:(uint64)1000 Free:(uint64)0}] Cells:([]int)[2 10]} 10:<*>{NumberOfAssignments:(int)2 MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[memory:<*>{TotalMemSize:(uint64)2048 SystemReserved:(uint64)0 Allocatable:(uint64)2048 Reserved:(uint64)1024 Free:(uint64)1024}] Cells:([]int)[2 10]}] Entries:(state.ContainerMemoryAssignments)map[uid-1:map[a:[{NUMAAffinity:([]int)[2 10] Type:(v1.ResourceName)memory Size:(uint64)1000}] z:[{NUMAAffinity:([]int)[2 10] Type:(v1.ResourceName)memory Size:(uint64)1024}]]] Checksum:(checksum.Checksum)0}',
  ],
  [
    'this machine in the e2e: one node, 100Mi reserved, a 64Mi container',
    {
      policyName: 'Static',
      machineState: new Map([
        [
          0,
          {
            numberOfAssignments: 1,
            memoryMap: {
              'hugepages-1Gi': table(0, 0, 0),
              'hugepages-2Mi': table(0, 0, 0),
              memory: table(23045332992, 104857600, 67108864),
            },
            cells: [0],
          },
        ],
      ]),
      entries: new Map([
        ['0b5f5d1c-1111-4d2a-9e0e-2d0c1f6b7a10', new Map([['main', [{ numaAffinity: [0], type: 'memory', size: 67108864 }]]])],
      ]),
    },
    '{"policyName":"Static","machineState":{"0":{"numberOfAssignments":1,"memoryMap":{"hugepages-1Gi":{"total":0,"systemReserved":0,"allocatable":0,"reserved":0,"free":0},"hugepages-2Mi":{"total":0,"systemReserved":0,"allocatable":0,"reserved":0,"free":0},"memory":{"total":23045332992,"systemReserved":104857600,"allocatable":22940475392,"reserved":67108864,"free":22873366528}},"cells":[0]}},"entries":{"0b5f5d1c-1111-4d2a-9e0e-2d0c1f6b7a10":{"main":[{"numaAffinity":[0],"type":"memory","size":67108864}]}},"checksum":107436696}',
  ],
];
