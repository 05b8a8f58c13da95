// The pinned kubelet's own image pull manager against kubelet-ts's: testdata/upstream-records.json
// is what upstream's pullmanager wrote under image_manager/ at each step of a scenario, its
// answers, and its keyring's credential hashes (hack/tools/kube/pulled-records). The same
// scenario here must leave the same files, byte for byte but the time, and give the same answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentialHash } from '../keyring.ts';
import { PulledImages } from './manager.ts';
import { compileAllowlist } from './policy.ts';
import type { ImagePullSecret, ImagePullServiceAccount } from './records.ts';
import { FsPullRecords } from './store.ts';

interface Upstream {
  steps: { step: string; result?: boolean; files: Record<string, string> }[];
  hashes: Record<string, string>;
}
const upstream = JSON.parse(readFileSync(new URL('./testdata/upstream-records.json', import.meta.url), 'utf8')) as Upstream;

test("upstream's pull manager and kubelet-ts's write the same files and answer the same for the same steps", async () => {
  const root = mkdtempSync(join(tmpdir(), 'kts-pulled-upstream-'));
  try {
    const m = new PulledImages({ records: new FsPullRecords(root), policy: 'NeverVerifyPreloadedImages', allowlist: compileAllowlist([]) });
    const files = () => {
      const out: Record<string, string> = {};
      for (const sub of ['pulling', 'pulled']) {
        const dir = join(root, 'image_manager', sub);
        for (const f of readdirSync(dir)) {
          out[`image_manager/${sub}/${f}`] = readFileSync(join(dir, f), 'utf8').replace(
            /"lastUpdatedTime":"[^"]*"/g,
            '"lastUpdatedTime":"T"',
          );
        }
      }
      return out;
    };
    const secretA: ImagePullSecret = { uid: 'ua', namespace: 'a', name: 'pull', credentialHash: 'ha' };
    const copyC: ImagePullSecret = { uid: 'uc', namespace: 'c', name: 'copy', credentialHash: 'ha' };
    const sa: ImagePullServiceAccount = { uid: 'sa-uid', namespace: 'a', name: 'builder' };
    const check = (image: string, ref: string, secrets: ImagePullSecret[], serviceAccount?: ImagePullServiceAccount) =>
      m.mustPull(image, ref, async () => ({ secrets, ...(serviceAccount ? { serviceAccount } : {}) }));
    const steps: [string, () => Promise<boolean | undefined> | undefined][] = [
      ['intent r.io/app:1', () => void m.recordIntent('r.io/app:1')],
      [
        'pulled r.io/app:1 as sha256:img with secret a/pull',
        () => void m.recordPulled('r.io/app:1', 'sha256:img', { kubernetesSecrets: [secretA] }),
      ],
      ['check r.io/app:1, no secrets', () => check('r.io/app:1', 'sha256:img', [])],
      ['check r.io/app:2, secret c/copy with the same hash', () => check('r.io/app:2', 'sha256:img', [copyC])],
      ['check r.io/app:1, secret a/pull rotated', () => check('r.io/app:1', 'sha256:img', [{ ...secretA, credentialHash: 'rotated' }])],
      [
        'pulled r.io/alias:latest as sha256:img anonymously',
        () => {
          m.recordIntent('r.io/alias:latest');
          m.recordPulled('r.io/alias:latest', 'sha256:img', { nodePodsAccessible: true });
          return undefined;
        },
      ],
      [
        'pulled r.io/tok:1 as sha256:tok with service account a/builder',
        () => {
          m.recordIntent('r.io/tok:1');
          m.recordPulled('r.io/tok:1', 'sha256:tok', { kubernetesServiceAccounts: [sa] });
          return undefined;
        },
      ],
      ['check r.io/tok:1, service account a/builder', () => check('r.io/tok:1', 'sha256:tok', [], sa)],
      ['check r.io/tok:1, no service account', () => check('r.io/tok:1', 'sha256:tok', [])],
      ['check r.io/preloaded:1, no record', () => check('r.io/preloaded:1', 'sha256:pre', [])],
      [
        'pull of r.io/failing:1 failed',
        () => {
          m.recordIntent('r.io/failing:1');
          m.recordFailed('r.io/failing:1');
          return undefined;
        },
      ],
    ];
    assert.deepEqual(
      steps.map(([name]) => name),
      upstream.steps.map((s) => s.step),
    );
    for (const [i, [name, run]] of steps.entries()) {
      const result = await run();
      assert.equal(result, upstream.steps[i]!.result, `${name}: the answer`);
      assert.deepEqual(files(), upstream.steps[i]!.files, `${name}: the files`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("upstream's keyring hashes credentials as kubelet-ts's", () => {
  for (const [key, want] of Object.entries(upstream.hashes)) {
    const [user, pass, email] = key.split('/') as [string, string, string];
    assert.equal(credentialHash(user, pass, email), want, key);
  }
});
