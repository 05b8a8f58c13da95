import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { PodSpecWithResources } from '../resources/pod-resources.ts';
import { CPUSet, parseCPUSet } from './cpuset.ts';
import {
  type CPUState,
  cpusOrDefault,
  emptyState,
  guaranteedCPUs,
  nonePolicy,
  type Policy,
  SMTAlignmentError,
  staticPolicy,
  staticPolicyOptions,
} from './static-policy.ts';
import { CASES, type Ctr } from './testdata/static-policy-cases.ts';
import { SINGLE_SOCKET_HT, topologyOf } from './testing.ts';

const GATES = { alpha: true, beta: true };

function podOf(uid: string, cs: Ctr[]): Pod {
  const spec = (c: Ctr): Container => {
    const r = { cpu: c.cpu, memory: '1G' };
    return {
      name: c.name,
      resources: c.burstable ? { requests: r } : { requests: r, limits: r },
      ...(c.restartable ? { restartPolicy: 'Always' } : {}),
    };
  };
  return {
    metadata: { uid, name: uid, namespace: 'default' },
    spec: { initContainers: cs.filter((c) => c.init).map(spec), containers: cs.filter((c) => !c.init).map(spec) },
  };
}

test('the static policy answers as upstream v1.36.3 does, case by case (testdata/static-policy-cases.ts)', () => {
  for (const c of CASES) {
    let policy: Policy;
    const s: CPUState = emptyState();
    try {
      policy = staticPolicy({
        topology: topologyOf(c.shape),
        numReservedCPUs: c.numReserved,
        reservedCPUs: parseCPUSet(c.reserved ?? ''),
        options: staticPolicyOptions(c.options ?? {}, GATES),
      });
      policy.start(s);
    } catch (e) {
      assert.deepEqual([`error: ${(e as Error).message}`], c.want, c.name);
      continue;
    }
    if (c.default) s.defaultCPUSet = parseCPUSet(c.default);
    const got: (Record<string, string> | string)[] = [];
    for (const step of c.steps) {
      if ('remove' in step) {
        const [pod, name] = step.remove.split('/') as [string, string];
        policy.removeContainer(s, pod, name);
        got.push({ default: s.defaultCPUSet.toString() });
        continue;
      }
      const pod = podOf(step.pod, step.containers);
      const r: Record<string, string> = {};
      for (const ctr of [...(pod.spec!.initContainers ?? []), ...pod.spec!.containers]) {
        try {
          r[ctr.name] = policy.allocate(s, pod, ctr)?.cpus.toString() ?? 'shared';
        } catch (e) {
          r[ctr.name] = `error: ${(e as Error).message}`;
          break;
        }
      }
      r.default = s.defaultCPUSet.toString();
      got.push(r);
    }
    assert.deepEqual(got, c.want, c.name);
  }
});

test('staticPolicyOptions: maturity gates, bad values and incompatible pairs are refused with upstream text', () => {
  const rows: [given: Record<string, string>, gates: { alpha: boolean; beta: boolean }, want: string | RegExp][] = [
    [{ 'full-pcpus-only': 'true' }, { alpha: false, beta: false }, 'fullPhysicalCPUsOnly'],
    [{ 'strict-cpu-reservation': 'true' }, { alpha: false, beta: false }, 'strictCPUReservation'],
    [{ 'prefer-align-cpus-by-uncorecache': 'true' }, { alpha: false, beta: false }, 'preferAlignByUncoreCache'],
    [{ 'distribute-cpus-across-numa': 'true' }, { alpha: false, beta: true }, 'distributeCPUsAcrossNUMA'],
    [
      { 'distribute-cpus-across-numa': 'true' },
      { alpha: false, beta: false },
      /Beta-level Options not enabled, but option "distribute-cpus-across-numa"/,
    ],
    [
      { 'align-by-socket': 'true' },
      { alpha: false, beta: true },
      /CPU Manager Policy Alpha-level Options not enabled, but option "align-by-socket" provided/,
    ],
    [{ 'distribute-cpus-across-cores': 'true' }, { alpha: true, beta: true }, 'distributeCPUsAcrossCores'],
    [{ 'no-such-option': 'true' }, GATES, /unknown CPU Manager Policy option: "no-such-option"$/],
    [{ 'full-pcpus-only': 'yes' }, GATES, /bad value for option "full-pcpus-only"/],
    [
      { 'full-pcpus-only': 'true', 'distribute-cpus-across-cores': 'true' },
      GATES,
      /full-pcpus-only and distribute-cpus-across-cores can not be used/,
    ],
    [{ 'distribute-cpus-across-numa': 'true', 'distribute-cpus-across-cores': 'true' }, GATES, /can not be used at the same time/],
    [
      { 'prefer-align-cpus-by-uncorecache': 'true', 'distribute-cpus-across-numa': 'true' },
      GATES,
      /prefer-align-cpus-by-uncorecache and distribute-cpus-across-numa/,
    ],
  ];
  for (const [given, gates, want] of rows) {
    if (typeof want === 'string') {
      const o = staticPolicyOptions(given, gates);
      assert.equal(o[want as keyof typeof o], true, JSON.stringify(given));
    } else assert.throws(() => staticPolicyOptions(given, gates), want, JSON.stringify(given));
  }
  assert.equal(staticPolicyOptions({ 'full-pcpus-only': 'false' }, GATES).fullPhysicalCPUsOnly, false);
});

