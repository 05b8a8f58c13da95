import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PulledImages } from './manager.ts';
import { compileAllowlist } from './policy.ts';
import { cacheFilename } from './records.ts';
import { FsPullRecords } from './store.ts';

const secretA = { uid: 'ua', namespace: 'a', name: 'pull', credentialHash: 'ha' };

function setup(policy: 'NeverVerifyPreloadedImages' | 'AlwaysVerify' = 'NeverVerifyPreloadedImages', now = () => 1_700_000_000_000) {
  const root = mkdtempSync(join(tmpdir(), 'kts-pulled-'));
  const onDisk: string[] = [];
  const records = new FsPullRecords(root, undefined, { onDisk: (kind, n) => onDisk.push(`${kind} ${n}`) });
  const m = new PulledImages({ records, policy, allowlist: compileAllowlist([]), now });
  return { root, records, m, onDisk, done: () => rmSync(root, { recursive: true, force: true }) };
}

test('a pull: the intent file before, the record after, in upstream layout and modes; the files counted after each write', () => {
  const { root, m, onDisk, done } = setup();
  try {
    const pulling = join(root, 'image_manager', 'pulling');
    const pulled = join(root, 'image_manager', 'pulled');
    assert.equal(statSync(pulling).mode & 0o777, 0o700);
    m.recordIntent('r.io/app:1');
    const intentFile = join(pulling, cacheFilename('r.io/app:1'));
    assert.equal(
      readFileSync(intentFile, 'utf8'),
      '{"kind":"ImagePullIntent","apiVersion":"kubelet.config.k8s.io/v1beta1","image":"r.io/app:1"}\n',
    );
    assert.equal(statSync(intentFile).mode & 0o777, 0o600);
    m.recordPulled('r.io/app:1', 'sha256:img', { kubernetesSecrets: [secretA] });
    assert.equal(existsSync(intentFile), false, 'the intent goes with its record');
    writeFileSync(join(pulling, 'not-a-record'), '');
    m.recordIntent('r.io/app:2');
    // upstream's meteringRecordsAccessor: each directory's sha256-* files (no other) after a write or delete.
    assert.deepEqual(onDisk, ['pullintents 1', 'pulledrecords 1', 'pullintents 0', 'pullintents 1']);
    assert.equal(
      readFileSync(join(pulled, cacheFilename('sha256:img')), 'utf8'),
      '{"kind":"ImagePulledRecord","apiVersion":"kubelet.config.k8s.io/v1beta1","lastUpdatedTime":"2023-11-14T22:13:20Z","imageRef":"sha256:img","credentialMapping":{"r.io/app":{"kubernetesSecrets":[{"uid":"ua","namespace":"a","name":"pull","credentialHash":"ha"}]}}}\n',
    );
  } finally {
    done();
  }
});

test('two pulls of one image: the intent stays until the last ends; a failed pull leaves no record', () => {
  const { root, m, done } = setup();
  try {
    const intentFile = join(root, 'image_manager', 'pulling', cacheFilename('r.io/app:1'));
    m.recordIntent('r.io/app:1');
    m.recordIntent('r.io/app:1');
    m.recordFailed('r.io/app:1');
    assert.equal(existsSync(intentFile), true);
    m.recordFailed('r.io/app:1');
    assert.equal(existsSync(intentFile), false);
    assert.deepEqual(readdirSync(join(root, 'image_manager', 'pulled')), []);
  } finally {
    done();
  }
});

test("mustPull: the pod's credentials asked only when the record needs them; a match by hash is remembered", async () => {
  const { records, m, done } = setup();
  try {
    let asked = 0;
    const pod = (secrets: (typeof secretA)[]) => async () => {
      asked++;
      return { secrets };
    };
    // Preloaded: nothing recorded, no question.
    assert.equal(await m.mustPull('r.io/app:1', 'sha256:img', pod([])), false);
    assert.equal(asked, 0);
    m.recordIntent('r.io/app:1');
    m.recordPulled('r.io/app:1', 'sha256:img', { kubernetesSecrets: [secretA] });
    assert.equal(await m.mustPull('r.io/app:1', 'sha256:img', pod([])), true, 'no secret');
    assert.equal(await m.mustPull('r.io/app:1', 'sha256:img', pod([secretA])), false, 'the same secret');
    const copy = { uid: 'uc', namespace: 'c', name: 'copy', credentialHash: 'ha' };
    assert.equal(await m.mustPull('r.io/app:2', 'sha256:img', pod([copy])), false, 'same credentials, other secret, other tag');
    assert.equal(asked, 3);
    assert.deepEqual(records.getPulled('sha256:img')?.credentialMapping['r.io/app']?.kubernetesSecrets, [secretA, copy]);
    // An empty image ref (not present) always pulls.
    assert.equal(await m.mustPull('r.io/app:1', '', pod([secretA])), true);
    // The pod's credentials failing fails the check.
    await assert.rejects(
      m.mustPull('r.io/app:1', 'sha256:img', async () => {
        throw new Error('bad secret');
      }),
      /bad secret/,
    );
  } finally {
    done();
  }
});

