import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidReference } from './reference.ts';

const cases: [string, boolean][] = [
  ['busybox', true],
  ['busybox:1.36', true],
  ['docker.io/library/busybox:1.36', true],
  ['registry.k8s.io/e2e-test-images/busybox:1.36.1-1', true],
  ['172.30.255.10:5005/e2e/busybox:run-1', true],
  [`busybox@sha256:${'a'.repeat(64)}`, true],
  [`localhost:5000/a/b:t@sha256:${'0'.repeat(64)}`, true],
  ['BusyBox', false],
  ['busybox:', false],
  ['busybox::1', false],
  ['-busybox', false],
  ['busy box', false],
  ['busybox@sha256:xyz', false],
  ['', false],
  [`a/${'b'.repeat(260)}`, false],
];
for (const [image, valid] of cases) {
  test(`image reference ${JSON.stringify(image.slice(0, 40))} is ${valid ? 'valid' : 'invalid'}`, () =>
    assert.equal(invalidReference(image) === undefined, valid));
}
