import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { containerHash, hashChanged } from './hash.ts';

// The numbers upstream's HashContainer (v1.36.3) gives: its container_hash_test.go sample
// (sampleV131HashValue), and two printed by it for this test (an image with the characters Go's
// JSON escapes).
const cases: [string, { name: string; image: string; command?: string[] }, string][] = [
  ['upstream sample', { name: 'test_container', image: 'foo/image:v1', command: ['/bin/testcmd'] }, '8e45cbd0'],
  ['the bench pod', { name: 'c', image: 'docker.io/library/busybox:1.36' }, 'c0d793c2'],
  ['HTML-escaped characters', { name: 'main', image: 'a<b>&c' }, '65a56973'],
];

test("containerHash is upstream's HashContainer: image and name only", () => {
  for (const [name, c, want] of cases) assert.equal(containerHash(c), want, name);
});

test('hashChanged: a new image changes it, other fields do not; the hash kubelet-ts wrote before still matches', () => {
  const c = { name: 'c', image: 'busybox:1.36', command: ['sleep', '1'] };
  assert.equal(hashChanged(c, containerHash(c)), false);
  assert.equal(hashChanged({ ...c, command: ['sleep', '2'] }, containerHash(c)), false);
  assert.equal(hashChanged({ ...c, image: 'busybox:1.37' }, containerHash(c)), true);
  const legacy = createHash('sha256')
    .update(JSON.stringify({ name: 'c', image: 'busybox:1.36', command: ['sleep', '1'] }))
    .digest('hex')
    .slice(0, 8);
  assert.equal(hashChanged(c, legacy), false);
  assert.equal(hashChanged({ ...c, image: 'busybox:1.37' }, legacy), true);
});
