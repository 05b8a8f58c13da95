import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileAllowlist, requiresVerification, trimImageTagDigest, type VERIFICATION_POLICIES } from './policy.ts';

test('trimImageTagDigest: the name as written without tag and digest; a non-reference throws', () => {
  const cases: [string, string][] = [
    ['busybox', 'busybox'],
    ['busybox:1.36', 'busybox'],
    ['docker.io/library/busybox:latest', 'docker.io/library/busybox'],
    ['registry:5000/app/x:v1', 'registry:5000/app/x'],
    ['registry:5000/app/x', 'registry:5000/app/x'],
    [`r.io/x@sha256:${'a'.repeat(64)}`, 'r.io/x'],
    [`r.io/x:v1@sha256:${'a'.repeat(64)}`, 'r.io/x'],
  ];
  for (const [image, want] of cases) assert.equal(trimImageTagDigest(image), want, image);
  assert.throws(() => trimImageTagDigest('r.io/UPPER'), /invalid reference format/);
});

test('requiresVerification: each policy over preloaded and kubelet-pulled images', () => {
  const allow = compileAllowlist(['registry.k8s.io/pause', 'quay.io/org/*']);
  // [policy, image, pulledByKubelet, must verify]
  const cases: [(typeof VERIFICATION_POLICIES)[number], string, boolean, boolean][] = [
    ['NeverVerify', 'r.io/x:1', true, false],
    ['NeverVerify', 'r.io/x:1', false, false],
    ['NeverVerifyPreloadedImages', 'r.io/x:1', true, true],
    ['NeverVerifyPreloadedImages', 'r.io/x:1', false, false],
    ['AlwaysVerify', 'r.io/x:1', false, true],
    ['AlwaysVerify', 'registry.k8s.io/pause:3.10', false, true],
    ['NeverVerifyAllowlistedImages', 'registry.k8s.io/pause:3.10', true, false],
    ['NeverVerifyAllowlistedImages', 'registry.k8s.io/pause', false, false],
    ['NeverVerifyAllowlistedImages', 'registry.k8s.io/pause2:1', false, true],
    ['NeverVerifyAllowlistedImages', 'quay.io/org/app:1', false, false],
    ['NeverVerifyAllowlistedImages', 'quay.io/org/team/app@sha256:' + 'b'.repeat(64), false, false],
    ['NeverVerifyAllowlistedImages', 'quay.io/org2/app:1', false, true],
    // Preloaded or not does not matter to the allowlist policy.
    ['NeverVerifyAllowlistedImages', 'r.io/x:1', false, true],
  ];
  for (const [policy, image, pulled, want] of cases) {
    assert.equal(requiresVerification(policy, allow, image, pulled), want, `${policy} ${image} pulled=${pulled}`);
  }
});

test("compileAllowlist: upstream's refusals", () => {
  const bad: [string, RegExp][] = [
    [' r.io/x', /leading\/trailing spaces are not allowed/],
    ['', /the supplied pattern is too short/],
    ['*', /not a valid wildcard pattern/],
    ['/*', /at least registry hostname is required/],
    ['r.io/*/x', /only patterns ending with '\/\*' are allowed/],
    ['r.io/x*', /only patterns ending with '\/\*' are allowed/],
    ['r.io/x:1', /neither tag nor digest is accepted in an image reference: r.io\/x:1/],
    ['R.io/UPPER', /failed to parse as an image name/],
  ];
  for (const [p, re] of bad) assert.throws(() => compileAllowlist([p]), re, p);
  assert.deepEqual(compileAllowlist(['r.io/x', 'r.io/y/*']), { exact: new Set(['r.io/x']), prefixes: ['r.io/y/'] });
});
