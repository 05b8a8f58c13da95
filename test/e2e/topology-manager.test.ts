// The topology and memory managers on this 1-NUMA, 2-CPU node, as upstream's node e2e tests
// (test/e2e_node/topology_manager_test.go, memory_manager_test.go) check them: the kubelet
// restarted with cpuManagerPolicy: static, reservedSystemCPUs: "0", topologyManagerPolicy:
// single-numa-node, memoryManagerPolicy: Static and reservedMemory matching the node allocatable
// reservation (only the default hard eviction threshold here: memory.available 100Mi). A
// Guaranteed pod that fits runs on CPU 1 with cpuset.mems 0, named in memory_manager_state
// (upstream's format, byte for byte) and in PodResources' memory; a Guaranteed pod asking 2 CPUs
// (one is reserved, so no NUMA node can give them) is Failed with TopologyAffinityError, as
// upstream refuses it. Both state files are removed around each policy change (a kubelet refuses
// a checkpoint of another policy), and the stack's own configuration is restored afterwards.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { CPU_MANAGER_STATE_FILE, unmarshalCheckpoint as cpuState } from '../../src/cpumanager/checkpoint.ts';
import { MEMORY_MANAGER_STATE_FILE, marshalCheckpoint, unmarshalCheckpoint } from '../../src/memorymanager/checkpoint.ts';
import { podResources } from './pod-resources.ts';
import { nodeReady, runPinned, waitForCpuRoom } from './pinned-pods.ts';
import {
  KUBELET_ROOT_DIR,
  clients,
  ensureStack,
  eventually,
  kubectl,
  nodeName,
  podSpec,
  restartKubelet,
  seriesValue,
  withNamespace,
} from './stack.ts';

before(() => ensureStack());

const CPU_STATE = `${KUBELET_ROOT_DIR}/${CPU_MANAGER_STATE_FILE}`;
const MEMORY_STATE = `${KUBELET_ROOT_DIR}/${MEMORY_MANAGER_STATE_FILE}`;
const Mi = 1024 * 1024;
// One-line fields: hack/kubelet.sh replaces the stack's own one-line fields of the same names.
const ALIGNED =
  'cpuManagerPolicy: static\nreservedSystemCPUs: "0"\ncpuManagerReconcilePeriod: 2s\n' +
  'topologyManagerPolicy: single-numa-node\ntopologyManagerScope: container\n' +
  'memoryManagerPolicy: Static\nreservedMemory: [{numaNode: 0, limits: {memory: 100Mi}}]\n';

/** memory_manager_state as the kubelet wrote it, its checksum checked (src/memorymanager/checkpoint.ts). */
const memoryState = () => unmarshalCheckpoint(readFileSync(MEMORY_STATE, 'utf8'));

/** Back on the stack's own configuration (policies none/None), whatever happened: both state files go first. */
after(async () => {
  await eventually(
    'no assignments left in the state files',
    60_000,
    async () =>
      (!existsSync(MEMORY_STATE) || memoryState().entries.size === 0) &&
      (!existsSync(CPU_STATE) || Object.keys(cpuState(readFileSync(CPU_STATE, 'utf8')).entries).length === 0),
    1000,
  ).catch(() => undefined);
  rmSync(CPU_STATE, { force: true });
  rmSync(MEMORY_STATE, { force: true });
  restartKubelet();
  await eventually('the node Ready again', 90_000, nodeReady, 1000);
});

/** A file of the container's cpuset cgroup (cgroup v1's cpuset controller, or v2's file). */
const cpusetFile = (ns: string, pod: string, file: 'cpus' | 'mems') =>
  kubectl(
    '-n',
    ns,
    'exec',
    pod,
    '--',
    'sh',
    '-c',
    `cat /sys/fs/cgroup/cpuset/cpuset.${file} 2>/dev/null || cat /sys/fs/cgroup/cpuset.${file}`,
  ).trim();

function guaranteed(name: string, cpu: string): V1Pod {
  const r = { cpu, memory: '64Mi' };
  // nodeName: the scheduler would not place a pod asking more CPUs than the node's allocatable.
  const p = podSpec(name, { nodeName: nodeName() });
  p.spec!.containers[0]!.resources = { requests: r, limits: r };
  return p;
}

