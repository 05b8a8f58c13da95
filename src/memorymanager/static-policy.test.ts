import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NUMAMask } from '../topologymanager/bitmask.ts';
import { emptyMemoryState, type MemoryState } from './state.ts';
import { memoryNodes, podRequests, staticPolicy } from './static-policy.ts';
import { ctr, Gi, machine, pod } from './testing.ts';

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

test('allocate: decisions over a 2-NUMA machine (3Gi then 4Gi free)', () => {
  // [name, containers' requests in order, hint, want free per node after, want cells, want error]
  const rows: [string, [uid: string, c: ReturnType<typeof ctr>][], NUMAMask | undefined, number[], string[], RegExp?][] = [
    ['no hint: the narrowest node that holds it (node 0)', [['a', ctr('c', { memory: '1Gi' })]], undefined, [2, 4], ['0', '1']],
    ['the topology manager hint wins', [['a', ctr('c', { memory: '1Gi' })]], NUMAMask.of(1), [3, 3], ['0', '1']],
    ['too big for one node: both, as a group', [['a', ctr('c', { memory: '5Gi' })]], undefined, [0, 2], ['0,1', '0,1']],
    ['a hint too small is extended to the group holding it', [['a', ctr('c', { memory: '5Gi' })]], NUMAMask.of(1), [0, 2], ['0,1', '0,1']],
    ['too big for the machine', [['a', ctr('c', { memory: '8Gi' })]], undefined, [3, 4], ['0', '1'], /no NUMA nodes with enough memory/],
    ['burstable pods are left alone', [['a', ctr('c', { memory: '1Gi' }, { burstable: true })]], undefined, [3, 4], ['0', '1']],
    [
      'a node allocated alone never joins a group',
      [
        ['a', ctr('c', { memory: '1Gi' })],
        ['b', ctr('c', { memory: '5Gi' })],
      ],
      undefined,
      [2, 4],
      ['0', '1'],
      /failed to get the default NUMA affinity/,
    ],
    [
      "an init container's memory is reused by the app container",
      [
        ['a', ctr('i', { memory: '2Gi' }, { init: true })],
        ['a', ctr('c', { memory: '1Gi' })],
      ],
      undefined,
      [1, 4],
      ['0', '1'],
    ],
  ];
  for (const [name, steps, hint, wantFree, wantCells, wantErr] of rows) {
    const { p, s } = started();
    let err: Error | undefined;
    const all = steps.map(([, c]) => c);
    try {
      for (const [uid, c] of steps) {
        const full = pod(uid, ...all.filter((x) => steps.find(([, y]) => y === x)![0] === uid));
        const { init: _i, ...plain } = c;
        p.allocate(s, full, plain, hint ? { affinity: hint, preferred: true } : none);
      }
    } catch (e) {
      err = e as Error;
    }
    if (wantErr) assert.match(err?.message ?? '', wantErr, name);
    else assert.equal(err, undefined, name);
    assert.deepEqual(free(s), wantFree, name);
    assert.deepEqual(cells(s), wantCells, name);
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
