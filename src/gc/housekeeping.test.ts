import { test } from 'node:test';
import assert from 'node:assert/strict';
import { logDirUID, planHousekeeping, type HousekeepingInput, type HousekeepingPlan } from './housekeeping.ts';
import { ctr, live, rt, sb, scope, terminatedKept } from './testing.ts';

const running = rt(
  'orphan',
  [ctr('c1', 'main', 'running', '9', 1, 's1'), ctr('c0', 'main', 'exited', '5', 0, 's1')],
  [sb('s1', 1, true), sb('s0', 0, false)],
);
const runtime = (...pods: ReturnType<typeof rt>[]) => new Map(pods.map((p) => [p.uid, p]));
const input = (o: Partial<HousekeepingInput>): HousekeepingInput => ({
  runtime: new Map(),
  scope: scope(),
  logDirs: [],
  mountedPods: new Set(),
  ...o,
});
const none: HousekeepingPlan = { orphans: [], dirs: [], mounted: [] };

const cases: [string, HousekeepingInput, HousekeepingPlan][] = [
  [
    'nothing before all sources are ready',
    input({ runtime: runtime(running), scope: scope({ owned: ['orphan', 'gone'], sourcesReady: false }) }),
    none,
  ],
  [
    'a pod of ours no source knows is killed and removed',
    input({ runtime: runtime(running), scope: scope({ owned: ['orphan'] }) }),
    {
      ...none,
      orphans: [
        { uid: 'orphan', stopContainers: ['c1'], stopSandboxes: ['s1'], removeContainers: ['c1', 'c0'], removeSandboxes: ['s1', 's0'] },
      ],
    },
  ],
  [
    "a known pod is its worker's business",
    input({ runtime: runtime(running), scope: scope({ owned: ['orphan'], known: { orphan: live } }) }),
    none,
  ],
  [
    "another kubelet's pod (no pod dir under our root) is never touched",
    input({ runtime: runtime(running), logDirs: ['ns_x_orphan'] }),
    none,
  ],
  [
    'the dirs of a pod neither known nor in the runtime go, with its log dirs only',
    input({ scope: scope({ owned: ['gone'] }), logDirs: ['ns_web_gone', 'ns_web_other', 'ns_a_gone2', 'kube-system_b_gone'] }),
    { ...none, dirs: [{ uid: 'gone', logDirs: ['ns_web_gone', 'kube-system_b_gone'] }] },
  ],
  [
    'the dirs stay while the runtime still has something of the pod (it is removed first)',
    input({ runtime: runtime(rt('gone', [], [sb('s', 0, false)])), scope: scope({ owned: ['gone'] }), logDirs: ['ns_p_gone'] }),
    { ...none, orphans: [{ uid: 'gone', stopContainers: [], stopSandboxes: [], removeContainers: [], removeSandboxes: ['s'] }] },
  ],
  [
    'an empty runtime entry does not count',
    input({ runtime: runtime(rt('gone', [])), scope: scope({ owned: ['gone'] }) }),
    { ...none, dirs: [{ uid: 'gone', logDirs: [] }] },
  ],
  ['the dirs of a known pod stay', input({ scope: scope({ owned: ['p'], known: { p: terminatedKept } }), logDirs: ['ns_p_p'] }), none],
  [
    'a pod dir with a mount below it stays',
    input({ scope: scope({ owned: ['gone'] }), mountedPods: new Set(['gone']) }),
    { ...none, mounted: ['gone'] },
  ],
];

for (const [name, i, want] of cases) {
  test(`housekeeping: ${name}`, () => assert.deepEqual(planHousekeeping(i), want));
}

test('logDirUID: the last _-separated field of NAMESPACE_NAME_UID', () => {
  assert.equal(logDirUID('default_web-0_0f1e2d3c-aaaa-bbbb-cccc-000000000001'), '0f1e2d3c-aaaa-bbbb-cccc-000000000001');
  assert.equal(logDirUID('no-underscore'), 'no-underscore');
});
