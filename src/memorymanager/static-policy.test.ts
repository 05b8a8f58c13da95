import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NUMAMask } from '../topologymanager/bitmask.ts';
import { emptyMemoryState, type MemoryState } from './state.ts';
import { memoryNodes, podRequests, staticPolicy } from './static-policy.ts';
import { type CaseContainer, MEMORY_CASES, type StepWant } from './testdata/static-policy-cases.ts';
import { ctr, Gi, machine, pod } from './testing.ts';
import { parseQuantity } from '../resources/quantity.ts';

const ctrOf = (x: CaseContainer) => ctr(x.name, x.requests, { init: x.init, sidecar: x.sidecar, burstable: x.burstable });

const reserved1Gi = (n: number) => new Map(Array.from({ length: n }, (_, id) => [id, { memory: id === 0 ? Gi : 0 }]));
const none = { preferred: false };

function started(nodes = 2, memGi = 4, hp = 0): { p: ReturnType<typeof staticPolicy>; s: MemoryState } {
  const p = staticPolicy({ nodes: machine(nodes, memGi, hp), systemReserved: reserved1Gi(nodes) });
  const s = emptyMemoryState();
  p.start(s);
  return { p, s };
}

const free = (s: MemoryState) => [...s.machine.values()].map((n) => n.memoryMap.memory!.free / Gi);
const cells = (s: MemoryState) => [...s.machine.values()].map((n) => n.cells.join(','));

test('NewPolicyStatic refuses no reserved memory', () => {
  assert.throws(
    () => staticPolicy({ nodes: machine(1, 4), systemReserved: new Map() }),
    /^Error: \[memorymanager\] you should specify the system reserved memory$/,
  );
});

test('start: the default machine state, hugepages out of memory, reservation per node', () => {
  const { s } = started(2, 4, 512);
  assert.deepEqual(s.machine.get(0), {
    numberOfAssignments: 0,
    memoryMap: {
      'hugepages-2Mi': { total: Gi, systemReserved: 0, allocatable: Gi, reserved: 0, free: Gi },
      memory: { total: 4 * Gi, systemReserved: Gi, allocatable: 2 * Gi, reserved: 0, free: 2 * Gi },
    },
    cells: [0],
  });
  assert.equal(s.machine.get(1)!.memoryMap.memory!.allocatable, 3 * Gi);
});

test('the cases upstream answers the same (hack/memorymanager-check.sh)', () => {
  for (const k of MEMORY_CASES) {
    const nodes = k.nodes.map((n, id) => ({
      id,
      memoryBytes: n.memGi * Gi,
      hugepages: n.hugepages2Mi ? [{ pageSizeKiB: 2048, numPages: n.hugepages2Mi }] : [],
    }));
    const systemReserved = new Map(
      nodes.map((n) => [n.id, Object.fromEntries(Object.entries(k.reserved[n.id] ?? {}).map(([t, q]) => [t, parseQuantity(q)!]))]),
    );
    const p = staticPolicy({ nodes, systemReserved });
    const s = emptyMemoryState();
    p.start(s);
    const got: StepWant[] = [];
    for (const step of k.steps) {
      let error: string | undefined;
      if (step.remove) {
        const [uid, name] = step.remove.split('/') as [string, string];
        p.removeContainer(s, uid, name);
      } else {
        const full = pod(step.pod!, ...step.containers!.map((x) => ctrOf(x)));
        const hint = step.hint ? { affinity: NUMAMask.of(...step.hint), preferred: true } : none;
        try {
          for (const x of [...(full.spec!.initContainers ?? []), ...full.spec!.containers]) p.allocate(s, full, x, hint);
        } catch (e) {
          error = (e as Error).message;
        }
      }
      const blocks: string[] = [];
      for (const [uid, cs] of s.assignments)
        for (const [name, bs] of cs)
          blocks.push(
            `${uid}/${name}=${bs
              .map((b) => `${b.type}:${b.size}@${b.numaAffinity.join(',')}`)
              .sort()
              .join(';')}`,
          );
      got.push({
        ...(error ? { error } : {}),
        nodes: [...s.machine.values()].map((n) => `${n.memoryMap.memory!.free}/${[...n.cells].sort().join(',')}`),
        blocks: blocks.sort(),
      });
      if (error) break;
    }
    assert.deepEqual(got, k.want, k.name);
  }
});

test('hints: every node or group able to hold it, the narrowest preferred; an allocated container gets its own back', () => {
  const { p, s } = started();
  const c = ctr('c', { memory: '1Gi' });
  const fmt = (h: ReturnType<typeof p.hints>) =>
    h && Object.fromEntries(Object.entries(h).map(([t, hs]) => [t, hs!.map((x) => `${x.affinity}${x.preferred ? '*' : ''}`)]));
  assert.deepEqual(fmt(p.hints(s, pod('a', c), c)), { memory: ['0*', '1*', '0,1'] });
  const big = ctr('c', { memory: '5Gi' });
  assert.deepEqual(fmt(p.hints(s, pod('a', big), big)), { memory: ['0,1*'] });
  const huge = ctr('c', { memory: '9Gi' });
  assert.deepEqual(fmt(p.hints(s, pod('a', huge), huge)), {});
  p.allocate(s, pod('a', c), c, none);
  assert.deepEqual(fmt(p.hints(s, pod('a', c), c)), { memory: ['0*'] });
  assert.deepEqual(memoryNodes(s, 'a', 'c'), [0]);
  assert.equal(p.hints(s, pod('b', ctr('c', { memory: '1Gi' }, { burstable: true })), c), undefined);
});

test('removeContainer gives the memory back and ends the group', () => {
  const { p, s } = started();
  const c = ctr('c', { memory: '5Gi' });
  p.allocate(s, pod('a', c), c, none);
  p.removeContainer(s, 'a', 'c');
  assert.deepEqual(free(s), [3, 4]);
  assert.deepEqual(cells(s), ['0', '1']);
  assert.equal(s.assignments.size, 0);
});

test('start refuses a state its assignments do not explain, accepts one they do', () => {
  const { p, s } = started();
  const c = ctr('c', { memory: '1Gi' });
  p.allocate(s, pod('a', c), c, none);
  const again = staticPolicy({ nodes: machine(2, 4), systemReserved: reserved1Gi(2) });
  again.start(s);
  s.machine.get(0)!.memoryMap.memory!.free += 1;
  assert.throws(() => again.start(s), /^Error: \[memorymanager\] the expected machine state is different from the real one$/);
  const other = staticPolicy({ nodes: machine(1, 4), systemReserved: reserved1Gi(1) });
  const t = emptyMemoryState();
  t.machine = s.machine;
  t.assignments = new Map([['a', new Map([['c', [{ numaAffinity: [3], type: 'memory', size: 1 }]]])]]);
  assert.throws(() => other.start(t), /\(pod: a, container: c\) the memory assignment uses the NUMA that does not exist/);
});

test('podRequests: long-running containers summed, the largest init container when bigger', () => {
  const p = pod(
    'a',
    ctr('i', { memory: '3Gi' }, { init: true }),
    ctr('s', { memory: '1Gi' }, { sidecar: true }),
    ctr('c', { memory: '1Gi' }),
  );
  assert.deepEqual([...podRequests(p)], [['memory', 3 * Gi]]);
  const q = pod(
    'a',
    ctr('s', { memory: '1Gi' }, { sidecar: true }),
    ctr('i', { memory: '3Gi' }, { init: true }),
    ctr('c', { memory: '1Gi' }),
  );
  assert.deepEqual([...podRequests(q)], [['memory', 4 * Gi]]);
});
