// The static policy's cases, each answered by upstream's own code: `want` is what
// k8s.io/kubernetes v1.36.3's NewStaticPolicy, Start, Allocate and RemoveContainer returned for
// the same topology (cAdvisor's MachineInfo built from the same sysfs facts), options and
// requests (a throwaway Go harness, not in this repository). static-policy.test.ts replays them.
import {
  DUAL_SOCKET_HT,
  DUAL_SOCKET_MULTI_NUMA_HT,
  SINGLE_SOCKET_2_CORES,
  SINGLE_SOCKET_HT,
  SINGLE_SOCKET_UNCORE_HT,
  type Shape,
  UPSTREAM_DUAL_SOCKET_HT,
} from '../testing.ts';
import type { CPUSet } from '../cpuset.ts';
import type { SysfsCPU } from '../topology.ts';

export interface Ctr {
  name: string;
  cpu: string;
  init?: boolean;
  restartable?: boolean;
  /** Requests without limits: the pod is Burstable. */
  burstable?: boolean;
}
/** One pod's containers allocated in admission's order (init containers, then the others), or one container removed ("pod/container"). */
export type Step = { pod: string; containers: Ctr[] } | { remove: string };

export interface Case {
  name: string;
  /** A synthetic shape, or sysfs facts given as they are (upstream's own test topologies). */
  shape: Shape | { cpus: SysfsCPU[]; numaNodes: { id: number; cpus: CPUSet }[] };
  numReserved: number;
  reserved?: string;
  options?: Record<string, string>;
  /** The shared pool set before the steps (upstream's test tables start from one). */
  default?: string;
  steps: Step[];
  /** Per step: each container's CPUs ("shared" in the pool, "error: ..."), and the shared pool after it; or the start's error. */
  want: (Record<string, string> | string)[];
}

const g = (name: string, cpu: string, more: Partial<Ctr> = {}): Ctr => ({ name, cpu, ...more });

