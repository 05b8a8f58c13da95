import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CPUSet } from './cpuset.ts';
import {
  DUAL_SOCKET_HT,
  DUAL_SOCKET_MULTI_NUMA_HT,
  SINGLE_SOCKET_2_CORES,
  SINGLE_SOCKET_HT,
  SINGLE_SOCKET_UNCORE_HT,
  topologyOf,
  type Shape,
} from './testing.ts';
import {
  alignedAtUncoreCache,
  cpusPerCore,
  cpusPerNUMA,
  cpusPerSocket,
  cpusPerUncore,
  discoverTopology,
  readSysfsTopology,
} from './topology.ts';

test('discoverTopology counts as upstream Discover does', () => {
  const rows: [
    name: string,
    shape: Shape,
    counts: [cpus: number, cores: number, sockets: number, numa: number, uncore: number],
    perCore: number,
  ][] = [
    ['1 socket, 2 cores, no HT', SINGLE_SOCKET_2_CORES, [2, 2, 1, 1, 1], 1],
    ['1 socket HT', SINGLE_SOCKET_HT, [8, 4, 1, 1, 1], 2],
    ['2 sockets HT', DUAL_SOCKET_HT, [12, 6, 2, 2, 2], 2],
    ['2 sockets x 2 NUMA x 8 cores HT', DUAL_SOCKET_MULTI_NUMA_HT, [64, 32, 2, 4, 2], 2],
    ['uncore caches', SINGLE_SOCKET_UNCORE_HT, [16, 8, 1, 2, 4], 2],
  ];
  for (const [name, shape, [cpus, cores, sockets, numa, uncore], perCore] of rows) {
    const t = topologyOf(shape);
    assert.deepEqual([t.numCPUs, t.numCores, t.numSockets, t.numNUMANodes, t.numUncoreCaches], [cpus, cores, sockets, numa, uncore], name);
    assert.equal(cpusPerCore(t), perCore, name);
  }
});

test('a core is named by its lowest thread, and the details answer by socket, NUMA node, core', () => {
  const t = topologyOf(DUAL_SOCKET_HT);
  assert.deepEqual(t.details.info(6), { numaNode: 0, socket: 0, core: 0, uncoreCache: 0 });
  assert.deepEqual(t.details.info(9), { numaNode: 1, socket: 1, core: 3, uncoreCache: 1 });
  assert.equal(t.details.cpusInCores(0).toString(), '0,6');
  assert.equal(t.details.cpusInSockets(1).toString(), '3-5,9-11');
  assert.equal(t.details.cpusInNUMANodes(0).toString(), '0-2,6-8');
  assert.equal(t.details.coresInSockets(1).toString(), '3-5');
  assert.equal(cpusPerSocket(t), 6);
  const m = topologyOf(DUAL_SOCKET_MULTI_NUMA_HT);
  assert.equal(m.details.numaNodesInSockets(1).toString(), '2-3');
  assert.equal(m.details.socketsInNUMANodes(1, 2).toString(), '0-1');
  assert.equal(
    m.details
      .keepOnly(CPUSet.of(0, 1, 32))
      .cpus()
      .toString(),
    '0-1,32',
  );
  const u = topologyOf(SINGLE_SOCKET_UNCORE_HT);
  assert.equal(cpusPerUncore(u), 4);
  assert.equal(u.details.cpusInUncoreCaches(0).toString(), '0-1,8-9');
  assert.equal(u.details.uncoreInNUMANodes(1).toString(), '2-3');
  assert.equal(u.details.coresNeededInUncoreCache(1, 1).toString(), '2');
  assert.ok(alignedAtUncoreCache(u, CPUSet.of(0, 9)));
  assert.ok(!alignedAtUncoreCache(u, CPUSet.of(0, 2)));
});

test('cpusPerNUMA: the CPUs each NUMA node holds of a set; nodes holding none absent', () => {
  const t = topologyOf(DUAL_SOCKET_MULTI_NUMA_HT); // 4 NUMA nodes of 16 CPUs
  const [n0, n2] = [t.details.cpusInNUMANodes(0).list(), t.details.cpusInNUMANodes(2).list()];
  const cases: [string, CPUSet, [number, number][]][] = [
    ['none', CPUSet.EMPTY, []],
    ['three of node 0', CPUSet.of(...n0.slice(0, 3)), [[0, 3]]],
    [
      'one of node 0, two of node 2',
      CPUSet.of(n0[0]!, ...n2.slice(0, 2)),
      [
        [0, 1],
        [2, 2],
      ],
    ],
  ];
  for (const [name, cpus, want] of cases) assert.deepEqual([...cpusPerNUMA(t, cpus)].sort(), want, name);
});

test('discoverTopology: no NUMA node in sysfs is one node 0; no CPU is refused', () => {
  const t = discoverTopology(
    [
      { cpu: 0, packageId: 0, coreId: 0 },
      { cpu: 1, packageId: 0, coreId: 0 },
    ],
    [],
  );
  assert.deepEqual([t.numCPUs, t.numCores, t.numNUMANodes], [2, 1, 1]);
  assert.equal(t.details.info(1)?.core, 0);
  assert.throws(() => discoverTopology([], []), /could not detect number of cpus/);
});

test('readSysfsTopology reads a sysfs tree', () => {
  const root = mkdtempSync(join(tmpdir(), 'sysfs-'));
  const put = (p: string, v: string) => {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), `${v}\n`);
  };
  put('devices/system/cpu/online', '0-1');
  for (const cpu of [0, 1]) {
    put(`devices/system/cpu/cpu${cpu}/topology/physical_package_id`, '0');
    put(`devices/system/cpu/cpu${cpu}/topology/core_id`, String(cpu));
    put(`devices/system/cpu/cpu${cpu}/cache/index0/level`, '1');
    put(`devices/system/cpu/cpu${cpu}/cache/index3/level`, '3');
    put(`devices/system/cpu/cpu${cpu}/cache/index3/id`, '0');
  }
  put('devices/system/node/node0/cpulist', '0-1');
  const facts = readSysfsTopology(root);
  assert.deepEqual(facts.cpus, [
    { cpu: 0, packageId: 0, coreId: 0, l3Id: 0 },
    { cpu: 1, packageId: 0, coreId: 1, l3Id: 0 },
  ]);
  assert.equal(facts.numaNodes[0]?.cpus.toString(), '0-1');
  const t = discoverTopology(facts.cpus, facts.numaNodes);
  assert.deepEqual([t.numCPUs, t.numCores, t.numSockets, t.numNUMANodes, t.numUncoreCaches], [2, 2, 1, 1, 1]);
});
