// The pulled-image records as the kubelet starts them (upstream's NewKubeGenericRuntimeManager,
// with KubeletEnsureSecretPulledImages): the configured policy, the files under the root dir,
// and the intents of an earlier run settled against the runtime's images.
import type { ImageClient } from '../../cri/image-client.ts';
import { logger } from '../../log/log.ts';
import { PulledImages, type PulledImagesObserver } from './manager.ts';
import { compileAllowlist, type VerificationPolicy } from './policy.ts';
import { FsPullRecords } from './store.ts';

/** policy and allowlist: imagePullCredentialsVerificationPolicy and preloadedImagesVerificationAllowlist, checked with the configuration. */
export async function openPulledImages(
  o: { rootDir: string; policy: string; allowlist: readonly string[]; observe?: PulledImagesObserver },
  images: Pick<ImageClient, 'listImages'>,
): Promise<PulledImages> {
  const log = logger('image_pull_manager');
  let records: FsPullRecords;
  try {
    records = new FsPullRecords(o.rootDir, log, o.observe);
  } catch (e) {
    throw new Error(`failed to setup the FSPullRecordsAccessor: ${(e as Error).message}`);
  }
  const manager = new PulledImages({
    records,
    policy: o.policy as VerificationPolicy,
    allowlist: compileAllowlist(o.allowlist),
    log,
    ...(o.observe ? { observe: o.observe } : {}),
  });
  await manager.initialize(async () =>
    (await images.listImages({})).images.map((i) => ({ id: i.id, repoTags: i.repoTags, repoDigests: i.repoDigests })),
  );
  return manager;
}
