// The CPU manager's static policy on this 2-CPU node, as upstream's node e2e tests
// (test/e2e_node/cpu_manager_test.go) check it: the kubelet restarted with
// cpuManagerPolicy: static and reservedSystemCPUs: "0"; a Guaranteed pod with cpu: 1 gets CPU 1
// alone (its container's cpuset.cpus, PodResources' cpu_ids, cpu_manager_state in upstream's
// format), a BestEffort pod runs in the shared pool (CPU 0), a kubelet restart keeps the
// assignment, and deleting the pod gives CPU 1 back to the shared pool, which the reconcile loop
// applies to the running BestEffort container. As upstream's tests do, the state file is removed
// before each policy change (a kubelet refuses a checkpoint of another policy).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { CPU_MANAGER_STATE_FILE, marshalCheckpoint, unmarshalCheckpoint } from '../../src/cpumanager/checkpoint.ts';
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
import { podResources } from './pod-resources.ts';

before(() => ensureStack());

const STATE = `${KUBELET_ROOT_DIR}/${CPU_MANAGER_STATE_FILE}`;
const STATIC = 'cpuManagerPolicy: static\nreservedSystemCPUs: "0"\ncpuManagerReconcilePeriod: 2s\n';

/** The checkpoint as the kubelet wrote it, its checksum checked (upstream's format, src/cpumanager/checkpoint.ts). */
const state = () => unmarshalCheckpoint(readFileSync(STATE, 'utf8'));

/** Back on the stack's own configuration (policy none), whatever happened: the static state file goes first. */
after(async () => {
  await eventually(
    'no exclusive CPUs left in cpu_manager_state',
    60_000,
    async () => !existsSync(STATE) || Object.keys(state().entries).length === 0,
    1000,
  ).catch(() => undefined);
  rmSync(STATE, { force: true });
  restartKubelet();
  await eventually('the node Ready again', 90_000, nodeReady, 1000);
});

/** The CPU ids PodResources lists for a pod's container (undefined: the pod is not listed). */
async function listedCPUs(ns: string, pod: string, container = 'main'): Promise<number[] | undefined> {
  const { podResources: pods } = await podResources((c) => c.List);
  const p = pods.find((x) => x.namespace === ns && x.name === pod);
  return p?.containers
    .find((c) => c.name === container)
    ?.cpuIds.map(Number)
    .sort();
}

/** The container's cpuset.cpus, as its cgroup has it (cgroup v1's cpuset controller, or v2's file). */
const cpusetOf = (ns: string, pod: string) =>
  kubectl(
    '-n',
    ns,
    'exec',
    pod,
    '--',
    'sh',
    '-c',
    'cat /sys/fs/cgroup/cpuset/cpuset.cpus 2>/dev/null || cat /sys/fs/cgroup/cpuset.cpus',
  ).trim();

