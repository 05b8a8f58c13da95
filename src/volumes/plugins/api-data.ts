// What the API-data plugins (configMap, secret, downwardAPI, projected) share: reading a
// ConfigMap or Secret (an optional one that is missing reads as empty) and writing the volume's
// files into its wrapped directory, owned by the pod's fsGroup (upstream's SetUpAt of each).
import type { KeyToPath, Pod, Volume } from 'kubernetes-types/core/v1.js';
import { writeAtomically } from '../atomic-writer.ts';
import { setVolumeOwnershipUnlessMatching } from '../ownership.ts';
import { type Payload, configMapPayload, secretPayload } from '../payload.ts';
import { NotFound } from '../sources.ts';
import type { PersistentPath } from './plugin.ts';
import type { PodVolumeHost } from './pod-host.ts';
import { wrappedVolumeDir } from './wrapped-dir.ts';

const orEmptyIfOptional = (optional: boolean) => (e: unknown) => {
  if (optional && e instanceof NotFound) return {};
  throw e;
};

/** The files of a ConfigMap (or of the configMap source of a projected volume). */
export async function configMapFiles(
  host: PodVolumeHost,
  pod: Pod,
  src: { name?: string; items?: KeyToPath[]; optional?: boolean },
  mode: number,
): Promise<Payload> {
  const optional = !!src.optional;
  const cm = await host.sources
    .configMap(pod.metadata!.namespace ?? 'default', src.name!, pod.metadata!.uid)
    .catch(orEmptyIfOptional(optional));
  return configMapPayload(cm, src.items, mode, optional);
}

/** The files of a Secret (or of the secret source of a projected volume). */
export async function secretFiles(
  host: PodVolumeHost,
  pod: Pod,
  src: { name: string; items?: KeyToPath[]; optional?: boolean },
  mode: number,
): Promise<Payload> {
  const optional = !!src.optional;
  const s = await host.sources.secret(pod.metadata!.namespace ?? 'default', src.name, pod.metadata!.uid).catch(orEmptyIfOptional(optional));
  return secretPayload(s, src.items, mode, optional);
}

/**
 * Sets up an API-data volume: its wrapped directory (a tmpfs but for configMap, as upstream's
 * wrappers), then the files payload() reads, written atomically and owned by the pod's fsGroup
 * when they changed. Mounted read-only.
 */
export async function setUpApiData(
  host: PodVolumeHost,
  pod: Pod,
  v: Volume,
  pluginName: string,
  memoryBacked: boolean,
  payload: () => Promise<Payload>,
): Promise<PersistentPath> {
  const dir = await wrappedVolumeDir(host, pod, v, pluginName, memoryBacked);
  const files = await payload();
  if (writeAtomically(dir, files)) {
    const fsGroup = pod.spec?.securityContext?.fsGroup;
    if (fsGroup !== undefined) setVolumeOwnershipUnlessMatching(dir, fsGroup, true, pod.spec?.securityContext?.fsGroupChangePolicy);
    host.log.v(2, 'Volume contents written', { podUID: pod.metadata!.uid, volume: v.name, files: files.size });
  }
  return { path: dir, readOnly: true };
}
