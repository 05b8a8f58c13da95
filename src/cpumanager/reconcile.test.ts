import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { parseCPUSet } from './cpuset.ts';
import { activeContainers, cpusetUpdates, staleAssignments } from './reconcile.ts';
import type { CPUState } from './static-policy.ts';

const pod = (uid: string, ...names: string[]): Pod => ({
  metadata: { uid },
  spec: { initContainers: [{ name: 'init' }], containers: names.map((name) => ({ name })) },
});
const state = (d: string, a: Record<string, Record<string, string>>): CPUState => ({
  defaultCPUSet: parseCPUSet(d),
  assignments: new Map(Object.entries(a).map(([p, cs]) => [p, new Map(Object.entries(cs).map(([n, v]) => [n, parseCPUSet(v)]))])),
});

test('staleAssignments: containers no active pod has', () => {
  const active = activeContainers([pod('a', 'app')]);
  const rows: [name: string, s: CPUState, want: [string, string][]][] = [
    ['all active', state('0', { a: { app: '1', init: '1' } }), []],
    ['pod gone', state('0', { a: { app: '1' }, b: { app: '2-3' } }), [['b', 'app']]],
    ['container gone from the spec', state('0', { a: { old: '1' } }), [['a', 'old']]],
  ];
  for (const [name, s, want] of rows) assert.deepEqual(staleAssignments(s, active), want, name);
});

test('cpusetUpdates: exclusive CPUs or the shared pool, only when they changed', () => {
  const s = state('0,2-3', { a: { app: '1' } });
  const active = activeContainers([pod('a', 'app'), pod('b', 'web')]);
  const running = [
    { id: 'c1', podUID: 'a', name: 'app' },
    { id: 'c2', podUID: 'b', name: 'web' },
    { id: 'c3', podUID: 'gone', name: 'x' },
  ];
  const rows: [name: string, applied: Record<string, string>, want: string[]][] = [
    ['nothing applied yet (a restarted kubelet): all of them once', {}, ['c1=1', 'c2=0,2-3']],
    ['up to date', { c1: '1', c2: '0,2-3' }, []],
    ['the shared pool shrank', { c1: '1', c2: '0-3' }, ['c2=0,2-3']],
  ];
  for (const [name, applied, want] of rows)
    assert.deepEqual(
      cpusetUpdates(s, running, active, new Map(Object.entries(applied))).map((u) => `${u.id}=${u.cpus}`),
      want,
      name,
    );
  assert.deepEqual(cpusetUpdates(state('', {}), running, active, new Map()), [], 'none policy: no cpuset at all');
});
