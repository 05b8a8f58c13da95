import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { CsiError, isFinalError, toCsiError } from './errors.ts';

const cases: [string, unknown, boolean][] = [
  ['Canceled: may be in progress', new CsiError('d', 'NodeStageVolume', status.CANCELLED, ''), false],
  ['DeadlineExceeded: may be in progress', new CsiError('d', 'NodeStageVolume', status.DEADLINE_EXCEEDED, ''), false],
  ['Unavailable: may be in progress', new CsiError('d', 'NodeStageVolume', status.UNAVAILABLE, ''), false],
  ['ResourceExhausted: may be in progress', new CsiError('d', 'NodeStageVolume', status.RESOURCE_EXHAUSTED, ''), false],
  ['Aborted (CSI: operation pending): may be in progress', new CsiError('d', 'NodePublishVolume', status.ABORTED, ''), false],
  ['InvalidArgument: final', new CsiError('d', 'NodeStageVolume', status.INVALID_ARGUMENT, ''), true],
  ['NotFound: final', new CsiError('d', 'NodeStageVolume', status.NOT_FOUND, ''), true],
  ['AlreadyExists: final', new CsiError('d', 'NodePublishVolume', status.ALREADY_EXISTS, ''), true],
  ['FailedPrecondition: final', new CsiError('d', 'NodePublishVolume', status.FAILED_PRECONDITION, ''), true],
  ['Internal: final', new CsiError('d', 'NodeStageVolume', status.INTERNAL, ''), true],
  ['Unknown: final', new CsiError('d', 'NodeStageVolume', status.UNKNOWN, ''), true],
  ['not a gRPC error: not final, to be safe', new Error('no such driver'), false],
  ['not an error at all: not final', 'boom', false],
];

for (const [name, err, want] of cases) test(`isFinalError: ${name}`, () => assert.equal(isFinalError(err), want));

test('toCsiError keeps the code and puts the details on one line', () => {
  const e = toCsiError('hostpath.csi.k8s.io', 'NodeStageVolume', { code: status.NOT_FOUND, details: 'volume\n  vol-1 not found' });
  assert.equal(e.code, status.NOT_FOUND);
  assert.equal(e.message, 'CSI NodeStageVolume of driver hostpath.csi.k8s.io failed: code 5 NOT_FOUND: volume vol-1 not found');
  assert.equal(toCsiError('d', 'Probe', new Error('boom')).code, status.UNKNOWN);
});
