import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { CriError, goCodeName, goErrorText, statusMessage } from './error.ts';

test("a CRI call's error as upstream prints it: grpc-go's status error with %v, or its message alone", () => {
  const e = new CriError('PullImage', status.NOT_FOUND, 'failed to resolve reference "x"');
  assert.equal(e.message, 'CRI PullImage failed: code 5 NOT_FOUND: failed to resolve reference "x"', 'our own log line names the call');
  assert.equal(goErrorText(e), 'rpc error: code = NotFound desc = failed to resolve reference "x"');
  assert.equal(statusMessage(e), 'failed to resolve reference "x"');
  assert.equal(goErrorText(new Error('plain')), 'plain');
  assert.equal(statusMessage(new Error('plain')), 'plain');
  const names = [status.CANCELLED, status.DEADLINE_EXCEEDED, status.UNAVAILABLE, status.UNAUTHENTICATED, 42].map(goCodeName);
  assert.deepEqual(names, ['Canceled', 'DeadlineExceeded', 'Unavailable', 'Unauthenticated', 'Code(42)']);
});
