// The API objects volumes are made of, read with the kubelet's own client: the node
// authorizer lets a node read the configMaps and secrets its pods reference and request
// tokens for their service accounts (bound to the pod, as NodeRestriction requires).
import type { ConfigMap, PersistentVolume, PersistentVolumeClaim, Secret } from 'kubernetes-types/core/v1.js';
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import type { TokenRequest } from 'kubernetes-types/authentication/v1.js';
import { type ApiClient, isAlreadyExists, isNotFound } from '../apiserver/client.ts';
import { type ObjectCache, watchedObjects } from '../apiserver/object-cache.ts';
import { fetchedObjects, ttlCachedObjects } from '../apiserver/ttl-objects.ts';
import type { Logger } from '../log/log.ts';
import type { RequestToken } from './tokens.ts';
import { apiPath } from '../apiserver/paths.ts';

/** A referenced object that does not exist; its message is upstream's (`configmap "x" not found`). */
export class NotFound extends Error {}

export interface VolumeSources {
  /** podUID: the pod whose volume reads it, until release(podUID). */
  configMap(namespace: string, name: string, podUID?: string): Promise<ConfigMap>;
  secret(namespace: string, name: string, podUID?: string): Promise<Secret>;
  /** The pod's volumes are torn down: what only it read is no longer watched. */
  release?(podUID: string): void;
  requestToken: RequestToken;
}

/** configMapAndSecretChangeDetectionStrategy, and the TTL the Cache strategy reads (the Node's annotation, in ms). */
export type ChangeDetection = { strategy: 'Watch' | 'Get' | 'Cache'; ttlMs?: () => number | undefined };

/**
 * ConfigMaps and Secrets as configMapAndSecretChangeDetectionStrategy keeps them: by default
 * from watch-kept caches (Watch), so that refreshing a pod's volumes at every resync sends no
 * request; or with a TTL (Cache), or read each time (Get). Tokens are requested each time (the
 * token manager caches them).
 */
export function apiVolumeSources(
  api: Pick<ApiClient, 'get' | 'watch' | 'create'>,
  log: Logger,
  detection: ChangeDetection = { strategy: 'Watch' },
): VolumeSources & { stop(): void } {
  const kept = <T extends ConfigMap | Secret>(plural: string): ObjectCache<T> =>
    detection.strategy === 'Cache'
      ? ttlCachedObjects<T>(api, plural, detection.ttlMs ?? (() => undefined))
      : detection.strategy === 'Get'
        ? fetchedObjects<T>(api, plural)
        : watchedObjects<T>(api, plural, log);
  // Upstream's object caches return NotFound with the singular resource name.
  const watched = <T extends ConfigMap | Secret>(resource: string, plural: string) => {
    const cache = kept<T>(plural);
    const get = async (ns: string, name: string, podUID?: string): Promise<T> => {
      const found = await cache.get(ns, name, podUID);
      if (!found) throw new NotFound(`${resource} "${name}" not found`);
      return found;
    };
    return { get, release: cache.release, stop: cache.stop };
  };
  const configMaps = watched<ConfigMap>('configmap', 'configmaps'),
    secrets = watched<Secret>('secret', 'secrets');
  return {
    configMap: configMaps.get,
    secret: secrets.get,
    release(podUID) {
      configMaps.release(podUID);
      secrets.release(podUID);
    },
    requestToken: (ns, sa, req) =>
      api.create<TokenRequest>(apiPath({ resource: 'serviceaccounts', namespace: ns, name: sa, subresource: 'token' }), req),
    stop() {
      configMaps.stop();
      secrets.stop();
    },
  };
}

/** Where a claim, its PersistentVolume and its CSI objects are read from (the apiserver, or a test's fake). */
export interface ClaimSources {
  claim(namespace: string, name: string): Promise<PersistentVolumeClaim>;
  volume(name: string): Promise<PersistentVolume>;
  /** undefined when the driver has no CSIDriver object (upstream's defaults apply: attach required). */
  csiDriver(name: string): Promise<CSIDriver | undefined>;
  /** undefined when it does not exist (yet). */
  volumeAttachment(name: string): Promise<VolumeAttachment | undefined>;
  /** A strategic merge patch of the claim's status (node expansion, expansion.ts); the claim as patched. */
  patchClaimStatus?(namespace: string, name: string, patch: unknown): Promise<PersistentVolumeClaim>;
  /** The kubelet's own attach (enableControllerAttachDetach false): the VolumeAttachment made; one already there is fine. */
  createVolumeAttachment?(va: VolumeAttachment): Promise<void>;
  /** The kubelet's own detach: the VolumeAttachment deleted; false: it was gone already. */
  deleteVolumeAttachment?(name: string): Promise<boolean>;
}

/**
 * The claims, PersistentVolumes, CSIDrivers and VolumeAttachments persistent volumes are made of
 * (the node authorizer lets a node read those of its pods). Read fresh each time: a claim binds
 * and an attachment turns attached while a pod waits.
 */
export function apiClaimSources(api: Pick<ApiClient, 'get' | 'patch' | 'create' | 'delete'>): ClaimSources {
  const orUndefined = <T>(p: Promise<T>) => p.catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
  const attachments = (name?: string) => apiPath({ group: 'storage.k8s.io', resource: 'volumeattachments', name });
  return {
    claim: (ns, name) => api.get<PersistentVolumeClaim>(apiPath({ resource: 'persistentvolumeclaims', namespace: ns, name })),
    volume: (name) => api.get<PersistentVolume>(apiPath({ resource: 'persistentvolumes', name })),
    csiDriver: (name) => orUndefined(api.get<CSIDriver>(apiPath({ group: 'storage.k8s.io', resource: 'csidrivers', name }))),
    volumeAttachment: (name) => orUndefined(api.get<VolumeAttachment>(attachments(name))),
    createVolumeAttachment: (va) =>
      api.create(attachments(), va).then(
        () => undefined,
        (e: unknown) => (isAlreadyExists(e) ? undefined : Promise.reject(e)),
      ),
    deleteVolumeAttachment: (name) => orUndefined(api.delete(attachments(name))).then((gone) => gone !== undefined),
    patchClaimStatus: (ns, name, patch) =>
      api.patch<PersistentVolumeClaim>(
        apiPath({ resource: 'persistentvolumeclaims', namespace: ns, name, subresource: 'status' }),
        patch,
        'strategic',
      ),
  };
}
