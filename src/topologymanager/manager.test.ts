import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { parseCPUSet } from '../cpumanager/cpuset.ts';
import { CPUManager, newPolicy } from '../cpumanager/manager.ts';
import { cpuHints } from '../cpumanager/static-policy.ts';
import { DUAL_SOCKET_MULTI_NUMA_HT, SINGLE_SOCKET_2_CORES, topologyOf } from '../cpumanager/testing.ts';
import type { Logger } from '../log/log.ts';
import { MemoryManager, newMemoryPolicy } from '../memorymanager/manager.ts';
import { Gi, machine } from '../memorymanager/testing.ts';
import { NUMAMask, type ProviderHints, type TopologyHint } from './bitmask.ts';
import { type HintProvider, TopologyManager, topologyConfig } from './manager.ts';

const log: Logger = { info() {}, v() {}, warn() {}, error() {} };
const numa = (n: number) => ({ nodes: Array.from({ length: n }, (_, i) => i), distances: new Map<number, number[]>() });

const guaranteed = (uid: string, ...cs: [name: string, cpu: string, memory: string][]): Pod => ({
  metadata: { name: uid, namespace: 'default', uid },
  spec: {
    containers: cs.map(([name, cpu, memory]) => ({ name, image: 'i', resources: { requests: { cpu, memory }, limits: { cpu, memory } } })),
  },
});

test('topologyConfig: upstream texts', () => {
  const s = { policyName: 'single-numa-node', scopeName: 'container', options: {}, numa: numa(2) };
  assert.equal(topologyConfig(s).policyName, 'single-numa-node');
  assert.equal(topologyConfig({ ...s, policyName: 'none', scopeName: 'bogus' }).policyName, 'none');
  assert.throws(() => topologyConfig({ ...s, policyName: 'numa' }), /^Error: unknown policy: "numa"$/);
  assert.throws(() => topologyConfig({ ...s, scopeName: 'node' }), /^Error: unknown scope: "node"$/);
  assert.throws(() => topologyConfig({ ...s, numa: numa(9) }), /^Error: unsupported on machines with more than 8 NUMA Nodes$/);
  assert.equal(topologyConfig({ ...s, numa: numa(9), options: { 'max-allowable-numa-nodes': '9' } }).options.maxAllowableNUMANodes, 9);
  assert.throws(
    () => topologyConfig({ ...s, options: { 'prefer-closest-numa-nodes': 'true' } }),
    /^Error: cannot discover NUMA topology: error getting NUMA distances from cadvisor$/,
  );
});

/** A provider answering fixed hints and recording its allocations. */
function provider(hints: ProviderHints, calls: string[], fail?: Error & { reason?: string }): HintProvider {
  return {
    hints: () => hints,
    podHints: () => hints,
    allocate(pod: Pod, c: Container, h: TopologyHint) {
      if (fail) throw fail;
      calls.push(`${pod.metadata!.uid}/${c.name}@${h.affinity ?? '-'}${h.preferred ? '*' : ''}`);
    },
  };
}

