import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CPUSet, parseCPUSet } from './cpuset.ts';

test('parseCPUSet and toString round-trip the kernel list format (cpuset.Parse, String)', () => {
  const rows: [text: string, ids: number[], printed: string][] = [
    ['', [], ''],
    ['0', [0], '0'],
    ['0-3', [0, 1, 2, 3], '0-3'],
    ['0-3,7', [0, 1, 2, 3, 7], '0-3,7'],
    ['7,0-3', [0, 1, 2, 3, 7], '0-3,7'],
    ['1-1', [1], '1'],
    ['0,1,2,5,6,9', [0, 1, 2, 5, 6, 9], '0-2,5-6,9'],
    ['0-5,34,46-48', [0, 1, 2, 3, 4, 5, 34, 46, 47, 48], '0-5,34,46-48'],
    ['3,3,3', [3], '3'],
  ];
  for (const [text, ids, printed] of rows) {
    const s = parseCPUSet(text);
    assert.deepEqual(s.list(), ids, text);
    assert.equal(s.toString(), printed, text);
  }
});

test('parseCPUSet refuses what upstream refuses', () => {
  const rows: [text: string, error: RegExp][] = [
    ['5-3', /invalid range "5-3" \(5 > 3\)/],
    ['a', /invalid syntax/],
    ['0-', /invalid syntax/],
    ['-1', /invalid syntax/],
    ['0,,1', /invalid syntax/],
    ['1-2-3', /invalid syntax/],
    [' 1', /invalid syntax/],
  ];
  for (const [text, error] of rows) assert.throws(() => parseCPUSet(text), error, text);
});

test('set operations', () => {
  const a = CPUSet.of(0, 1, 2, 3),
    b = CPUSet.of(2, 3, 4);
  const rows: [name: string, got: CPUSet, want: string][] = [
    ['union', a.union(b), '0-4'],
    ['union of several', CPUSet.EMPTY.union(CPUSet.of(1), CPUSet.of(5)), '1,5'],
    ['intersection', a.intersection(b), '2-3'],
    ['difference', a.difference(b), '0-1'],
    ['difference to empty', b.difference(b), ''],
  ];
  for (const [name, got, want] of rows) assert.equal(got.toString(), want, name);
  assert.ok(CPUSet.of(1, 2).equals(parseCPUSet('1-2')));
  assert.ok(!a.equals(b));
  assert.ok(CPUSet.of(2).isSubsetOf(a));
  assert.ok(CPUSet.EMPTY.isEmpty());
  assert.equal(a.size, 4);
  assert.ok(a.has(3) && !a.has(4));
});
