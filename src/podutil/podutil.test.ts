import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { byCodeUnits, isCriticalPod, isMirrorPod, isSidecar, isStaticPod, podKey } from './podutil.ts';

const pod = (annotations: Record<string, string> = {}, priority?: number): Pod => ({
  metadata: { name: 'p', namespace: 'ns', annotations },
  spec: { containers: [], ...(priority === undefined ? {} : { priority }) },
});

test('what a pod is', () => {
  const rows: [string, Pod, { static: boolean; mirror: boolean; critical: boolean }][] = [
    ['an apiserver pod', pod({ 'kubernetes.io/config.source': 'api' }), { static: false, mirror: false, critical: false }],
    ['a file pod', pod({ 'kubernetes.io/config.source': 'file' }), { static: true, mirror: false, critical: true }],
    ['a URL pod', pod({ 'kubernetes.io/config.source': 'http' }), { static: true, mirror: false, critical: true }],
    ['a mirror pod with an empty value', pod({ 'kubernetes.io/config.mirror': '' }), { static: false, mirror: true, critical: true }],
    ['system-cluster-critical', pod({}, 2_000_000_000), { static: false, mirror: false, critical: true }],
    ['just below it', pod({}, 1_999_999_999), { static: false, mirror: false, critical: false }],
  ];
  for (const [name, p, want] of rows)
    assert.deepEqual({ static: isStaticPod(p), mirror: isMirrorPod(p), critical: isCriticalPod(p) }, want, name);
});

test('sidecars and keys', () => {
  assert.equal(isSidecar({ name: 's', restartPolicy: 'Always' }), true);
  assert.equal(isSidecar({ name: 'i' }), false);
  assert.equal(podKey(pod()), 'ns/p');
});

test('pod keys sort as Go compares strings: by code unit, upper case before lower', () => {
  const keys = ['kube-system/b', 'default/web-10', 'Default/x', 'default/web-2', 'default/web-1'];
  assert.deepEqual(keys.sort(byCodeUnits), ['Default/x', 'default/web-1', 'default/web-10', 'default/web-2', 'kube-system/b']);
  assert.equal(byCodeUnits('a', 'a'), 0);
});
