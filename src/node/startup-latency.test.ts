import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type NodeReadyDurations, type NodeStartupDurations, nodeStartupTracker } from './startup-latency.ts';

type Step = 'attempt' | 'registered' | 'ready';

// upstream's node_startup_latency_tracker_test.go cases: boot at 0, the kubelet at 100 s, each step
// a second after the one before it.
test('nodeStartupTracker: each phase once a run, only after the steps before it', () => {
  const cases: {
    name: string;
    bootMs?: number;
    steps: Step[];
    registered?: NodeStartupDurations;
    ready?: NodeReadyDurations;
  }[] = [
    {
      name: 'a new Node, then Ready',
      bootMs: 0,
      steps: ['attempt', 'registered', 'ready'],
      registered: { preKubelet: 100, preRegistration: 1, registration: 1 },
      ready: { postRegistration: 1, total: 103 },
    },
    {
      name: 'the first attempt counts, not the later ones',
      bootMs: 0,
      steps: ['attempt', 'attempt', 'attempt', 'registered', 'ready'],
      registered: { preKubelet: 100, preRegistration: 1, registration: 3 },
      ready: { postRegistration: 1, total: 105 },
    },
    {
      name: 'Ready before any Node was created (a restart that adopted its Node): nothing',
      bootMs: 0,
      steps: ['attempt', 'ready', 'ready'],
    },
    { name: 'created without an attempt recorded: nothing', bootMs: 0, steps: ['registered', 'ready'] },
    {
      name: 'created twice, Ready twice: the first of each',
      bootMs: 0,
      steps: ['attempt', 'registered', 'registered', 'ready', 'ready'],
      registered: { preKubelet: 100, preRegistration: 1, registration: 1 },
      ready: { postRegistration: 2, total: 104 },
    },
    {
      name: 'no boot time: the phases that need it are left out',
      steps: ['attempt', 'registered', 'ready'],
      registered: { preKubelet: undefined, preRegistration: 1, registration: 1 },
      ready: { postRegistration: 1, total: undefined },
    },
  ];
  for (const c of cases) {
    let clock = 100_000;
    const seen: { registered: NodeStartupDurations[]; ready: NodeReadyDurations[] } = { registered: [], ready: [] };
    const t = nodeStartupTracker(
      { bootMs: c.bootMs, kubeletStartMs: 100_000, now: () => clock },
      { registered: (d) => seen.registered.push(d), ready: (d) => seen.ready.push(d) },
    );
    for (const step of c.steps) {
      clock += 1000;
      ({ attempt: t.attemptRegister, registered: t.registeredNew, ready: t.ready })[step]();
    }
    assert.deepEqual(seen.registered, c.registered ? [c.registered] : [], `${c.name}: registered`);
    assert.deepEqual(seen.ready, c.ready ? [c.ready] : [], `${c.name}: ready`);
  }
});
