// The API objects volumes are made of, read with the kubelet's own client: the node
// authorizer lets a node read the configMaps and secrets its pods reference and request
// tokens for their service accounts (bound to the pod, as NodeRestriction requires).
import type { ConfigMap, PersistentVolume, PersistentVolumeClaim, Secret } from 'kubernetes-types/core/v1.js';
import type { CSIDriver, VolumeAttachment } from 'kubernetes-types/storage/v1.js';
import type { TokenRequest } from 'kubernetes-types/authentication/v1.js';
import { type ApiClient, isNotFound } from '../apiserver/client.ts';
import type { RequestToken } from './tokens.ts';
import { apiPath } from '../apiserver/paths.ts';
import type { ClaimSources } from './persistent.ts';

/** A referenced object that does not exist; its message is upstream's (`configmap "x" not found`). */
export class NotFound extends Error {}

export interface VolumeSources {
  configMap(namespace: string, name: string): Promise<ConfigMap>;
  secret(namespace: string, name: string): Promise<Secret>;
  requestToken: RequestToken;
}

/**
 * ttlMs: how long a read object is reused (upstream's TTL cache strategy), so that pods
 * starting together read kube-root-ca.crt once; failures are not kept.
 */
export function apiVolumeSources(api: Pick<ApiClient, 'get' | 'create'>, opts: { ttlMs?: number; now?: () => number } = {}): VolumeSources {
  const ttlMs = opts.ttlMs ?? 5000,
    now = opts.now ?? Date.now;
  const cache = new Map<string, { at: number; value: Promise<unknown> }>();
  // Upstream's object caches return NotFound with the singular resource name.
  const get =
    <T>(resource: string, plural: string) =>
    (ns: string, name: string): Promise<T> => {
      const path = apiPath({ resource: plural, namespace: ns, name });
      const hit = cache.get(path);
      if (hit && now() - hit.at < ttlMs) return hit.value as Promise<T>;
      for (const [k, e] of cache) if (now() - e.at >= ttlMs) cache.delete(k);
      const value = api.get<T>(path).catch((e: unknown) => {
        cache.delete(path);
        throw isNotFound(e) ? new NotFound(`${resource} "${name}" not found`) : e;
      });
      cache.set(path, { at: now(), value });
      return value;
    };
  return {
    configMap: get<ConfigMap>('configmap', 'configmaps'),
    secret: get<Secret>('secret', 'secrets'),
    requestToken: (ns, sa, req) =>
      api.create<TokenRequest>(apiPath({ resource: 'serviceaccounts', namespace: ns, name: sa, subresource: 'token' }), req),
  };
}

/**
 * The claims, PersistentVolumes, CSIDrivers and VolumeAttachments persistent volumes are made of
 * (the node authorizer lets a node read those of its pods). Read fresh each time: a claim binds
 * and an attachment turns attached while a pod waits.
 */
export function apiClaimSources(api: Pick<ApiClient, 'get'>): ClaimSources {
  const orUndefined = <T>(p: Promise<T>) => p.catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
  return {
    claim: (ns, name) => api.get<PersistentVolumeClaim>(apiPath({ resource: 'persistentvolumeclaims', namespace: ns, name })),
    volume: (name) => api.get<PersistentVolume>(apiPath({ resource: 'persistentvolumes', name })),
    csiDriver: (name) => orUndefined(api.get<CSIDriver>(apiPath({ group: 'storage.k8s.io', resource: 'csidrivers', name }))),
    volumeAttachment: (name) =>
      orUndefined(api.get<VolumeAttachment>(apiPath({ group: 'storage.k8s.io', resource: 'volumeattachments', name }))),
  };
}