export const CASES: Case[] = [
  {
    name: 'this machine: reservedSystemCPUs 0, a cpu: 1 container gets CPU 1, a removal gives it back',
    shape: SINGLE_SOCKET_2_CORES,
    numReserved: 1,
    reserved: '0',
    steps: [{ pod: 'p1', containers: [g('c', '1')] }, { remove: 'p1/c' }],
    want: [{ c: '1', default: '0' }, { default: '0-1' }],
  },
  {
    name: 'this machine: the reserved CPU is never given, a second request fails',
    shape: SINGLE_SOCKET_2_CORES,
    numReserved: 1,
    steps: [
      { pod: 'p1', containers: [g('c', '1')] },
      { pod: 'p2', containers: [g('c', '1')] },
    ],
    want: [
      { c: '1', default: '0' },
      { c: 'error: not enough cpus available to satisfy request: requested=1, available=0', default: '0' },
    ],
  },
  {
    name: 'fractional and Burstable containers stay in the shared pool',
    shape: SINGLE_SOCKET_HT,
    numReserved: 1,
    steps: [
      { pod: 'p1', containers: [g('a', '1500m'), g('b', '2')] },
      { pod: 'p2', containers: [g('c', '2', { burstable: true })] },
    ],
    want: [
      { a: 'shared', b: '1,5', default: '0,2-4,6-7' },
      { c: 'shared', default: '0,2-4,6-7' },
    ],
  },
  {
    name: 'SMT: whole cores first, then threads; reserved CPUs by topology',
    shape: SINGLE_SOCKET_HT,
    numReserved: 2,
    steps: [
      { pod: 'p1', containers: [g('a', '2')] },
      { pod: 'p2', containers: [g('a', '3')] },
      { pod: 'p3', containers: [g('a', '1')] },
    ],
    want: [
      { a: '1,5', default: '0,2-4,6-7' },
      { a: '2-3,6', default: '0,4,7' },
      { a: '7', default: '0,4' },
    ],
  },
  {
    name: 'two sockets: a whole socket, then cores of the emptier socket',
    shape: DUAL_SOCKET_HT,
    numReserved: 1,
    steps: [
      { pod: 'p1', containers: [g('a', '6')] },
      { pod: 'p2', containers: [g('a', '2')] },
      { pod: 'p3', containers: [g('a', '3')] },
    ],
    want: [
      { a: '3-5,9-11', default: '0-2,6-8' },
      { a: '1,7', default: '0,2,6,8' },
      { a: '2,6,8', default: '0' },
    ],
  },
  {
    name: 'init containers: their CPUs are reused by the app containers; sidecars keep theirs',
    shape: SINGLE_SOCKET_HT,
    numReserved: 1,
    steps: [
      {
        pod: 'p1',
        containers: [g('init1', '4', { init: true }), g('side', '1', { init: true, restartable: true }), g('app1', '2'), g('app2', '1')],
      },
      { remove: 'p1/init1' },
      { remove: 'p1/app1' },
    ],
    want: [{ app1: '1,5', app2: '2', default: '0,3,7', init1: '1-2,5-6', side: '4' }, { default: '0,3,6-7' }, { default: '0-1,3,5-7' }],
  },
  {
    name: 'full-pcpus-only: an odd request is refused with SMTAlignmentError',
    shape: SINGLE_SOCKET_HT,
    numReserved: 1,
    options: { 'full-pcpus-only': 'true' },
    steps: [
      { pod: 'p1', containers: [g('a', '3')] },
      { pod: 'p2', containers: [g('a', '4')] },
      { pod: 'p3', containers: [g('a', '4')] },
    ],
    want: [
      { a: 'error: SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2', default: '0-7' },
      { a: '1-2,5-6', default: '0,3-4,7' },
      {
        a: 'error: SMT Alignment Error: not enough free physical CPUs: available physical CPUs = 2, requested CPUs = 4, CPUs per core = 2',
        default: '0,3-4,7',
      },
    ],
  },
  {
    name: 'strict-cpu-reservation: the reserved CPUs leave the shared pool',
    shape: SINGLE_SOCKET_HT,
    numReserved: 2,
    options: { 'strict-cpu-reservation': 'true' },
    steps: [{ pod: 'p1', containers: [g('a', '2')] }],
    want: [{ a: '1,5', default: '2-3,6-7' }],
  },
  {
    name: 'distribute-cpus-across-numa: spread evenly over the NUMA nodes',
    shape: DUAL_SOCKET_MULTI_NUMA_HT,
    numReserved: 2,
    options: { 'distribute-cpus-across-numa': 'true' },
    steps: [
      { pod: 'p1', containers: [g('a', '8')] },
      { pod: 'p2', containers: [g('a', '40')] },
      { pod: 'p3', containers: [g('a', '6')] },
    ],
    want: [
      { a: '8-11,40-43', default: '0-7,12-39,44-63' },
      { a: '1-7,16-22,24-30,33-38,48-54,56-61', default: '0,12-15,23,31-32,39,44-47,55,62-63' },
      { a: '12-14,44-46', default: '0,15,23,31-32,39,47,55,62-63' },
    ],
  },
  {
    name: 'distribute-cpus-across-numa with full-pcpus-only: whole cores per node',
    shape: DUAL_SOCKET_MULTI_NUMA_HT,
    numReserved: 2,
    options: { 'distribute-cpus-across-numa': 'true', 'full-pcpus-only': 'true' },
    steps: [
      { pod: 'p1', containers: [g('a', '12')] },
      { pod: 'p2', containers: [g('a', '36')] },
    ],
    want: [
      { a: '8-13,40-45', default: '0-7,14-39,46-63' },
      { a: '1-6,16-21,24-29,33-38,48-53,56-61', default: '0,7,14-15,22-23,30-32,39,46-47,54-55,62-63' },
    ],
  },
  {
    name: 'multi-NUMA packed: whole NUMA nodes, then cores',
    shape: DUAL_SOCKET_MULTI_NUMA_HT,
    numReserved: 1,
    steps: [
      { pod: 'p1', containers: [g('a', '20')] },
      { pod: 'p2', containers: [g('a', '16')] },
      { pod: 'p3', containers: [g('a', '5')] },
    ],
    want: [
      { a: '1-2,8-15,33-34,40-47', default: '0,3-7,16-32,35-39,48-63' },
      { a: '16-23,48-55', default: '0,3-7,24-32,35-39,56-63' },
      { a: '3-4,32,35-36', default: '0,5-7,24-31,37-39,56-63' },
    ],
  },
  {
    name: 'align-by-socket (alpha)',
    shape: DUAL_SOCKET_MULTI_NUMA_HT,
    numReserved: 1,
    options: { 'align-by-socket': 'true' },
    steps: [{ pod: 'p1', containers: [g('a', '20')] }],
    want: [{ a: '1-2,8-15,33-34,40-47', default: '0,3-7,16-32,35-39,48-63' }],
  },
  {
    name: 'align-by-socket refused where sockets outnumber NUMA nodes',
    shape: { sockets: 2, numaPerSocket: 1, coresPerNuma: 2, threadsPerCore: 1, oneNuma: true },
    numReserved: 1,
    options: { 'align-by-socket': 'true' },
    steps: [],
    want: ['error: Align by socket is not compatible with hardware where number of sockets are more than number of NUMA'],
  },
  {
    name: 'prefer-align-cpus-by-uncorecache: a whole uncore cache, then a part of one',
    shape: SINGLE_SOCKET_UNCORE_HT,
    numReserved: 1,
    options: { 'prefer-align-cpus-by-uncorecache': 'true' },
    steps: [
      { pod: 'p1', containers: [g('a', '4')] },
      { pod: 'p2', containers: [g('a', '2')] },
      { pod: 'p3', containers: [g('a', '6')] },
    ],
    want: [
      { a: '2-3,10-11', default: '0-1,4-9,12-15' },
      { a: '4,12', default: '0-1,5-9,13-15' },
      { a: '5-7,13-15', default: '0-1,8-9' },
    ],
  },
  {
    name: 'distribute-cpus-across-cores (alpha): one thread per core first',
    shape: SINGLE_SOCKET_HT,
    numReserved: 1,
    options: { 'distribute-cpus-across-cores': 'true' },
    steps: [
      { pod: 'p1', containers: [g('a', '3')] },
      { pod: 'p2', containers: [g('a', '2')] },
    ],
    want: [
      { a: '1-3', default: '0,4-7' },
      { a: '4-5', default: '0,6-7' },
    ],
  },
  {
    name: 'reservedSystemCPUs of a size other than the reservation is refused',
    shape: SINGLE_SOCKET_HT,
    numReserved: 2,
    reserved: '0',
    steps: [],
    want: ['error: [cpumanager] unable to reserve the required amount of CPUs (size of 0 did not equal 2)'],
  },
  {
    name: 'a shared pool from a table, as upstream tests start from: the request is taken from it',
    shape: DUAL_SOCKET_HT,
    numReserved: 1,
    default: '0-2,4-5,7-11',
    steps: [{ pod: 'p1', containers: [g('a', '4')] }],
    want: [{ a: '1-2,7-8', default: '0,4-5,9-11' }],
  },
  // Rows of upstream's own tables (cpu_assignment_test.go), on its topoDualSocketHT, nothing
  // reserved and the shared pool set to the row's available CPUs; upstream's expected answer in the name.
  {
    name: 'upstream: take one cpu from dual socket with HT - core from Socket 0 (expects 2)',
    shape: UPSTREAM_DUAL_SOCKET_HT,
    numReserved: 0,
    default: '1-5,7-11',
    steps: [{ pod: 'p1', containers: [g('a', '1')] }],
    want: [{ a: '2', default: '1,3-5,7-11' }],
  },
  {
    name: 'upstream: allocate 4 full cores, 3 filling the first NUMA node and 1 from the second (expects "0,6,2,8,4,10,1,7")',
    shape: UPSTREAM_DUAL_SOCKET_HT,
    numReserved: 0,
    steps: [{ pod: 'p1', containers: [g('a', '8')] }],
    want: [{ a: '0-2,4,6-8,10', default: '3,5,9,11' }],
  },
  {
    name: 'upstream: take a socket of cpus from dual socket with HT (expects 0,2,4,6,8,10)',
    shape: UPSTREAM_DUAL_SOCKET_HT,
    numReserved: 0,
    steps: [{ pod: 'p1', containers: [g('a', '6')] }],
    want: [{ a: '0,2,4,6,8,10', default: '1,3,5,7,9,11' }],
  },
  {
    name: 'upstream: distribute-cpus-across-cores, 2 cpus from dual socket with HT (expects 0,2)',
    shape: UPSTREAM_DUAL_SOCKET_HT,
    numReserved: 0,
    options: { 'distribute-cpus-across-cores': 'true' },
    steps: [{ pod: 'p1', containers: [g('a', '2')] }],
    want: [{ a: '0,2', default: '1,3-11' }],
  },
  {
    name: 'prefer-align-cpus-by-uncorecache without SMT: two whole caches, then part of a third',
    shape: { sockets: 1, numaPerSocket: 1, coresPerNuma: 16, threadsPerCore: 1, uncorePerNuma: 4 },
    numReserved: 1,
    options: { 'prefer-align-cpus-by-uncorecache': 'true' },
    steps: [
      { pod: 'p1', containers: [g('a', '10')] },
      { pod: 'p2', containers: [g('a', '3')] },
    ],
    want: [
      { a: '1-2,4-11', default: '0,3,12-15' },
      { a: '12-14', default: '0,3,15' },
    ],
  },
  {
    name: 'distribute-cpus-across-numa: odd requests, the remainder where it balances best',
    shape: DUAL_SOCKET_MULTI_NUMA_HT,
    numReserved: 1,
    options: { 'distribute-cpus-across-numa': 'true' },
    steps: [
      { pod: 'p1', containers: [g('a', '7')] },
      { pod: 'p2', containers: [g('a', '13')] },
      { pod: 'p3', containers: [g('a', '17')] },
    ],
    want: [
      { a: '8-11,40-42', default: '0-7,12-39,43-63' },
      { a: '16-22,48-53', default: '0-7,12-15,23-39,43-47,54-63' },
      { a: '1-4,24-28,33-36,56-59', default: '0,5-7,12-15,23,29-32,37-39,43-47,54-55,60-63' },
    ],
  },
  {
    name: 'full-pcpus-only with reservedSystemCPUs 0: its sibling is not given either',
    shape: SINGLE_SOCKET_HT,
    numReserved: 1,
    reserved: '0',
    options: { 'full-pcpus-only': 'true' },
    steps: [
      { pod: 'p1', containers: [g('a', '6')] },
      { pod: 'p2', containers: [g('a', '2')] },
    ],
    want: [
      { a: '1-3,5-7', default: '0,4' },
      {
        a: 'error: SMT Alignment Error: not enough free physical CPUs: available physical CPUs = 0, requested CPUs = 2, CPUs per core = 2',
        default: '0,4',
      },
    ],
  },
  {
    name: 'strict-cpu-reservation with reservedSystemCPUs: the shared pool never holds them',
    shape: DUAL_SOCKET_HT,
    numReserved: 2,
    reserved: '0,6',
    options: { 'strict-cpu-reservation': 'true' },
    steps: [{ pod: 'p1', containers: [g('a', '4')] }, { remove: 'p1/a' }],
    want: [{ a: '1-2,7-8', default: '3-5,9-11' }, { default: '1-5,7-11' }],
  },
  {
    name: 'several Guaranteed containers and a fractional one in one pod',
    shape: DUAL_SOCKET_HT,
    numReserved: 1,
    steps: [{ pod: 'p1', containers: [g('a', '3'), g('b', '500m'), g('c', '4')] }, { remove: 'p1/a' }, { remove: 'p1/c' }],
    want: [{ a: '1,6-7', b: 'shared', c: '2-3,8-9', default: '0,4-5,10-11' }, { default: '0-1,4-7,10-11' }, { default: '0-11' }],
  },
  {
    name: 'distribute-cpus-across-numa, nothing reserved: the fewest NUMA nodes that hold it, evenly',
    shape: DUAL_SOCKET_MULTI_NUMA_HT,
    numReserved: 0,
    options: { 'distribute-cpus-across-numa': 'true' },
    steps: [{ pod: 'p1', containers: [g('a', '40')] }],
    want: [{ a: '0-6,8-14,16-22,32-38,40-45,48-53', default: '7,15,23-31,39,46-47,54-63' }],
  },
  {
    name: 'distribute-cpus-across-numa with full-pcpus-only, nothing reserved: 36 and 20 CPUs in whole cores',
    shape: DUAL_SOCKET_MULTI_NUMA_HT,
    numReserved: 0,
    options: { 'distribute-cpus-across-numa': 'true', 'full-pcpus-only': 'true' },
    steps: [{ pod: 'p1', containers: [g('a', '36')] }, { remove: 'p1/a' }, { pod: 'p2', containers: [g('a', '20')] }],
    want: [
      { a: '0-5,8-13,16-21,32-37,40-45,48-53', default: '6-7,14-15,22-31,38-39,46-47,54-63' },
      { default: '0-63' },
      { a: '0-4,8-12,32-36,40-44', default: '5-7,13-31,37-39,45-63' },
    ],
  },
];
