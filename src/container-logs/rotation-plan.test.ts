import { test } from 'node:test';
import assert from 'node:assert/strict';
import { needsRotation, planRotation, rotationTimestamp, type RotationPlan } from './rotation-plan.ts';

const L = '/var/log/pods/ns_p_u/c/0.log';
const now = new Date(2026, 10, 22, 17, 5, 9); // local time, as upstream's clock.Now().Format
const rotateTo = `${L}.20261122-170509`;

test('rotationTimestamp is YYYYMMDD-HHMMSS', () => {
  assert.equal(rotationTimestamp(new Date(2024, 0, 2, 3, 4, 5)), '20240102-030405');
  assert.equal(rotationTimestamp(new Date(2024, 11, 31, 23, 59, 59)), '20241231-235959');
});

test('needsRotation', () => {
  const cases: [number, number, boolean][] = [
    [0, 10, false],
    [9, 10, false],
    [10, 10, true],
    [11, 10, true],
    [1 << 30, -1, false],
  ];
  for (const [size, maxSize, want] of cases) assert.equal(needsRotation(size, { maxSize, maxFiles: 5 }), want, `${size}/${maxSize}`);
});

test('planRotation', () => {
  const cases: { name: string; siblings: string[]; maxFiles: number; want: Omit<RotationPlan, 'rotateTo'> }[] = [
    { name: 'first rotation', siblings: [], maxFiles: 5, want: { remove: [], compress: [] } },
    {
      name: 'previous rotated file gets compressed',
      siblings: [`${L}.20261122-170000`],
      maxFiles: 5,
      want: { remove: [], compress: [`${L}.20261122-170000`] },
    },
    {
      name: 'at the limit: the oldest goes, the newest plain one is compressed',
      siblings: [`${L}.20261122-170030`, `${L}.20261122-170000.gz`, `${L}.20261122-170010.gz`, `${L}.20261122-170020.gz`],
      maxFiles: 5,
      want: { remove: [`${L}.20261122-170000.gz`], compress: [`${L}.20261122-170030`] },
    },
    {
      name: 'maxFiles 2 keeps no older file',
      siblings: [`${L}.20261122-170000.gz`, `${L}.20261122-170010`],
      maxFiles: 2,
      want: { remove: [`${L}.20261122-170000.gz`, `${L}.20261122-170010`], compress: [] },
    },
    {
      name: 'leftovers of an interrupted compression are removed',
      siblings: [`${L}.20261122-170000`, `${L}.20261122-170000.gz`, `${L}.20261122-170010.tmp`, `${L}.20261122-170010`],
      maxFiles: 5,
      want: { remove: [`${L}.20261122-170000`, `${L}.20261122-170010.tmp`], compress: [`${L}.20261122-170010`] },
    },
    {
      name: 'other containers and attempts are not ours',
      siblings: [`/var/log/pods/ns_p_u/c/1.log.20261122-170000`, `${L}x.20261122-170000`],
      maxFiles: 5,
      want: { remove: [], compress: [] },
    },
  ];
  for (const c of cases)
    assert.deepEqual(planRotation(L, c.siblings, { maxSize: 10, maxFiles: c.maxFiles }, now), { ...c.want, rotateTo }, c.name);
});
