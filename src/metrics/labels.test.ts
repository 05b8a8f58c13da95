import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admissionRejectionReason, grpcCodeName, imageSizeBucket } from './labels.ts';

test('admissionRejectionReason: allowlisted reasons as themselves, other OutOf* as extended resources, the rest Other', () => {
  for (const [reason, label] of [
    ['OutOfcpu', 'OutOfcpu'],
    ['OutOfpods', 'OutOfpods'],
    ['Evicted', 'Evicted'],
    ['SysctlForbidden', 'SysctlForbidden'],
    ['OutOfexample.com/gpu', 'OutOfExtendedResources'],
    ['NodeAffinity', 'Other'],
    ['', 'Other'],
  ])
    assert.equal(admissionRejectionReason(reason!), label, reason);
});

test('imageSizeBucket: upstream ranges, lower bounds exclusive; N/A when the size is unknown', () => {
  const MiB = 1024 * 1024;
  for (const [bytes, label] of [
    [0, 'N/A'],
    [1, '0-10MB'],
    [10 * MiB, '0-10MB'],
    [10 * MiB + 1, '10MB-100MB'],
    [4.4 * MiB * 1000, '1GB-5GB'],
    [200 * 1024 * MiB, 'GT100GB'],
  ] as const)
    assert.equal(imageSizeBucket(bytes), label, String(bytes));
});

test('grpcCodeName: Go spellings of gRPC codes; Unknown for errors without one', () => {
  assert.equal(grpcCodeName({ code: 1 }), 'Canceled');
  assert.equal(grpcCodeName({ code: 5 }), 'NotFound');
  assert.equal(grpcCodeName({ code: 14 }), 'Unavailable');
  assert.equal(grpcCodeName(new Error('x')), 'Unknown');
  assert.equal(grpcCodeName({ code: 99 }), 'Unknown');
});
