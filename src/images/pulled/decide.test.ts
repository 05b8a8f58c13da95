import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergePulled, mustPull, type PodCredentials, type PresentImage, type Verdict } from './decide.ts';
import { compileAllowlist, type VerificationPolicy } from './policy.ts';
import type { ImagePullCredentials, ImagePulledRecord, ImagePullSecret } from './records.ts';

const IMAGE = 'r.io/private/app:1';
const NAME = 'r.io/private/app';
const secretA: ImagePullSecret = { uid: 'ua', namespace: 'a', name: 'pull', credentialHash: 'hash-right' };
const saA = { uid: 'sa-uid', namespace: 'a', name: 'builder' };
const record = (c?: ImagePullCredentials, name = NAME): ImagePulledRecord => ({
  lastUpdatedTime: 0,
  imageRef: 'sha256:img',
  credentialMapping: c ? { [name]: c } : {},
});

test('mustPull: policy x record x pod credentials, as upstream MustAttemptImagePull', () => {
  const allowlist = compileAllowlist(['r.io/preloaded/*']);
  const none: PodCredentials = { secrets: [] };
  // [why, policy, image, intent, record, pod credentials, verdict]
  type Row = [string, VerificationPolicy, string, boolean, ImagePulledRecord | undefined, PodCredentials | undefined, Verdict];
  const yes = (why: 'mustAuthenticate') => ({ pull: true, why });
  const no = (why: 'credentialPolicyAllowed' | 'credentialRecordFound', remember?: ImagePullSecret) => ({
    pull: false,
    why,
    ...(remember ? { remember } : {}),
  });
  const cases: Row[] = [
    // Preloaded images: present before any record or intent.
    ['preloaded, default policy: anyone', 'NeverVerifyPreloadedImages', IMAGE, false, undefined, undefined, no('credentialPolicyAllowed')],
    ['preloaded, AlwaysVerify: pull', 'AlwaysVerify', IMAGE, false, undefined, undefined, yes('mustAuthenticate')],
    [
      'preloaded, allowlisted',
      'NeverVerifyAllowlistedImages',
      'r.io/preloaded/x:1',
      false,
      undefined,
      undefined,
      no('credentialPolicyAllowed'),
    ],
    ['preloaded, not allowlisted', 'NeverVerifyAllowlistedImages', IMAGE, false, undefined, undefined, yes('mustAuthenticate')],
    [
      'NeverVerify: anyone, even a private pull',
      'NeverVerify',
      IMAGE,
      false,
      record({ kubernetesSecrets: [secretA] }),
      none,
      no('credentialPolicyAllowed'),
    ],
    // Pulled by the kubelet.
    [
      'intent only (pull in flight or crashed): pull',
      'NeverVerifyPreloadedImages',
      IMAGE,
      true,
      undefined,
      undefined,
      yes('mustAuthenticate'),
    ],
    [
      'record of an unknown pull (no credentials): pull',
      'NeverVerifyPreloadedImages',
      IMAGE,
      false,
      record(),
      undefined,
      yes('mustAuthenticate'),
    ],
    [
      'record for another name of the image: pull',
      'NeverVerifyPreloadedImages',
      IMAGE,
      false,
      record({ nodePodsAccessible: true }, 'r.io/other'),
      undefined,
      yes('mustAuthenticate'),
    ],
    [
      'anonymous or node-wide pull: anyone',
      'NeverVerifyPreloadedImages',
      IMAGE,
      false,
      record({ nodePodsAccessible: true }),
      undefined,
      no('credentialRecordFound'),
    ],
    [
      'AlwaysVerify, node-wide pull: anyone',
      'AlwaysVerify',
      IMAGE,
      false,
      record({ nodePodsAccessible: true }),
      undefined,
      no('credentialRecordFound'),
    ],
    ['empty credentials entry: pull', 'NeverVerifyPreloadedImages', IMAGE, false, record({}), undefined, yes('mustAuthenticate')],
    [
      'secret pull, pod not asked yet: ask',
      'NeverVerifyPreloadedImages',
      IMAGE,
      false,
      record({ kubernetesSecrets: [secretA] }),
      undefined,
      { needPod: true },
    ],
    [
      'secret pull, same secret and hash',
      'NeverVerifyPreloadedImages',
      IMAGE,
      false,
      record({ kubernetesSecrets: [secretA] }),
      { secrets: [secretA] },
      no('credentialRecordFound'),
    ],
    [
      'secret pull, pod without secrets: pull',
      'NeverVerifyPreloadedImages',
      IMAGE,
      false,
      record({ kubernetesSecrets: [secretA] }),
      none,
      yes('mustAuthenticate'),
    ],
    [
      'secret pull, another namespace with a secret of the same name and other credentials: pull',
      'NeverVerifyPreloadedImages',
      IMAGE,
      false,
      record({ kubernetesSecrets: [secretA] }),
      { secrets: [{ uid: 'ub', namespace: 'b', name: 'pull', credentialHash: 'hash-other' }] },
      yes('mustAuthenticate'),
    ],
    [
      'secret pull, another secret with the same credentials: allowed and remembered',
      'NeverVerifyPreloadedImages',
      IMAGE,
      false,
      record({ kubernetesSecrets: [secretA] }),
      { secrets: [{ uid: 'uc', namespace: 'c', name: 'copy', credentialHash: 'hash-right' }] },
      no('credentialRecordFound', { uid: 'uc', namespace: 'c', name: 'copy', credentialHash: 'hash-right' }),
    ],
    [
      'secret pull, the same secret rotated: allowed and its new hash remembered',
      'NeverVerifyPreloadedImages',
      IMAGE,
      false,
      record({ kubernetesSecrets: [secretA] }),
      { secrets: [{ ...secretA, credentialHash: 'hash-rotated' }] },
      no('credentialRecordFound', { ...secretA, credentialHash: 'hash-rotated' }),
    ],
    [
      'an empty recorded hash matches no hash',
      'NeverVerifyPreloadedImages',
      IMAGE,
      false,
      record({ kubernetesSecrets: [{ uid: 'x', namespace: 'x', name: 'x', credentialHash: '' }] }),
      { secrets: [{ uid: 'y', namespace: 'y', name: 'y', credentialHash: '' }] },
      yes('mustAuthenticate'),
    ],
    // Token-mode credential providers: the service account.
    [
      'service account pull, same account',
      'NeverVerifyPreloadedImages',
      IMAGE,
      false,
      record({ kubernetesServiceAccounts: [saA] }),
      { secrets: [], serviceAccount: saA },
      no('credentialRecordFound'),
    ],
    [
      'service account pull, same name, recreated (other uid): pull',
      'NeverVerifyPreloadedImages',
      IMAGE,
      false,
      record({ kubernetesServiceAccounts: [saA] }),
      { secrets: [], serviceAccount: { ...saA, uid: 'new' } },
      yes('mustAuthenticate'),
    ],
    [
      'service account pull, pod without one: pull',
      'NeverVerifyPreloadedImages',
      IMAGE,
      false,
      record({ kubernetesServiceAccounts: [saA] }),
      none,
      yes('mustAuthenticate'),
    ],
    [
      'AlwaysVerify with the right secret: allowed',
      'AlwaysVerify',
      IMAGE,
      false,
      record({ kubernetesSecrets: [secretA] }),
      { secrets: [secretA] },
      no('credentialRecordFound'),
    ],
    [
      'an image that does not parse: pull',
      'AlwaysVerify',
      'r.io/UPPER:1',
      false,
      record({ nodePodsAccessible: true }, 'r.io/UPPER'),
      undefined,
      yes('mustAuthenticate'),
    ],
  ];
  for (const [why, policy, image, intent, rec, pod, want] of cases) {
    const p: PresentImage = { image, policy, allowlist, intent, record: rec, ...(pod ? { pod } : {}) };
    assert.deepEqual(mustPull(p), want, why);
  }
});

