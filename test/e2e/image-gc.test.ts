// Image garbage collection as an operator sees it: with the thresholds below the image
// filesystem's usage, the kubelet removes an image no container uses, and keeps the image
// a running pod uses and the pinned sandbox image.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CACHE,
  BUSYBOX,
  clients,
  ROOT,
  crictl,
  ctr,
  ensureStack,
  reimportImages,
  restartKubelet,
  eventually,
  podSpec,
  withNamespace,
} from './stack.ts';

before(() => ensureStack());

// (crictl images REF lists every image when REF is absent, so ask containerd by name.)
const present = (ref: string) => ctr('images', 'ls', '-q', `name==${ref}`).trim() !== '';
const UNUSED = 'kts.local/e2e/unused:gc';

// The kubelet's own configuration again, and the images the GC pass took (every unused one) back.
after(() => {
  restartKubelet();
  reimportImages();
});

test('image GC removes an unused image and keeps the used and the pinned ones', () =>
  withNamespace(async (ns) => {
    const { core } = clients();
    // A distinct, unused image: busybox's root with another config (so another image ID), made from
    // the archive hack/build-images.sh imported busybox from, whatever earlier tests did to the
    // content store (an export of it once came out unimportable, 2026-12-06).
    const dir = mkdtempSync(join(tmpdir(), 'kts-imagegc-'));
    const built = readdirSync(join(CACHE, 'images')).find((f) => /^busybox-[0-9a-f]+\.tar$/.test(f));
    assert.ok(built, `the busybox archive of hack/build-images.sh in ${CACHE}/images`);
    copyFileSync(join(CACHE, 'images', built), join(dir, 'busybox.tar'));
    execFileSync('bash', [
      '-c',
      `cd ${dir} && mkdir x && tar -xf busybox.tar -C x && cd x && m=$(jq -r '.manifests[0].digest' index.json | cut -d: -f2) && ` +
        `c=$(jq -r '.config.digest' blobs/sha256/$m | cut -d: -f2) && jq -c '.config.Env += ["KTS_IMAGE_GC_TEST=1"]' blobs/sha256/$c > cfg && ` +
        `nc=$(sha256sum cfg | cut -d' ' -f1) && mv cfg blobs/sha256/$nc && jq -c --arg d sha256:$nc --argjson s $(stat -c %s blobs/sha256/$nc) '.config.digest=$d | .config.size=$s' blobs/sha256/$m > man && ` +
        `nm=$(sha256sum man | cut -d' ' -f1) && mv man blobs/sha256/$nm && jq -c --arg d sha256:$nm --argjson s $(stat -c %s blobs/sha256/$nm) --arg n ${UNUSED} ` +
        `'.manifests=[.manifests[0] | .digest=$d | .size=$s | .annotations={"io.containerd.image.name":$n,"org.opencontainers.image.ref.name":"gc"}]' index.json > i2 && mv i2 index.json && tar -cf ../unused.tar .`,
    ]);
    ctr('images', 'import', join(dir, 'unused.tar'));
    assert.ok(present(UNUSED), 'the unused image is there to begin with');

    await core.createNamespacedPod({ namespace: ns, body: podSpec('keeper') });
    await eventually(
      'keeper Running',
      60_000,
      async () => (await core.readNamespacedPod({ name: 'keeper', namespace: ns })).status?.phase === 'Running',
      500,
    );

    restartKubelet('imageGCHighThresholdPercent: 1\nimageGCLowThresholdPercent: 0\nimageMinimumGCAge: 1s\n');
    await eventually(`${UNUSED} removed`, 60_000, async () => !present(UNUSED), 1000).catch((e: Error) => {
      // What the kubelet's image GC said, for whoever reads a failed run.
      const said = readFileSync(`${ROOT}/_output/local/logs/kubelet-ts.log`, 'utf8')
        .split('\n')
        .filter((l) => l.includes('image_gc]'));
      throw new Error(`${e.message}; the kubelet's image_gc lines:\n${said.slice(-10).join('\n')}`);
    });
    assert.ok(present(BUSYBOX), 'the image of the running pod stays');
    // The sandbox image: pinned in CRI's image list (containerd 2), or named in `crictl info` (1.6).
    const pinned = (JSON.parse(crictl('images', '-o', 'json')).images as { pinned?: boolean; repoTags?: string[] }[]).find((i) => i.pinned);
    const pause = pinned?.repoTags?.[0] ?? crictl('info').match(/"sandboxImage":\s*"([^"]+)"/)?.[1];
    assert.ok(pause && present(pause), `the pinned sandbox image ${pause} stays`);
    assert.equal((await core.readNamespacedPod({ name: 'keeper', namespace: ns })).status?.phase, 'Running');
  }));

// Upstream's StartGarbageCollection: at 100 with no imageMaximumGCAge the image GC loop does not run
// at all (not even on a full disk); the eviction manager's reclaim still may remove images.
test('imageGCHighThresholdPercent 100: no periodic image GC, the log says so', async () => {
  const LOG = `${ROOT}/_output/local/logs/kubelet-ts.log`;
  const from = statSync(LOG).size;
  restartKubelet('imageGCHighThresholdPercent: 100\nimageGCLowThresholdPercent: 99\nimageMinimumGCAge: 1s\n');
  const since = () => readFileSync(LOG).subarray(from).toString('utf8');
  await eventually('"Disable image GC" in the log', 30_000, async () =>
    since().includes('ImageGCHighThresholdPercent is set 100 and ImageMaximumGCAge is 0, Disable image GC'),
  );
  // The first pass would come within 12 s of the start. What counts is what this kubelet logged,
  // from its "Disable image GC" on: the one before may still have been finishing its pass.
  await new Promise((r) => setTimeout(r, 20_000));
  const ours = since().slice(since().indexOf('Disable image GC'));
  assert.ok(!ours.includes('Removed unused image'), 'no image removed');
  restartKubelet();
});
