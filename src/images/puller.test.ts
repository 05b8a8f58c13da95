import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pullPolicy } from './puller.ts';

test('default imagePullPolicy, as the apiserver would default it', () => {
  const cases: [string, string | undefined, string][] = [
    ['busybox', undefined, 'Always'],
    ['busybox:latest', undefined, 'Always'],
    ['docker.io/library/busybox:1.36', undefined, 'IfNotPresent'],
    ['localhost:5000/app', undefined, 'Always'],
    ['localhost:5000/app:v2', undefined, 'IfNotPresent'],
    ['busybox@sha256:abc', undefined, 'IfNotPresent'],
    ['busybox:latest', 'Never', 'Never'],
  ];
  for (const [image, policy, want] of cases) assert.equal(pullPolicy({ name: 'c', image, imagePullPolicy: policy }), want, image);
});