test('mustPull: past 100 recorded secrets a rotated secret is no longer taken (upstream writeRecordWhileMatchingLimit)', () => {
  const many = Array.from({ length: 100 }, (_, i) => ({ uid: `u${i}`, namespace: 'n', name: `s${i}`, credentialHash: `h${i}` }));
  const base = { image: IMAGE, policy: 'NeverVerifyPreloadedImages' as const, allowlist: compileAllowlist([]), intent: false };
  const rec = record({ kubernetesSecrets: many });
  assert.deepEqual(mustPull({ ...base, record: rec, pod: { secrets: [{ ...many[5]!, credentialHash: 'rotated' }] } }), {
    pull: true,
    why: 'mustAuthenticate',
  });
  // Same credentials elsewhere: allowed, not remembered.
  assert.deepEqual(mustPull({ ...base, record: rec, pod: { secrets: [{ uid: 'z', namespace: 'z', name: 'z', credentialHash: 'h7' }] } }), {
    pull: false,
    why: 'credentialRecordFound',
  });
});

test('mergePulled: a new record, credentials merged per image name, unchanged records not written', () => {
  const now = 5000;
  const secretB: ImagePullSecret = { uid: 'ub', namespace: 'b', name: 'pull', credentialHash: 'hb' };
  const rec = (c: ImagePullCredentials) => ({ lastUpdatedTime: 1, imageRef: 'ref', credentialMapping: { [NAME]: c } });
  // [why, record, credentials, want]
  const cases: [string, ImagePulledRecord | undefined, ImagePullCredentials | undefined, ImagePulledRecord | undefined][] = [
    ['new, unknown pull: tracked, no credentials', undefined, undefined, { lastUpdatedTime: now, imageRef: 'ref', credentialMapping: {} }],
    [
      'new, a secret',
      undefined,
      { kubernetesSecrets: [secretA] },
      { lastUpdatedTime: now, imageRef: 'ref', credentialMapping: { [NAME]: { kubernetesSecrets: [secretA] } } },
    ],
    ['existing, no credentials: unchanged', rec({ kubernetesSecrets: [secretA] }), undefined, undefined],
    ['existing, empty credentials: unchanged', rec({ kubernetesSecrets: [secretA] }), {}, undefined],
    ['the same secret again: unchanged', rec({ kubernetesSecrets: [secretA] }), { kubernetesSecrets: [secretA] }, undefined],
    ['node-wide already: unchanged', rec({ nodePodsAccessible: true }), { kubernetesSecrets: [secretA] }, undefined],
    [
      'another secret: merged, sorted by namespace, name, uid',
      rec({ kubernetesSecrets: [secretB] }),
      { kubernetesSecrets: [secretA] },
      { ...rec({ kubernetesSecrets: [secretA, secretB] }), lastUpdatedTime: now },
    ],
    [
      'a rotated secret: its hash replaced',
      rec({ kubernetesSecrets: [secretA] }),
      { kubernetesSecrets: [{ ...secretA, credentialHash: 'new' }] },
      { ...rec({ kubernetesSecrets: [{ ...secretA, credentialHash: 'new' }] }), lastUpdatedTime: now },
    ],
    [
      'then node-wide: secrets dropped',
      rec({ kubernetesSecrets: [secretA] }),
      { nodePodsAccessible: true },
      { ...rec({ nodePodsAccessible: true }), lastUpdatedTime: now },
    ],
    [
      'a service account added beside secrets',
      rec({ kubernetesSecrets: [secretA] }),
      { kubernetesServiceAccounts: [saA] },
      { ...rec({ kubernetesSecrets: [secretA], kubernetesServiceAccounts: [saA] }), lastUpdatedTime: now },
    ],
    ['the same service account: unchanged', rec({ kubernetesServiceAccounts: [saA] }), { kubernetesServiceAccounts: [saA] }, undefined],
  ];
  for (const [why, r, c, want] of cases) assert.deepEqual(mergePulled(r, 'ref', NAME, c, now), want, why);
  // Another name of the same image gets its own entry.
  assert.deepEqual(
    mergePulled(rec({ nodePodsAccessible: true }), 'ref', 'r.io/alias', { kubernetesSecrets: [secretA] }, now)?.credentialMapping,
    {
      [NAME]: { nodePodsAccessible: true },
      'r.io/alias': { kubernetesSecrets: [secretA] },
    },
  );
});
