// The pulled-image records as the kubelet starts them (upstream's NewKubeGenericRuntimeManager):
// only with KubeletEnsureSecretPulledImages, with the configured policy, the files under the
// root dir, and the intents of an earlier run settled against the runtime's images.
import type { ImageClient } from '../../cri/image-client.ts';
import { featureEnabled } from '../../features/gates.ts';
import type { KubeletOptions } from '../../kubelet/options.ts';
import { logger } from '../../log/log.ts';
import { PulledImages } from './manager.ts';
import { compileAllowlist, type VerificationPolicy } from './policy.ts';
import { FsPullRecords } from './store.ts';

export async function pulledImagesOf(o: Pick<KubeletOptions, 'config' | 'rootDir'>, images: Pick<ImageClient, 'listImages'>) {
  if (!featureEnabled(o.config.featureGates, 'KubeletEnsureSecretPulledImages')) return undefined;
  const log = logger('image_pull_manager');
  let records: FsPullRecords;
  try {
    records = new FsPullRecords(o.rootDir, log);
  } catch (e) {
    throw new Error(`failed to setup the FSPullRecordsAccessor: ${(e as Error).message}`);
  }
  const manager = new PulledImages({
    records,
    // Both checked with the configuration (src/config/kubelet-config.ts).
    policy: o.config.imagePullCredentialsVerificationPolicy as VerificationPolicy,
    allowlist: compileAllowlist(o.config.preloadedImagesVerificationAllowlist),
    log,
  });
  await manager.initialize(async () =>
    (await images.listImages({})).images.map((i) => ({ id: i.id, repoTags: i.repoTags, repoDigests: i.repoDigests })),
  );
  return manager;
}
