import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateEvents, diffRelist } from './events.ts';
import type { PodRuntimeStatus } from '../container/types.ts';

test('generateEvents: every transition', () => {
  const cases: [Parameters<typeof generateEvents>[2], Parameters<typeof generateEvents>[3], string[]][] = [
    ['non-existent', 'running', ['ContainerStarted']],
    ['created', 'running', ['ContainerStarted']],
    ['running', 'exited', ['ContainerDied']],
    ['running', 'non-existent', ['ContainerDied', 'ContainerRemoved']],
    ['exited', 'non-existent', ['ContainerRemoved']],
    ['running', 'unknown', ['ContainerChanged']],
    ['non-existent', 'created', []],
    ['running', 'running', []],
  ];
  for (const [a, b, want] of cases)
    assert.deepEqual(
      generateEvents('u', 'c', a, b).map((e) => e.type),
      want,
      `${a} -> ${b}`,
    );
});

test('diffRelist: nothing changed means no events', () => {
  const s: PodRuntimeStatus = {
    uid: 'u',
    sandboxes: [{ id: 's', attempt: 0, ready: true, createdAtNs: '1' }],
    containers: [{ id: 'c', sandboxId: 's', name: 'a', attempt: 0, phase: 'running', image: '', imageRef: '', hash: '', createdAtNs: '1' }],
  };
  assert.deepEqual(diffRelist(new Map([['u', s]]), new Map([['u', s]])), []);
  const died = { ...s, containers: [{ ...s.containers[0]!, phase: 'exited' as const }] };
  assert.deepEqual(diffRelist(new Map([['u', s]]), new Map([['u', died]])), [{ uid: 'u', type: 'ContainerDied', containerID: 'c' }]);
  assert.deepEqual(
    diffRelist(new Map([['u', s]]), new Map()).map((e) => e.type),
    ['ContainerDied', 'ContainerRemoved', 'ContainerDied', 'ContainerRemoved'],
  );
});
