import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planSandboxGC } from './sandboxes.ts';
import type { PodRuntimeStatus } from '../container/types.ts';
import type { Scope } from './ownership.ts';
import { ctr, deletedTerminated, live, rt, sb, scope } from './testing.ts';

const cases: [string, PodRuntimeStatus[], Scope, string[], string[]?][] = [
  [
    'a live pod keeps its newest sandbox, even not ready and empty',
    [rt('p', [], [sb('s2', 2, false), sb('s1', 1, false), sb('s0', 0, false)])],
    scope({ known: { p: live } }),
    ['s1 superseded', 's0 superseded'],
  ],
  [
    'an older sandbox that still holds a container stays',
    [rt('p', [ctr('c', 'main', 'exited', '5', 0, 's0')], [sb('s1', 1, true), sb('s0', 0, false)])],
    scope({ known: { p: live } }),
    [],
  ],
  ['an older ready sandbox stays (active)', [rt('p', [], [sb('s1', 1, false), sb('s0', 0, true)])], scope({ known: { p: live } }), []],
  [
    'newest by attempt, then creation time',
    [rt('p', [], [sb('old', 0, false, '9'), sb('new', 1, false, '1')])],
    scope({ known: { p: live } }),
    ['old superseded'],
  ],
  [
    'a deleted pod loses every empty, stopped sandbox, the newest too',
    [rt('p', [], [sb('s1', 1, false), sb('s0', 0, false)])],
    scope({ known: { p: deletedTerminated } }),
    ['s1 pod deleted', 's0 pod deleted'],
  ],
  [
    'containers removed in the same pass do not hold their sandbox',
    [rt('p', [ctr('c', 'main', 'exited', '5', 0, 's1')], [sb('s1', 1, false)])],
    scope({ known: { p: deletedTerminated } }),
    ['s1 pod deleted'],
    ['c'],
  ],
  [
    "a gone pod's ready sandbox goes once nothing is left to run in it",
    [rt('p', [], [sb('s1', 1, true)])],
    scope({ owned: ['p'] }),
    ['s1 pod deleted (ready)'],
  ],
  [
    "a gone pod's ready sandbox stays while a container runs (housekeeping kills it)",
    [rt('p', [ctr('c', 'main', 'running', '5', 0, 's1')], [sb('s1', 1, true), sb('s0', 0, false)])],
    scope({ owned: ['p'] }),
    ['s0 pod deleted'],
  ],
  [
    'before the sources are ready an unknown pod keeps its newest sandbox',
    [rt('p', [], [sb('s1', 1, false), sb('s0', 0, false)])],
    scope({ owned: ['p'], sourcesReady: false }),
    ['s0 superseded'],
  ],
  ["another kubelet's pod is never touched", [rt('p', [], [sb('s1', 1, false), sb('s0', 0, false)])], scope(), []],
];

for (const [name, pods, s, want, removed] of cases) {
  test(`sandbox GC: ${name}`, () => {
    const got = planSandboxGC(pods, s, new Set(removed ?? [])).map((r) => `${r.id} ${r.reason}${r.ready ? ' (ready)' : ''}`);
    assert.deepEqual(got, want);
  });
}