test('single-numa-node with static CPUs and Static memory: an aligned pod runs with cpuset.mems 0, one asking 2 CPUs fails TopologyAffinityError', async () => {
  assert.equal(readFileSync('/sys/devices/system/cpu/online', 'utf8').trim(), '0-1', 'this test is written for a 2-CPU node');
  assert.ok(!existsSync('/sys/devices/system/node/node1'), 'this test is written for a 1-NUMA node');
  rmSync(CPU_STATE, { force: true });
  rmSync(MEMORY_STATE, { force: true });
  restartKubelet(ALIGNED);
  await eventually('the node Ready with the static policies', 90_000, nodeReady, 1000);
  await eventually(
    'allocatable cpu 1 with CPU 0 reserved',
    60_000,
    async () => (await clients().core.readNode({ name: nodeName() })).status?.allocatable?.cpu === '1',
    1000,
  );
  // The machine state of the one NUMA node: its memory less the 100Mi reserved.
  const start = memoryState();
  assert.equal(start.policyName, 'Static');
  assert.deepEqual([...start.machineState.keys()], [0]);
  assert.equal(start.machineState.get(0)!.memoryMap.memory!.systemReserved, 100 * Mi);
  assert.equal(start.entries.size, 0);

  await withNamespace(async (ns) => {
    await waitForCpuRoom(ns);
    const aligned = await runPinned(ns, guaranteed('aligned', '1'), (q) =>
      assert.notEqual(q.status?.reason, 'TopologyAffinityError', `aligned refused: ${q.status?.message}`),
    );
    const uid = aligned.metadata!.uid!;
    assert.equal(cpusetFile(ns, 'aligned', 'cpus'), '1', 'CPU 1 alone');
    assert.equal(cpusetFile(ns, 'aligned', 'mems'), '0', "the memory manager's NUMA node");

    // memory_manager_state: the container's block on node 0, upstream's v1 format byte for byte.
    const text = readFileSync(MEMORY_STATE, 'utf8');
    const st = memoryState();
    assert.deepEqual(st.entries.get(uid)?.get('main'), [{ numaAffinity: [0], type: 'memory', size: 64 * Mi }]);
    assert.equal(text, marshalCheckpoint(st));
    const node0 = st.machineState.get(0)!;
    assert.deepEqual([node0.numberOfAssignments, node0.cells, node0.memoryMap.memory!.reserved], [1, [0], 64 * Mi]);

    // PodResources: the container's memory and the node's allocatable memory.
    const { podResources: listed } = await podResources((c) => c.List);
    const main = listed.find((p) => p.namespace === ns && p.name === 'aligned')?.containers.find((c) => c.name === 'main');
    assert.deepEqual(main?.cpuIds.map(Number), [1]);
    assert.deepEqual(main?.memory, [{ memoryType: 'memory', size: String(64 * Mi), topology: { nodes: [{ ID: '0' }] } }]);
    const alloc = await podResources((c) => c.GetAllocatableResources);
    assert.ok(
      alloc.memory.some((m) => m.memoryType === 'memory' && m.topology?.nodes[0]?.ID === '0' && Number(m.size) > 0),
      'allocatable memory on node 0',
    );

    // 2 CPUs: only CPU 1 is not reserved, so no NUMA node can hold them; single-numa-node refuses
    // the pod before the resource fit does, as upstream's topology admit handler does.
    await clients().core.createNamespacedPod({ namespace: ns, body: guaranteed('unaligned', '2') });
    const refused = await eventually('pod unaligned Failed', 60_000, async () => {
      const q = await clients().core.readNamespacedPod({ name: 'unaligned', namespace: ns });
      return q.status?.phase === 'Failed' && q;
    });
    assert.equal(refused.status?.reason, 'TopologyAffinityError');
    assert.equal(refused.status?.message, 'Pod was rejected: Resources cannot be allocated with Topology locality');
    assert.equal(memoryState().entries.has(refused.metadata!.uid!), false, 'no memory for the refused pod');
    // What a dashboard of aligned allocations reads: the aligned container counted, the refused one as a failure.
    const exposition = kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`);
    const numaAligned = (name: string) => seriesValue(exposition, `kubelet_${name}{boundary="numa_node",scope="container"}`);
    assert.ok(
      numaAligned('container_aligned_compute_resources_count') >= 1,
      exposition.match(/^kubelet_container_aligned.*$/gm)?.join('\n'),
    );
    assert.equal(numaAligned('container_aligned_compute_resources_failure_count'), 1);

    // The aligned pod goes: its memory is given back.
    await clients().core.deleteNamespacedPod({ name: 'aligned', namespace: ns, gracePeriodSeconds: 0 });
    await eventually('the memory back on node 0', 60_000, async () => memoryState().entries.size === 0, 1000);
    assert.equal(memoryState().machineState.get(0)!.memoryMap.memory!.reserved, 0);
  });
});
