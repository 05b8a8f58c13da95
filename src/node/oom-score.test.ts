import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyOwnOOMScoreAdj } from './oom-score.ts';

test('applyOwnOOMScoreAdj writes the value, and returns the error when the kernel refuses it', () => {
  const written: string[] = [];
  assert.equal(
    applyOwnOOMScoreAdj(-999, (v) => written.push(v)),
    undefined,
  );
  assert.deepEqual(written, ['-999']);
  const denied = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
  assert.equal(
    applyOwnOOMScoreAdj(-999, () => {
      throw denied;
    }),
    denied,
  );
});
