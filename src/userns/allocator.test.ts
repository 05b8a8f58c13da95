import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UsernsAllocator } from './allocator.ts';

const N = 65536;
/** Three slots: host IDs 2N, 3N and 4N onwards. */
const slots = { offset: 2, count: 3, size: N };

test('allocate: from a random slot onwards, wrapping, until none is left; release frees the slot', () => {
  const a = new UsernsAllocator(slots, () => 0.5); // starts at slot 1
  assert.equal(a.allocate('p1'), 3 * N);
  assert.equal(a.allocate('p2'), 4 * N);
  assert.equal(a.allocate('p3'), 2 * N, 'wraps around to slot 0');
  assert.deepEqual(
    ['p1', 'p2', 'p3', 'p4'].map((p) => a.get(p)),
    [3 * N, 4 * N, 2 * N, undefined],
  );
  assert.throws(() => a.allocate('p4'), { message: 'could not find an empty slot to allocate a user namespace' });
  assert.equal(a.release('p2'), true);
  assert.equal(a.release('p2'), false, 'nothing to release twice');
  assert.equal(a.get('p2'), undefined);
  assert.equal(a.allocate('p4'), 4 * N, 'the freed slot');
});

test("record: a range read back is taken, with upstream's checks", () => {
  const a = new UsernsAllocator(slots, () => 0);
  a.record('p1', 3 * N, N);
  a.record('p1', 3 * N, N); // the same again: nothing to do
  assert.equal(a.get('p1'), 3 * N);
  const rows: [string, number, number, string][] = [
    ['p2', 2 * N, 1000, 'wrong user namespace length 1000'],
    ['p2', 2 * N + 1, N, `wrong user namespace offset specified ${2 * N + 1}`],
    ['p1', 2 * N, N, 'different user namespace range already used by pod "p1"'],
    ['p2', N, N, `id ${N} is out of range`],
    ['p2', 5 * N, N, `id ${5 * N} is out of range`],
    ['p2', 3 * N, N, 'range picked for pod "p2" already taken'],
  ];
  for (const [uid, from, length, message] of rows) assert.throws(() => a.record(uid, from, length), { message }, message);
  assert.equal(a.allocate('p2'), 2 * N, 'the recorded slot is not handed out again');
  assert.equal(a.allocate('p3'), 4 * N);
});

test('userNamespaces.idsPerPod: slots and recorded ranges are shares of that size', () => {
  const a = new UsernsAllocator({ offset: 1, count: 2, size: 2 * N }, () => 0);
  assert.equal(a.allocate('p1'), 2 * N);
  assert.throws(() => a.record('p2', 4 * N, N), { message: `wrong user namespace length ${N}` });
  assert.throws(() => a.record('p2', 3 * N, 2 * N), { message: `wrong user namespace offset specified ${3 * N}` });
  a.record('p2', 4 * N, 2 * N);
  assert.equal(a.release('p1'), true);
  assert.equal(a.allocate('p3'), 2 * N);
});