const metric = (series: string) => seriesValue(kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`), series);

function guaranteed(name: string): V1Pod {
  const r = { cpu: '1', memory: '64Mi' };
  const p = podSpec(name, { nodeName: nodeName() });
  p.spec!.containers[0]!.resources = { requests: r, limits: r };
  return p;
}

const running = (ns: string, name: string) =>
  eventually(`pod ${name} Running`, 90_000, async () => {
    const p = await clients().core.readNamespacedPod({ name, namespace: ns });
    assert.notEqual(p.status?.phase, 'Failed', `${name} failed: ${p.status?.reason}: ${p.status?.message}`);
    return p.status?.phase === 'Running' && p;
  });

test('static policy, reservedSystemCPUs 0: a Guaranteed cpu: 1 pod gets CPU 1 alone, kept over a restart, given back when it goes', async () => {
  assert.equal(
    readFileSync('/sys/devices/system/cpu/online', 'utf8').trim(),
    '0-1',
    'this test is written for a 2-CPU node (CPU 0 reserved, CPU 1 to pin)',
  );
  // The policy changes: the state file of the none policy goes first, as upstream's tests remove it.
  rmSync(STATE, { force: true });
  restartKubelet(STATIC);
  await eventually('the node Ready with the static policy', 90_000, nodeReady, 1000);
  // reservedSystemCPUs overrides the reserved cpu (upstream): allocatable is one CPU, once the
  // restarted kubelet's first status is in (the Node was Ready before the restart too).
  await eventually(
    'allocatable cpu 1 with CPU 0 reserved',
    60_000,
    async () => (await clients().core.readNode({ name: nodeName() })).status?.allocatable?.cpu === '1',
    1000,
  );
  assert.deepEqual([state().policyName, state().defaultCpuSet], ['static', '0-1']);

  await withNamespace(async (ns) => {
    await waitForCpuRoom(ns);
    const pinned = await runPinned(ns, guaranteed('pinned'));
    const uid = pinned.metadata!.uid!;
    assert.equal(cpusetOf(ns, 'pinned'), '1', 'the Guaranteed container runs on CPU 1 alone');
    assert.deepEqual(await listedCPUs(ns, 'pinned'), [1], "PodResources' cpu_ids");
    assert.deepEqual(
      (await podResources((c) => c.GetAllocatableResources)).cpuIds.map(Number),
      [1],
      'allocatable CPUs: all but the reserved one',
    );
    // cpu_manager_state: upstream's v2 format, byte for byte, checksum included.
    const text = readFileSync(STATE, 'utf8');
    assert.deepEqual(state(), { policyName: 'static', defaultCpuSet: '0', entries: { [uid]: { main: '1' } } });
    assert.equal(text, marshalCheckpoint(state()));
    assert.equal(metric('kubelet_cpu_manager_exclusive_cpu_allocation_count'), 1);
    assert.equal(metric('kubelet_cpu_manager_shared_pool_size_millicores'), 0, 'the shared pool less the reserved CPU');
    assert.ok(metric('kubelet_cpu_manager_pinning_requests_total') >= 1);
    assert.equal(metric('kubelet_cpu_manager_allocation_per_numa{numa_node="0"}'), 1);
    // initializeMetrics' series, there from the static policy's start; CPU 1 alone is within one uncore cache.
    const exposition = kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`);
    assert.match(exposition, /^kubelet_container_aligned_compute_resources_count\{boundary="physical_cpu",scope="container"\} 0$/m);
    assert.match(exposition, /^kubelet_container_aligned_compute_resources_failure_count\{boundary="physical_cpu",scope="container"\} 0$/m);
    assert.ok(metric('kubelet_container_aligned_compute_resources_count{boundary="uncore_cache",scope="container"}') >= 1);

    await clients().core.createNamespacedPod({ namespace: ns, body: podSpec('shared', { nodeName: nodeName() }) });
    await running(ns, 'shared');
    assert.equal(cpusetOf(ns, 'shared'), '0', 'the BestEffort container runs in the shared pool');
    assert.deepEqual(await listedCPUs(ns, 'shared'), [], 'no exclusive CPUs for it');

    // A kubelet restart keeps the assignment: the checkpoint is read back, the pod readmitted with it.
    restartKubelet(STATIC);
    await eventually('the node Ready after the restart', 90_000, nodeReady, 1000);
    await eventually('PodResources lists CPU 1 again', 60_000, async () => (await listedCPUs(ns, 'pinned'))?.join() === '1');
    assert.equal(readFileSync(STATE, 'utf8'), text, 'the same checkpoint');
    assert.equal(cpusetOf(ns, 'pinned'), '1');
    assert.equal(cpusetOf(ns, 'shared'), '0');
    const again = await clients().core.readNamespacedPod({ name: 'pinned', namespace: ns });
    assert.equal(again.status?.containerStatuses?.[0]?.restartCount, 0, 'the container was not restarted');

    // The pod goes: CPU 1 is back in the shared pool, and the reconcile loop gives it to the BestEffort container.
    await clients().core.deleteNamespacedPod({ name: 'pinned', namespace: ns, gracePeriodSeconds: 0 });
    await eventually(
      'CPU 1 back in the shared pool',
      60_000,
      async () => state().defaultCpuSet === '0-1' && Object.keys(state().entries).length === 0,
      1000,
    );
    await eventually("the BestEffort container's cpuset grown to 0-1", 60_000, async () => cpusetOf(ns, 'shared') === '0-1', 1000);
    assert.equal(metric('kubelet_cpu_manager_exclusive_cpu_allocation_count'), 0);
    assert.equal(metric('kubelet_cpu_manager_shared_pool_size_millicores'), 1000);
    assert.doesNotMatch(
      kubectl('get', '--raw', `/api/v1/nodes/${nodeName()}/proxy/metrics`),
      /^kubelet_cpu_manager_allocation_per_numa\{/m,
      'no NUMA node holds an exclusive CPU',
    );
  });
});
