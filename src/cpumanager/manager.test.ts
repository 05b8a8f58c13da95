import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Logger } from '../log/log.ts';
import { CPU_MANAGER_STATE_FILE } from './checkpoint.ts';
import { CPUSet, parseCPUSet } from './cpuset.ts';
import { CPUManager, type CPUManagerSettings, newPolicy, reservedQuantities, reservedSystemCPUs } from './manager.ts';
import { SINGLE_SOCKET_2_CORES, SINGLE_SOCKET_HT, topologyOf } from './testing.ts';

const log: Logger = { info() {}, v() {}, warn() {}, error() {} };

const pod = (uid: string, cpu?: string, burstable = false): Pod => {
  const r = cpu ? { cpu, memory: '100Mi' } : undefined;
  return {
    metadata: { uid, name: uid, namespace: 'default' },
    spec: { containers: [{ name: 'c', ...(r ? { resources: burstable ? { requests: r } : { requests: r, limits: r } } : {}) }] },
  };
};

const settings = (over: Partial<CPUManagerSettings> = {}): CPUManagerSettings => ({
  policyName: 'static',
  policyOptions: {},
  reconcilePeriodMs: 10_000,
  topology: topologyOf(SINGLE_SOCKET_2_CORES),
  reservedCPUs: CPUSet.of(0),
  reservedMillicores: 1000,
  gates: { alpha: false, beta: true },
  ...over,
});

function fakeRuntime(containers: { id: string; podUID: string; name: string }[]) {
  const updates: string[] = [];
  return {
    updates,
    cri: {
      listContainers: async () => ({
        containers: containers.map((c) => ({
          id: c.id,
          labels: { 'io.kubernetes.pod.uid': c.podUID, 'io.kubernetes.container.name': c.name },
        })),
      }),
      updateContainerResources: async (r: { containerId: string; linux: { cpusetCpus: string; cpusetMems?: string } }) => {
        updates.push(`${r.containerId}=${r.linux.cpusetCpus}${r.linux.cpusetMems ? ` mems ${r.linux.cpusetMems}` : ''}`);
      },
    },
  };
}