test('an unreadable record fails safe: the pod must pull', async () => {
  const { root, m, done } = setup();
  try {
    writeFileSync(join(root, 'image_manager', 'pulled', cacheFilename('sha256:img')), '{broken');
    assert.equal(await m.mustPull('r.io/app:1', 'sha256:img', async () => ({ secrets: [] })), true);
  } finally {
    done();
  }
});

test('a restart: intents whose image the runtime has become records without credentials; older versions rewritten', async () => {
  const root = mkdtempSync(join(tmpdir(), 'kts-pulled-'));
  try {
    const pulling = join(root, 'image_manager', 'pulling');
    const pulled = join(root, 'image_manager', 'pulled');
    mkdirSync(pulling, { recursive: true });
    mkdirSync(pulled, { recursive: true });
    const intent = (image: string, v = 'v1beta1') =>
      writeFileSync(
        join(pulling, cacheFilename(image)),
        `{"kind":"ImagePullIntent","apiVersion":"kubelet.config.k8s.io/${v}","image":"${image}"}`,
      );
    intent('r.io/present:1', 'v1alpha1');
    intent('r.io/gone:1');
    writeFileSync(
      join(pulled, cacheFilename('sha256:old')),
      '{"kind":"ImagePulledRecord","apiVersion":"kubelet.config.k8s.io/v1alpha1","lastUpdatedTime":"2024-10-21T12:26:40Z","imageRef":"sha256:old","credentialMapping":{"r.io/old":{"nodePodsAccessible":true}}}',
    );
    writeFileSync(join(pulled, 'not-ours'), 'x');
    writeFileSync(join(pulled, `${cacheFilename('x')}.tmp`), 'x');
    const records = new FsPullRecords(root);
    // Migrated to v1beta1 at open.
    assert.match(
      readFileSync(join(pulled, cacheFilename('sha256:old')), 'utf8'),
      /"apiVersion":"kubelet.config.k8s.io\/v1beta1","lastUpdatedTime":"2024-10-21T12:26:40Z"/,
    );
    assert.match(readFileSync(join(pulling, cacheFilename('r.io/present:1')), 'utf8'), /v1beta1/);
    const m = new PulledImages({ records, policy: 'NeverVerifyPreloadedImages', allowlist: compileAllowlist([]), now: () => 0 });
    await m.initialize(async () => [{ id: 'sha256:present', repoTags: ['r.io/present:1'], repoDigests: [] }]);
    assert.deepEqual(records.getPulled('sha256:present'), { lastUpdatedTime: 0, imageRef: 'sha256:present', credentialMapping: {} });
    assert.deepEqual(
      records.listIntents().map((i) => i.image),
      ['r.io/gone:1'],
    );
    // The converted image now needs every pod to verify; the one still pulling counts as the kubelet's.
    assert.equal(await m.mustPull('r.io/present:1', 'sha256:present', async () => ({ secrets: [] })), true);
    assert.equal(await m.mustPull('r.io/gone:1', 'sha256:gone', async () => ({ secrets: [] })), true);
    assert.equal(await m.mustPull('r.io/never:1', 'sha256:never', async () => ({ secrets: [] })), false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("prune: records of images GC removed go, those written since it began or still present stay (upstream's PruneUnknownRecords)", () => {
  let now = 1000;
  const { records, m, done } = setup('NeverVerifyPreloadedImages', () => now);
  try {
    for (const ref of ['sha256:kept', 'sha256:removed']) m.recordPulled(`r.io/${ref.slice(7)}:1`, ref, { nodePodsAccessible: true });
    now = 3000;
    m.recordPulled('r.io/new:1', 'sha256:new', { nodePodsAccessible: true });
    m.prune(['sha256:kept'], 2000);
    assert.deepEqual(
      records
        .listPulled()
        .map((r) => r.imageRef)
        .sort(),
      ['sha256:kept', 'sha256:new'],
    );
  } finally {
    done();
  }
});
