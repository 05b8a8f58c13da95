import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CPUSet, parseCPUSet } from './cpuset.ts';
import { takeDistributed, takePacked } from './take-by-topology.ts';
import { DUAL_SOCKET_MULTI_NUMA_HT, topologyOf, UPSTREAM_DUAL_SOCKET_HT } from './testing.ts';

// Rows of upstream's TestTakeByTopologyNUMAPacked and TestTakeByTopologyWithSpreadPhysicalCPUsPreferredOption
// (cpu_assignment_test.go) on its topoDualSocketHT, with upstream's expected answers.
test('takePacked answers upstream rows: whole sockets, then whole cores, then threads; spread across cores', () => {
  const t = topologyOf(UPSTREAM_DUAL_SOCKET_HT);
  const rows: [name: string, available: string, n: number, strategy: 'packed' | 'spread', want: string][] = [
    ['take one cpu from dual socket with HT - core from Socket 0', '1-5,7-11', 1, 'packed', '2'],
    ['take a socket of cpus from dual socket with HT', '0-11', 6, 'packed', '0,2,4,6,8,10'],
    ['allocate 4 full cores with 3 coming from the first NUMA node and 1 from the second', '0-11', 8, 'packed', '0,6,2,8,4,10,1,7'],
    ['take a socket of cpus from dual socket with HT, 2 cpus (distribute-cpus-across-cores)', '0-11', 2, 'spread', '0,2'],
    ['nothing asked', '0-11', 0, 'packed', ''],
  ];
  for (const [name, available, n, strategy, want] of rows)
    assert.equal(
      takePacked(t, parseCPUSet(available), n, strategy, false).toString(),
      CPUSet.of(...(want ? want.split(',').map(Number) : [])).toString(),
      name,
    );
  assert.throws(
    () => takePacked(t, parseCPUSet('0-1'), 3, 'packed', false),
    /not enough cpus available to satisfy request: requested=3, available=2/,
  );
});

// The answers are upstream's (testdata/static-policy-cases.ts has the same requests, answered by its code).
test('takeDistributed: the fewest NUMA nodes that hold the request, evenly, in groups; other sizes go packed', () => {
  const t = topologyOf(DUAL_SOCKET_MULTI_NUMA_HT);
  const all = t.details.cpus();
  const perNUMA = (s: CPUSet) => [0, 1, 2, 3].map((n) => s.intersection(t.details.cpusInNUMANodes(n)).size);
  const rows: [n: number, group: number, want: number[]][] = [
    [8, 1, [8, 0, 0, 0]],
    [40, 1, [14, 13, 13, 0]],
    [36, 2, [12, 12, 12, 0]],
    [20, 2, [10, 10, 0, 0]],
  ];
  for (const [n, group, want] of rows)
    assert.deepEqual(perNUMA(takeDistributed(t, all, n, group, 'packed')), want, `${n} in groups of ${group}`);
  assert.equal(takeDistributed(t, all, 3, 2, 'packed').toString(), takePacked(t, all, 3, 'packed', false).toString());
});