test("this machine's case: static, reservedSystemCPUs 0; a Guaranteed cpu: 1 pod gets CPU 1, the others CPU 0, until it goes", async () => {
  const rootDir = mkdtempSync(join(tmpdir(), 'cpum-'));
  let active: Pod[] = [];
  const g = pod('g', '1'),
    be = pod('be'),
    bu = pod('bu', '500m', true);
  const rt = fakeRuntime([
    { id: 'cg', podUID: 'g', name: 'c' },
    { id: 'cbe', podUID: 'be', name: 'c' },
  ]);
  const pools: string[] = [];
  const aligned: string[] = [];
  let requests = 0;
  const make = () =>
    new CPUManager({
      rootDir,
      policy: newPolicy(settings()),
      reconcilePeriodMs: 10_000,
      cri: rt.cri,
      activePods: () => active,
      sourcesReady: () => true,
      // The memory manager's NUMA nodes of g's container ride along in its updates.
      memsFor: (uid) => (uid === 'g' ? '0' : undefined),
      observe: {
        staticStarted: () => aligned.push('started'),
        pinningRequest: () => requests++,
        pinningError() {},
        aligned: (boundary, ok) => aligned.push(`${boundary}:${ok}`),
        pools: (m, x, numa) => pools.push(`${m}/${x}${[...numa].map(([n, c]) => ` numa${n}=${c}`).join('')}`),
        reconcileFailure() {},
      },
      log,
    });
  const m = make();
  m.start();
  m.stop();
  assert.deepEqual(m.admit(g), { admit: true });
  active = [g];
  assert.deepEqual([m.admit(be), m.admit(bu)], [{ admit: true }, { admit: true }]);
  active = [g, be, bu];
  assert.equal(m.cpusetFor(g, g.spec!.containers[0]!), '1');
  assert.equal(m.cpusetFor(be, be.spec!.containers[0]!), '0');
  assert.equal(m.cpusetFor(bu, bu.spec!.containers[0]!), '0');
  assert.deepEqual(m.exclusiveCPUs('g', 'c'), [1]);
  assert.deepEqual(m.exclusiveCPUs('be', 'c'), []);
  assert.deepEqual(m.allocatableCPUs(), [1]);
  assert.equal(requests, 1);
  assert.deepEqual(pools, ['1000/0', '0/1 numa0=1']);
  // g's one CPU is within one uncore cache; the others took none.
  assert.deepEqual(aligned, ['started', 'uncore_cache:true']);
  const file = readFileSync(join(rootDir, CPU_MANAGER_STATE_FILE), 'utf8');
  assert.match(file, /^\{"policyName":"static","defaultCpuSet":"0","entries":\{"g":\{"c":"1"\}\},"checksum":\d+\}$/);
  // The loop's round: every running container once, then nothing until something changes.
  assert.equal(await m.reconcile(), 0);
  assert.deepEqual(rt.updates, ['cg=1 mems 0', 'cbe=0']);
  await m.reconcile();
  assert.deepEqual(rt.updates.length, 2);

  // A restarted kubelet keeps the assignment.
  const again = make();
  again.start();
  again.stop();
  assert.equal(again.cpusetFor(g, g.spec!.containers[0]!), '1');
  assert.deepEqual(again.admit(g), { admit: true }, 'readmitted with the CPUs it holds');
  assert.equal(readFileSync(join(rootDir, CPU_MANAGER_STATE_FILE), 'utf8'), file);

  // The pod goes: CPU 1 is back in the shared pool, and the others get it.
  active = [be, bu];
  await m.reconcile();
  assert.equal(m.cpusetFor(be, be.spec!.containers[0]!), '0-1');
  assert.deepEqual(rt.updates.slice(2), ['cbe=0-1']);
  assert.match(
    readFileSync(join(rootDir, CPU_MANAGER_STATE_FILE), 'utf8'),
    /^\{"policyName":"static","defaultCpuSet":"0-1","checksum":\d+\}$/,
  );
  assert.equal(pools.at(-1), '1000/0');

  // Another policy on the same state: refused, as upstream.
  const none = new CPUManager({
    rootDir,
    policy: newPolicy(settings({ policyName: 'none', reservedCPUs: CPUSet.EMPTY })),
    reconcilePeriodMs: 1,
    cri: rt.cri,
    activePods: () => [],
    sourcesReady: () => true,
    log,
  });
  assert.throws(() => none.start(), /configured policy "none" differs from state checkpoint policy "static"/);
});

test('admission refusals: SMTAlignmentError with full-pcpus-only, UnexpectedAdmissionError when CPUs run out', () => {
  const physical: boolean[] = [];
  const m = new CPUManager({
    rootDir: mkdtempSync(join(tmpdir(), 'cpum-')),
    policy: newPolicy(
      settings({
        topology: topologyOf(SINGLE_SOCKET_HT),
        reservedCPUs: CPUSet.EMPTY,
        policyOptions: { 'full-pcpus-only': 'true' },
        reservedMillicores: 1500,
      }),
    ),
    reconcilePeriodMs: 1,
    cri: fakeRuntime([]).cri,
    activePods: () => [],
    sourcesReady: () => false,
    observe: {
      staticStarted() {},
      pinningRequest() {},
      pinningError() {},
      aligned: (boundary, ok) => boundary === 'physical_cpu' && physical.push(ok),
      pools() {},
      reconcileFailure() {},
    },
    log,
  });
  m.start();
  m.stop();
  assert.deepEqual(m.admit(pod('odd', '3')), {
    admit: false,
    reason: 'SMTAlignmentError',
    message: 'Pod was rejected: SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2',
  });
  assert.deepEqual(m.admit(pod('big', '6')), { admit: true });
  assert.deepEqual(m.admit(pod('more', '2')), {
    admit: false,
    reason: 'SMTAlignmentError',
    message:
      'Pod was rejected: SMT Alignment Error: not enough free physical CPUs: available physical CPUs = 0, requested CPUs = 2, CPUs per core = 2',
  });
  // container_aligned_compute_resources(_failure)_count {container, physical_cpu}: each pinned container's outcome.
  assert.deepEqual(physical, [false, true, false]);
  const plain = new CPUManager({
    rootDir: mkdtempSync(join(tmpdir(), 'cpum-')),
    policy: newPolicy(settings()),
    reconcilePeriodMs: 1,
    cri: fakeRuntime([]).cri,
    activePods: () => [],
    sourcesReady: () => false,
    log,
  });
  plain.start();
  plain.stop();
  assert.deepEqual(plain.admit(pod('two', '2')), {
    admit: false,
    reason: 'UnexpectedAdmissionError',
    message:
      'Pod was rejected: Allocate failed due to not enough cpus available to satisfy request: requested=2, available=1, which is unexpected',
  });
});

