import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_CONTAINER_GC_POLICY, planContainerGC, type ContainerGCPolicy } from './containers.ts';
import type { PodRuntimeStatus } from '../container/types.ts';
import type { Scope } from './ownership.ts';
import { ctr, deletedTerminated, deletedTerminating, live, rt, scope, terminatedKept } from './testing.ts';

const NOW = new Date('2026-11-22T12:00:00Z');
const ns = (secondsAgo: number) => String(BigInt(NOW.getTime() - secondsAgo * 1000) * 1_000_000n);

// A crash-looping container: attempts 0..3, the newest first in time.
const crashLoop = (uid: string, newest: 'running' | 'exited' | 'created') =>
  rt(uid, [
    ctr(`${uid}-a3`, 'main', newest, ns(10), 3),
    ctr(`${uid}-a2`, 'main', 'exited', ns(40), 2),
    ctr(`${uid}-a1`, 'main', 'exited', ns(60), 1),
    ctr(`${uid}-a0`, 'main', 'exited', ns(70), 0),
  ]);

const cases: [string, PodRuntimeStatus[], Scope, string[], ContainerGCPolicy?][] = [
  [
    'a live pod keeps its newest dead instance beside the running one',
    [crashLoop('p', 'running')],
    scope({ known: { p: live } }),
    ['p-a1 maxPerPodContainer', 'p-a0 maxPerPodContainer'],
  ],
  [
    'a live pod in back-off keeps only the newest dead instance',
    [crashLoop('p', 'exited')],
    scope({ known: { p: live } }),
    ['p-a2 maxPerPodContainer', 'p-a1 maxPerPodContainer', 'p-a0 maxPerPodContainer'],
  ],
  [
    'a created container does not count: the dead one before it is its lastState',
    [crashLoop('p', 'created')],
    scope({ known: { p: live } }),
    ['p-a1 maxPerPodContainer', 'p-a0 maxPerPodContainer'],
  ],
  [
    'each container name is its own unit',
    [
      rt('p', [
        ctr('a1', 'a', 'exited', ns(1), 1),
        ctr('b1', 'b', 'exited', ns(2), 1),
        ctr('a0', 'a', 'exited', ns(3)),
        ctr('b0', 'b', 'exited', ns(4)),
      ]),
    ],
    scope({ known: { p: live } }),
    ['a0 maxPerPodContainer', 'b0 maxPerPodContainer'],
  ],
  [
    'newest by creation time, whatever the list order',
    [rt('p', [ctr('old', 'main', 'exited', ns(50), 0), ctr('new', 'main', 'exited', ns(5), 1)])],
    scope({ known: { p: live } }),
    ['old maxPerPodContainer'],
  ],
  [
    'a deleted, terminated pod loses every dead container, created ones too',
    [rt('p', [ctr('c', 'main', 'created', ns(1), 2), ctr('x', 'main', 'exited', ns(9), 1)])],
    scope({ known: { p: deletedTerminated } }),
    ['c pod deleted', 'x pod deleted'],
  ],
  [
    'a deleted pod still terminating keeps its newest dead instance',
    [crashLoop('p', 'exited')],
    scope({ known: { p: deletedTerminating } }),
    ['p-a2 maxPerPodContainer', 'p-a1 maxPerPodContainer', 'p-a0 maxPerPodContainer'],
  ],
  [
    'a finished pod still in the apiserver keeps its newest dead instance (kubectl logs)',
    [rt('p', [ctr('x', 'main', 'exited', ns(9))])],
    scope({ known: { p: terminatedKept } }),
    [],
  ],
  [
    'an unknown pod of ours loses everything once the sources are ready',
    [crashLoop('p', 'exited')],
    scope({ owned: ['p'] }),
    ['p-a3 pod deleted', 'p-a2 pod deleted', 'p-a1 pod deleted', 'p-a0 pod deleted'],
  ],
  [
    'before the sources are ready an unknown pod only keeps to the limit',
    [crashLoop('p', 'exited')],
    scope({ owned: ['p'], sourcesReady: false }),
    ['p-a2 maxPerPodContainer', 'p-a1 maxPerPodContainer', 'p-a0 maxPerPodContainer'],
  ],
  ["another kubelet's pod (neither known nor with our pod dir) is never touched", [crashLoop('p', 'exited')], scope(), []],
  ['objects without a pod UID label are never touched', [crashLoop('', 'exited')], scope({ owned: [''] }), []],
  [
    'running containers are never removed, even of a deleted pod',
    [rt('p', [ctr('r', 'main', 'running', ns(9))])],
    scope({ known: { p: deletedTerminated } }),
    [],
  ],
  [
    'minAge spares young containers',
    [crashLoop('p', 'exited')],
    scope({ known: { p: live } }),
    ['p-a1 maxPerPodContainer', 'p-a0 maxPerPodContainer'],
    { ...DEFAULT_CONTAINER_GC_POLICY, minAgeMs: 30_000 },
  ],
  [
    'maxPerPodContainer < 0 keeps everything',
    [crashLoop('p', 'exited')],
    scope({ known: { p: live } }),
    [],
    { ...DEFAULT_CONTAINER_GC_POLICY, maxPerPodContainer: -1 },
  ],
  [
    'maxContainers: an equal share per unit, then the oldest overall',
    [
      rt('p', [
        ctr('a2', 'a', 'exited', ns(1), 2),
        ctr('a1', 'a', 'exited', ns(3), 1),
        ctr('a0', 'a', 'exited', ns(6)),
        ctr('b1', 'b', 'exited', ns(2), 1),
        ctr('b0', 'b', 'exited', ns(4)),
      ]),
      rt('q', [ctr('c0', 'c', 'exited', ns(5))]),
    ],
    // 6 dead for 3 units: one each (a2 b1 c0) is still 3, so the oldest of those (c0) goes too.
    scope({ known: { p: live, q: live } }),
    ['a1 maxContainers', 'a0 maxContainers', 'b0 maxContainers', 'c0 maxContainers'],
    { minAgeMs: 0, maxPerPodContainer: -1, maxContainers: 2 },
  ],
];

for (const [name, pods, s, want, policy] of cases) {
  test(`container GC: ${name}`, () => {
    const got = planContainerGC(pods, s, policy ?? DEFAULT_CONTAINER_GC_POLICY, NOW).map((r) => `${r.id} ${r.reason}`);
    assert.deepEqual(got.sort(), [...want].sort());
  });
}

test('container GC: an unknown-state container is stopped before it is removed', () => {
  const pods = [rt('p', [ctr('n', 'main', 'exited', ns(1), 1), ctr('u', 'main', 'unknown', ns(5), 0)])];
  assert.deepEqual(planContainerGC(pods, scope({ known: { p: live } }), DEFAULT_CONTAINER_GC_POLICY, NOW), [
    { id: 'u', uid: 'p', name: 'main', attempt: 0, reason: 'maxPerPodContainer', stopFirst: true },
  ]);
});
