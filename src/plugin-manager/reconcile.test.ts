import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type Pass, type PassInput, reconcile } from './reconcile.ts';

const A = '/var/lib/kubelet/plugins_registry/a.sock';
const B = '/var/lib/kubelet/plugins_registry/sub/b.sock';
const C = '/var/lib/kubelet/plugins_registry/c.sock';

const input = (over: Partial<PassInput>): PassInput => ({
  found: new Map(),
  registered: new Map(),
  busy: new Set(),
  retries: new Map(),
  nowMs: 10_000,
  slots: 16,
  ...over,
});

test('what a pass deregisters and registers', () => {
  const cases: [string, Partial<PassInput>, Pass][] = [
    ['nothing', {}, { deregister: [], register: [] }],
    [
      'new sockets',
      {
        found: new Map([
          [A, 'a1'],
          [B, 'b1'],
        ]),
      },
      { deregister: [], register: [A, B] },
    ],
    [
      'registered, same socket',
      { found: new Map([[A, 'a1']]), registered: new Map([[A, { socketId: 'a1' }]]) },
      { deregister: [], register: [] },
    ],
    ['socket gone', { registered: new Map([[A, { socketId: 'a1' }]]) }, { deregister: [A], register: [] }],
    [
      'socket replaced: deregistered, then registered again',
      { found: new Map([[A, 'a2']]), registered: new Map([[A, { socketId: 'a1' }]]) },
      { deregister: [A], register: [A] },
    ],
    [
      'a registration under way: left alone, even when its socket is gone',
      { found: new Map([[B, 'b1']]), registered: new Map([[A, { socketId: 'a1' }]]), busy: new Set([A, B]) },
      { deregister: [], register: [] },
    ],
    [
      'failed, backing off',
      { found: new Map([[A, 'a1']]), retries: new Map([[A, { socketId: 'a1', atMs: 10_500 }]]) },
      { deregister: [], register: [] },
    ],
    [
      'failed, backoff over',
      { found: new Map([[A, 'a1']]), retries: new Map([[A, { socketId: 'a1', atMs: 10_000 }]]) },
      { deregister: [], register: [A] },
    ],
    [
      'failed, then a new socket: tried at once',
      { found: new Map([[A, 'a2']]), retries: new Map([[A, { socketId: 'a1', atMs: 60_000 }]]) },
      { deregister: [], register: [A] },
    ],
    [
      'bounded: only as many as there are slots, deregistrations all',
      {
        found: new Map([
          [A, 'a1'],
          [B, 'b1'],
          [C, 'c1'],
        ]),
        registered: new Map([['/gone.sock', { socketId: 'g' }]]),
        slots: 2,
      },
      { deregister: ['/gone.sock'], register: [A, B] },
    ],
    ['no slot', { found: new Map([[A, 'a1']]), slots: 0 }, { deregister: [], register: [] }],
  ];
  for (const [name, over, want] of cases) assert.deepEqual(reconcile(input(over)), want, name);
});
