import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withRemovals } from './manager.ts';

test('withRemovals: resize conditions the status does not carry are deleted by the patch', () => {
  const ready = { type: 'Ready', status: 'True' };
  assert.deepEqual(withRemovals({ conditions: [ready] }).conditions, [ready, { type: 'PodResizePending', $patch: 'delete' }, { type: 'PodResizeInProgress', $patch: 'delete' }]);
  const pending = { type: 'PodResizePending', status: 'True', reason: 'Deferred' };
  assert.deepEqual(withRemovals({ conditions: [ready, pending] }).conditions, [ready, pending, { type: 'PodResizeInProgress', $patch: 'delete' }]);
  assert.deepEqual(withRemovals({ phase: 'Failed' }), { phase: 'Failed' }, 'no conditions: nothing to merge');
});
