import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DELETE_RELISTS_MS, EXIT_RELISTS_MS, relistsAfter, type RuntimeEvent, STOPPED_RELISTS_MS } from './runtime-events.ts';

test('relistsAfter: CRI stopped at once; task exits shortly after; the TaskDelete of an exit not yet seen right after; the rest none', () => {
  const cases: [RuntimeEvent['kind'], boolean, readonly number[]][] = [
    ['stopped', false, STOPPED_RELISTS_MS],
    ['exit', false, EXIT_RELISTS_MS],
    ['oom', false, EXIT_RELISTS_MS],
    ['delete', true, DELETE_RELISTS_MS],
    ['delete', false, []],
    ['start', true, []],
  ];
  for (const [kind, awaiting, want] of cases)
    assert.deepEqual(
      relistsAfter({ kind, containerID: 'c' }, () => awaiting),
      want,
      `${kind}, awaiting its exit: ${awaiting}`,
    );
  assert.deepEqual(STOPPED_RELISTS_MS, [0]);
});
