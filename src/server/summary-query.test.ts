import { test } from 'node:test';
import assert from 'node:assert/strict';
import { onlyCpuAndMemory } from './summary-query.ts';

test('only_cpu_and_memory: booleans as Go parses them; anything else is a 400 naming it', () => {
  const cases: [query: Record<string, unknown>, want: boolean | number][] = [
    [{}, false],
    [{ only_cpu_and_memory: 'true' }, true],
    [{ only_cpu_and_memory: '1' }, true],
    [{ only_cpu_and_memory: 'false' }, false],
    [{ only_cpu_and_memory: 'False' }, false],
    [{ only_cpu_and_memory: 'yes' }, 400],
    [{ only_cpu_and_memory: '' }, 400],
    [{ only_cpu_and_memory: ['true', 'false'] }, 400],
    [{ other: 'x' }, false],
  ];
  for (const [q, want] of cases) {
    const got = onlyCpuAndMemory(q);
    if (typeof want === 'boolean') assert.equal(got, want, JSON.stringify(q));
    else {
      assert.equal(typeof got === 'object' && got.status, want, JSON.stringify(q));
      assert.match((got as { message: string }).message, /only_cpu_and_memory/);
    }
  }
});