test('admit: scopes, policies, TopologyAffinityError as upstream, provider errors as GetPodAdmitResult', () => {
  const p = guaranteed('p', ['a', '1', '1Gi'], ['b', '1', '1Gi']);
  const node1: ProviderHints = { cpu: [{ affinity: NUMAMask.of(1), preferred: true }] };
  const rows: [policy: string, scope: string, hints: ProviderHints, want: unknown, calls: string[], fail?: Error & { reason?: string }][] =
    [
      ['none', 'container', node1, { admit: true }, ['p/a@-', 'p/b@-']],
      ['single-numa-node', 'container', node1, { admit: true }, ['p/a@1*', 'p/b@1*']],
      ['single-numa-node', 'pod', node1, { admit: true }, ['p/a@1*', 'p/b@1*']],
      [
        'single-numa-node',
        'container',
        { cpu: [] },
        {
          admit: false,
          reason: 'TopologyAffinityError',
          message: 'Pod was rejected: Resources cannot be allocated with Topology locality',
        },
        [],
      ],
      ['best-effort', 'container', { cpu: [] }, { admit: true }, ['p/a@0,1', 'p/b@0,1']],
      [
        'restricted',
        'pod',
        { cpu: [{ affinity: NUMAMask.of(0, 1), preferred: false }] },
        {
          admit: false,
          reason: 'TopologyAffinityError',
          message: 'Pod was rejected: Resources cannot be allocated with Topology locality',
        },
        [],
      ],
      [
        'restricted',
        'container',
        node1,
        { admit: false, reason: 'UnexpectedAdmissionError', message: 'Pod was rejected: Allocate failed due to boom, which is unexpected' },
        [],
        new Error('boom'),
      ],
      [
        'none',
        'container',
        undefined,
        { admit: false, reason: 'SMTAlignmentError', message: 'Pod was rejected: SMT Alignment Error: x' },
        [],
        Object.assign(new Error('SMT Alignment Error: x'), { reason: 'SMTAlignmentError' }),
      ],
    ];
  for (const [policyName, scopeName, hints, want, wantCalls, fail] of rows) {
    const calls: string[] = [];
    const seen: boolean[] = [];
    const m = new TopologyManager(topologyConfig({ policyName, scopeName, options: {}, numa: numa(2) }), undefined, {
      admission: (_ms, failed) => seen.push(failed),
      numaAligned() {},
    });
    m.addHintProvider(provider(hints, calls, fail));
    const got = m.admit(p);
    assert.deepEqual(got, want, `${policyName}/${scopeName}`);
    assert.deepEqual(calls, wantCalls, `${policyName}/${scopeName}`);
    // Every admission counted; failures but with policy none (upstream's admitPolicyNone counts none).
    assert.deepEqual(seen, [!got.admit && policyName !== 'none'], `${policyName}/${scopeName}`);
  }
});

test('container_aligned_compute_resources {numa_node}: counted under single-numa-node only, by container or for the pod as its scope', () => {
  const p = guaranteed('p', ['a', '1', '1Gi'], ['b', '1', '1Gi']);
  const node1: ProviderHints = { cpu: [{ affinity: NUMAMask.of(1), preferred: true }] };
  const none: ProviderHints = { cpu: [] };
  const rows: [policy: string, scope: string, hints: ProviderHints, want: string[], fail?: Error][] = [
    ['single-numa-node', 'container', node1, ['container:true', 'container:true']],
    ['single-numa-node', 'pod', node1, ['pod:true']],
    ['single-numa-node', 'container', none, ['container:false']],
    ['single-numa-node', 'pod', none, ['pod:false']],
    // A provider's failure is an admission error, not an alignment one (scope_container.go).
    ['single-numa-node', 'container', node1, [], new Error('boom')],
    ['restricted', 'container', none, []],
    ['best-effort', 'pod', node1, []],
    ['none', 'container', node1, []],
  ];
  for (const [policyName, scopeName, hints, want, fail] of rows) {
    const seen: string[] = [];
    const m = new TopologyManager(topologyConfig({ policyName, scopeName, options: {}, numa: numa(2) }), undefined, {
      admission() {},
      numaAligned: (scope, ok) => seen.push(`${scope}:${ok}`),
    });
    m.addHintProvider(provider(hints, [], fail));
    m.admit(p);
    assert.deepEqual(seen, want, `${policyName}/${scopeName}/${fail ? 'fail' : ''}`);
  }
});

