// One configured credential provider: which images it answers for, its cache, its single
// flight, and its service account token mode (KEP-4412), as upstream's pluginProvider.provide.
import { createHash } from 'node:crypto';
import type { ServiceAccount } from 'kubernetes-types/core/v1.js';
import {
  cacheKey,
  cacheTtl,
  CredentialCache,
  type DockerConfig,
  GLOBAL_CACHE_KEY,
  lookupKeys,
  serviceAccountCacheKey,
  SingleFlight,
} from './cache.ts';
import type { CredentialProvider } from './config.ts';
import type { ExecPlugin } from './exec.ts';
import { imageAllowed, registryOf } from './match.ts';
import type { PluginResponse } from './protocol.ts';

/** The pod a pull is for: its service account's token is handed to plugins in token mode. */
export interface PullingPod {
  namespace: string;
  name: string;
  uid: string;
  /** spec.serviceAccountName; '' for none (static pods). */
  serviceAccountName: string;
}

/** What token mode reads from the apiserver (the node authorizer allows both for its pods' service accounts). */
export interface ServiceAccountAccess {
  getServiceAccount(namespace: string, name: string): Promise<ServiceAccount>;
  /** A token bound to the pod, for audience; cached by the caller (upstream's token manager). */
  token(k: {
    namespace: string;
    serviceAccount: string;
    serviceAccountUID: string;
    audience: string;
    podName: string;
    podUID: string;
  }): Promise<string>;
}

/** Which service account credentials came through, for the pulled-image records (KEP-2535). */
export interface ServiceAccountCoordinates {
  uid: string;
  namespace: string;
  name: string;
}

export interface Provided {
  config: DockerConfig;
  serviceAccount?: ServiceAccountCoordinates;
}

export class PluginProvider {
  readonly name: string;
  readonly #p: CredentialProvider;
  readonly #exec: ExecPlugin;
  readonly #sa: ServiceAccountAccess | undefined;
  readonly #cache: CredentialCache;
  readonly #flight = new SingleFlight<PluginResponse>();

  /** sa: token mode's access, used when the provider has tokenAttributes (and the gate is on). */
  constructor(p: CredentialProvider, exec: ExecPlugin, sa?: ServiceAccountAccess, now: () => number = Date.now) {
    this.name = p.name;
    this.#p = p;
    this.#exec = exec;
    this.#sa = p.tokenAttributes ? sa : undefined;
    this.#cache = new CredentialCache(now);
  }

  /** The credentials for image (a repository), from the cache or the plugin; rejects with upstream's message. */
  async provide(image: string, pod: PullingPod): Promise<Provided> {
    if (!imageAllowed(this.#p.matchImages, image)) return { config: {} };
    const t = this.#p.tokenAttributes;
    let token = '';
    let tokenHash = '';
    let annotations: Record<string, string> | undefined;
    let saKey = '';
    let serviceAccount: ServiceAccountCoordinates | undefined;
    if (t && this.#sa) {
      // Not invoked for a pod without a service account when the provider requires one.
      if (!pod.serviceAccountName && t.requireServiceAccount) return { config: {} };
      if (pod.serviceAccountName) {
        let sa: ServiceAccount;
        try {
          sa = await this.#sa.getServiceAccount(pod.namespace, pod.serviceAccountName);
        } catch (e) {
          throw new Error(`failed to get service account: ${(e as Error).message}`);
        }
        annotations = {};
        const have = sa.metadata?.annotations ?? {};
        for (const k of t.requiredServiceAccountAnnotationKeys) {
          // A missing required annotation is the workload not opting in: no call, no error.
          if (!(k in have)) return { config: {} };
          annotations[k] = have[k]!;
        }
        for (const k of t.optionalServiceAccountAnnotationKeys) if (k in have) annotations[k] = have[k]!;
        const uid = sa.metadata?.uid ?? '';
        try {
          token = await this.#sa.token({
            namespace: pod.namespace,
            serviceAccount: pod.serviceAccountName,
            serviceAccountUID: uid,
            audience: t.serviceAccountTokenAudience,
            podName: pod.name,
            podUID: pod.uid,
          });
        } catch (e) {
          throw new Error(`failed to get service account token: ${(e as Error).message}`);
        }
        tokenHash = token ? `sha256:${createHash('sha256').update(token).digest('hex')}` : '';
        saKey = serviceAccountCacheKey({
          namespace: pod.namespace,
          name: pod.serviceAccountName,
          uid,
          annotations,
          cacheType: t.cacheType,
          tokenHash,
        });
        serviceAccount = { uid, namespace: pod.namespace, name: pod.serviceAccountName };
      }
    }

    const cached = this.#cache.get(lookupKeys(image, saKey));
    if (cached) return { config: cached, serviceAccount };

    // One call for concurrent pulls of an image (per token and annotations in token mode); the
    // cache key type is not known before the answer, so pulls of two images of one registry
    // may both call, as upstream's.
    const flightKey = token ? JSON.stringify([image, tokenHash, Object.entries(annotations ?? {}).sort()]) : image;
    let res: PluginResponse;
    try {
      res = await this.#flight.do(flightKey, () =>
        this.#exec({
          image,
          ...(token ? { serviceAccountToken: token } : {}),
          ...(annotations ? { serviceAccountAnnotations: annotations } : {}),
        }),
      );
    } catch (e) {
      throw new Error(`failed to get credential from external registry credential provider: ${(e as Error).message}`);
    }
    if (token && t?.cacheType !== 'Token' && Object.values(res.auth).some((a) => a.password === token))
      throw new Error(
        "credential provider plugin returned the service account token as the password which is not allowed when service account cache type is not set to 'Token'",
      );
    const base =
      res.cacheKeyType === 'Image'
        ? image
        : res.cacheKeyType === 'Registry'
          ? registryOf(image)
          : res.cacheKeyType === 'Global'
            ? GLOBAL_CACHE_KEY
            : undefined;
    if (base === undefined) throw new Error(`credential provider plugin did not return a valid cacheKeyType: ${res.cacheKeyType}`);
    const config: DockerConfig = {};
    for (const [k, a] of Object.entries(res.auth)) config[k] = { username: a.username, password: a.password };
    const ttl = cacheTtl(res.cacheDurationMs, this.#p.defaultCacheDurationMs ?? 0);
    if (ttl !== undefined) this.#cache.set(cacheKey(base, saKey), config, ttl);
    return { config, serviceAccount };
  }
}