test('newPolicy refuses at start what upstream NewManager refuses', () => {
  const rows: [over: Partial<CPUManagerSettings>, want: RegExp][] = [
    [{ policyName: 'dynamic' }, /^Error: unknown policy: "dynamic"$/],
    [
      { reservedMillicores: 0, reservedCPUs: CPUSet.EMPTY },
      /the static policy requires systemreserved.cpu \+ kubereserved.cpu to be greater than zero/,
    ],
    [{ policyOptions: { 'align-by-socket': 'true' } }, /new static policy error: CPU Manager Policy Alpha-level Options not enabled/],
    [{ policyOptions: { bogus: 'true' } }, /new static policy error: unknown CPU Manager Policy option: "bogus"/],
    [
      { policyName: 'none', policyOptions: { 'full-pcpus-only': 'true' } },
      /new none policy error: None policy: received unsupported options/,
    ],
    [{ reservedMillicores: 2000 }, /unable to reserve the required amount of CPUs \(size of 0 did not equal 2\)/],
  ];
  for (const [over, want] of rows) assert.throws(() => newPolicy(settings(over)), want, JSON.stringify(over));
  assert.equal(
    newPolicy(settings({ reservedMillicores: 500, reservedCPUs: CPUSet.EMPTY }))
      .allocatableCPUs()
      .toString(),
    '1',
    'ceil(0.5) = 1 CPU reserved',
  );
});

test('reservedSystemCPUs: parsed within the node, and it overrides the reserved cpu quantity', () => {
  const t = topologyOf(SINGLE_SOCKET_2_CORES);
  assert.equal(reservedSystemCPUs('0', t, parseCPUSet).toString(), '0');
  assert.ok(reservedSystemCPUs('', t, parseCPUSet).isEmpty());
  assert.throws(() => reservedSystemCPUs('0-3', t, parseCPUSet), /reserved-cpus: 0-3 is not a subset of online-cpus: 0-1/);
  assert.throws(() => reservedSystemCPUs('x', t, parseCPUSet), /unable to parse reserved-cpus list/);
  const rows: [kube: Record<string, string>, system: Record<string, string>, reserved: string, want: unknown][] = [
    [
      { cpu: '200m', memory: '1Gi' },
      { cpu: '100m' },
      '',
      { kubeReserved: { cpu: '200m', memory: '1Gi' }, systemReserved: { cpu: '100m' } },
    ],
    [{ cpu: '200m', memory: '1Gi' }, { cpu: '100m' }, '0', { kubeReserved: { memory: '1Gi' }, systemReserved: { cpu: '1' } }],
    [{}, {}, '0-1', { kubeReserved: {}, systemReserved: { cpu: '2' } }],
  ];
  for (const [kube, system, reserved, want] of rows) assert.deepEqual(reservedQuantities(kube, system, parseCPUSet(reserved)), want);
});