test('cpuHints: the NUMA nodes whose free CPUs make the request; the fewest preferred', () => {
  const topo = topologyOf(DUAL_SOCKET_MULTI_NUMA_HT); // 4 NUMA nodes of 16 CPUs
  const fmt = (hs: TopologyHint[]) => hs.map((h) => `${h.affinity}${h.preferred ? '*' : ''}`);
  const all = topo.details.cpus();
  assert.deepEqual(fmt(cpuHints(topo, all, parseCPUSet(''), 16)).slice(0, 5), ['0*', '1*', '2*', '3*', '0,1']);
  // 20 CPUs: no node alone; every pair preferred.
  assert.deepEqual(fmt(cpuHints(topo, all, parseCPUSet(''), 20)).slice(0, 7), ['0,1*', '0,2*', '0,3*', '1,2*', '1,3*', '2,3*', '0,1,2']);
  // Node 0 half taken: it no longer holds 16, though preferred sizes stay by capacity.
  const half = all
    .difference(topo.details.cpusInNUMANodes(0))
    .union(parseCPUSet(topo.details.cpusInNUMANodes(0).list().slice(0, 8).join(',')));
  assert.deepEqual(fmt(cpuHints(topo, half, parseCPUSet(''), 16)).slice(0, 4), ['1*', '2*', '3*', '0,1']);
});

test('this machine in the e2e: static CPUs, reserved CPU 0, Static memory, single-numa-node', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tm-'));
  let active: Pod[] = [];
  const common = { rootDir: dir, activePods: () => active, sourcesReady: () => true, log };
  const cpu = new CPUManager({
    ...common,
    policy: newPolicy({
      policyName: 'static',
      policyOptions: {},
      reconcilePeriodMs: 10_000,
      topology: topologyOf(SINGLE_SOCKET_2_CORES),
      reservedCPUs: parseCPUSet('0'),
      reservedMillicores: 1000,
      gates: { alpha: false, beta: false },
    }),
    reconcilePeriodMs: 10_000,
    cri: { listContainers: async () => ({ containers: [] }), updateContainerResources: async () => ({}) },
  });
  const memory = new MemoryManager({
    ...common,
    policy: newMemoryPolicy('Static', machine(1, 8), { memory: ['100Mi', '1Gi'] }, [{ numaNode: 0, limits: { memory: '1124Mi' } }]),
  });
  cpu.start();
  t.after(() => cpu.stop());
  memory.start();
  const tm = new TopologyManager(
    topologyConfig({ policyName: 'single-numa-node', scopeName: 'container', options: {}, numa: numa(1) }),
    () => active,
  );
  tm.addHintProvider(cpu);
  tm.addHintProvider(memory);
  const fits = guaranteed('fits', ['c', '1', '1Gi']);
  active = [fits];
  assert.deepEqual(tm.admit(fits), { admit: true });
  assert.equal(cpu.cpusetFor(fits, fits.spec!.containers[0]!), '1');
  assert.equal(memory.cpusetMems('fits', 'c'), '0');
  assert.deepEqual(memory.memory('fits', 'c'), [{ numaAffinity: [0], type: 'memory', size: Gi }]);
  // Two CPUs: only CPU 1 is free on the one NUMA node; upstream refuses it so.
  const big = guaranteed('big', ['c', '2', '1Gi']);
  active = [fits, big];
  assert.deepEqual(tm.admit(big), {
    admit: false,
    reason: 'TopologyAffinityError',
    message: 'Pod was rejected: Resources cannot be allocated with Topology locality',
  });
  assert.equal(memory.cpusetMems('big', 'c'), undefined);
  // More memory than the node has free: the memory manager has no hint at all (an empty map, "no
  // preference", as upstream's calculateHints), so its Allocate fails: upstream's unexpected error.
  const fat = guaranteed('fat', ['c', '0', '7Gi']);
  fat.spec!.containers[0]!.resources = { requests: { cpu: '500m', memory: '7Gi' }, limits: { cpu: '500m', memory: '7Gi' } };
  active = [fits, fat];
  assert.deepEqual(tm.admit(fat), {
    admit: false,
    reason: 'UnexpectedAdmissionError',
    message:
      'Pod was rejected: Allocate failed due to [memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available, which is unexpected',
  });
});