test('the none policy takes no option and pins nothing', () => {
  assert.throws(
    () => nonePolicy({ 'full-pcpus-only': 'true' }),
    /^Error: None policy: received unsupported options=map\[full-pcpus-only:true\]$/,
  );
  const p = nonePolicy({});
  const s = emptyState();
  p.start(s);
  assert.equal(p.allocate(s, podOf('p', [{ name: 'a', cpu: '1' }]), { name: 'a' }), undefined);
  assert.ok(p.allocatableCPUs().isEmpty());
  assert.equal(cpusOrDefault(s, 'p', 'a').toString(), '');
});

test('guaranteedCPUs: integer requests of Guaranteed pods only', () => {
  const rows: [cpu: string, burstable: boolean, want: number][] = [
    ['1', false, 1],
    ['2000m', false, 2],
    ['1500m', false, 0],
    ['0.0001', false, 0],
    ['2', true, 0],
  ];
  for (const [cpu, burstable, want] of rows) {
    const pod = podOf('p', [{ name: 'a', cpu, burstable }]);
    assert.equal(guaranteedCPUs(pod, pod.spec!.containers[0]!), want, `${cpu} ${burstable}`);
  }
  const level = podOf('p', [{ name: 'a', cpu: '1' }]);
  (level.spec as PodSpecWithResources).resources = { requests: { cpu: '1', memory: '1G' }, limits: { cpu: '1', memory: '1G' } };
  assert.equal(guaranteedCPUs(level, level.spec!.containers[0]!), 0, 'pod-level resources: PodLevelResourceManagers is off');
});

test('start: a restored state is checked as upstream validateState does', () => {
  const topology = topologyOf(SINGLE_SOCKET_HT);
  const make = (strict = false) =>
    staticPolicy({
      topology,
      numReservedCPUs: 1,
      reservedCPUs: CPUSet.EMPTY,
      options: staticPolicyOptions(strict ? { 'strict-cpu-reservation': 'true' } : {}, GATES),
    });
  const state = (d: string, a: Record<string, Record<string, string>> = {}): CPUState => ({
    defaultCPUSet: parseCPUSet(d),
    assignments: new Map(Object.entries(a).map(([p, cs]) => [p, new Map(Object.entries(cs).map(([n, v]) => [n, parseCPUSet(v)]))])),
  });
  const rows: [name: string, s: CPUState, strict: boolean, want?: RegExp][] = [
    ['empty: every CPU', state(''), false],
    ['consistent', state('0,2-7', { p: { a: '1' } }), false],
    [
      'reserved CPU missing from the pool',
      state('2-7', { p: { a: '1' } }),
      false,
      /not all reserved cpus: "0" are present in defaultCpuSet: "2-7"/,
    ],
    ['overlap', state('0-7', { p: { a: '1' } }), false, /pod: p, container: a cpuset: "1" overlaps with default cpuset "0-7"/],
    ['CPUs gone', state('0,2-5', { p: { a: '1' } }), false, /current set of available CPUs "0-7" doesn't match with CPUs in state "0-5"/],
    ['strict: reserved in the pool', state('0-7'), true, /some of strictly reserved cpus: "0" are present in defaultCpuSet: "0-7"/],
    ['assignments without a pool', state('', { p: { a: '1' } }), false, /default cpuset cannot be empty/],
  ];
  for (const [name, s, strict, want] of rows) {
    if (want) assert.throws(() => make(strict).start(s), want, name);
    else make(strict).start(s);
  }
  const s = state('');
  make(true).start(s);
  assert.equal(s.defaultCPUSet.toString(), '1-7', 'strict: the reserved CPU is not in the pool');
});

test('SMTAlignmentError carries upstream reason', () => {
  const e = new SMTAlignmentError(3, 2);
  assert.equal(e.reason, 'SMTAlignmentError');
  assert.equal(e.message, 'SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2');
});
