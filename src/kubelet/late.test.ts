import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Late } from './late.ts';

test('Late: a call before the part is built throws naming it; after, the part is read; built twice throws', () => {
  const workers = new Late<{ wake(uid: string): string }>('the pod workers');
  assert.throws(() => workers.get().wake('a'), /the pod workers used before it was built/);
  workers.set({ wake: (uid) => `woke ${uid}` });
  assert.equal(workers.get().wake('a'), 'woke a');
  assert.throws(() => workers.set({ wake: () => '' }), /the pod workers was built twice/);
});
